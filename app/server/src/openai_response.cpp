#include "quire/server/openai_response.h"

#include <nlohmann/json.hpp>

namespace quire::server {
namespace {

using json = nlohmann::ordered_json;

std::string dump(const json& value) {
  return value.dump(-1, ' ', false, json::error_handler_t::replace);
}

json usage_object(const Usage& usage) {
  json object{{"prompt_tokens", usage.prompt_tokens},
              {"completion_tokens", usage.completion_tokens},
              {"total_tokens", usage.prompt_tokens + usage.completion_tokens},
              {"prompt_tokens_details", {{"cached_tokens", usage.cached_tokens}}}};
  if (const std::optional<ContextDropUsage>& drop = usage.context_drop) {
    object["context_overflow"] = json{{"policy", drop->policy},
                                      {"first_dropped_turn", drop->first_dropped_turn},
                                      {"dropped_turns", drop->dropped_turns},
                                      {"dropped_tokens", drop->dropped_tokens},
                                      {"recomputed_tokens", drop->recomputed_tokens}};
  }
  return object;
}

json envelope(const ResponseHeader& header, std::string_view object) {
  return json{
      {"id", header.id}, {"object", object}, {"created", header.created}, {"model", header.model}};
}

std::string chat_chunk(const ResponseHeader& header, int index, json delta,
                       std::optional<FinishReason> finish, bool with_usage_field,
                       std::string_view tool_call_error = {}) {
  json chunk = envelope(header, "chat.completion.chunk");
  json choice{{"index", index},
              {"delta", std::move(delta)},
              {"logprobs", nullptr},
              {"finish_reason", finish ? json(to_string(*finish)) : json(nullptr)}};
  if (!tool_call_error.empty()) choice["tool_call_error"] = tool_call_error;
  chunk["choices"] = json::array({std::move(choice)});
  if (with_usage_field) chunk["usage"] = nullptr;
  return dump(chunk);
}

}  // namespace

std::string_view to_string(FinishReason reason) {
  switch (reason) {
    case FinishReason::Stop:
      return "stop";
    case FinishReason::Length:
      return "length";
    case FinishReason::ToolCalls:
      return "tool_calls";
  }
  return "stop";
}

std::string chat_completion_json(const ResponseHeader& header, std::span<const Choice> choices,
                                 const Usage& usage) {
  json response = envelope(header, "chat.completion");
  json& list = response["choices"] = json::array();
  for (std::size_t i = 0; i < choices.size(); ++i) {
    const Choice& choice = choices[i];
    json message{{"role", "assistant"}};
    // OpenAI sends null content beside tool calls.
    message["content"] =
        choice.text.empty() && !choice.tool_calls.empty() ? json(nullptr) : json(choice.text);
    message["refusal"] = nullptr;
    if (!choice.reasoning.empty()) message["reasoning_content"] = choice.reasoning;
    if (!choice.tool_calls.empty()) {
      json& calls = message["tool_calls"] = json::array();
      for (const FunctionCall& call : choice.tool_calls) {
        calls.push_back(json{{"id", call.id},
                             {"type", "function"},
                             {"function", {{"name", call.name}, {"arguments", call.arguments}}}});
      }
    }
    json entry{{"index", i},
               {"message", std::move(message)},
               {"logprobs", nullptr},
               {"finish_reason", to_string(choice.finish)}};
    if (!choice.tool_call_error.empty()) entry["tool_call_error"] = choice.tool_call_error;
    list.push_back(std::move(entry));
  }
  response["usage"] = usage_object(usage);
  return dump(response);
}

std::string chat_role_chunk(const ResponseHeader& header, int index, bool with_usage_field) {
  return chat_chunk(header, index, json{{"role", "assistant"}, {"content", ""}}, std::nullopt,
                    with_usage_field);
}

std::string chat_content_chunk(const ResponseHeader& header, int index, std::string_view text,
                               bool with_usage_field) {
  return chat_chunk(header, index, json{{"content", text}}, std::nullopt, with_usage_field);
}

std::string chat_delta_chunk(const ResponseHeader& header, int index, const ChatDelta& delta,
                             bool with_usage_field) {
  json fields = json::object();
  if (!delta.reasoning.empty()) fields["reasoning_content"] = delta.reasoning;
  if (!delta.content.empty()) fields["content"] = delta.content;
  if (!delta.calls.empty()) {
    json& calls = fields["tool_calls"] = json::array();
    for (const ChatDelta::CallPart& part : delta.calls) {
      json entry{{"index", part.index}};
      if (!part.id.empty()) {
        entry["id"] = part.id;
        entry["type"] = "function";
      }
      json function = json::object();
      if (!part.name.empty()) function["name"] = part.name;
      function["arguments"] = part.arguments;
      entry["function"] = std::move(function);
      calls.push_back(std::move(entry));
    }
  }
  return chat_chunk(header, index, std::move(fields), std::nullopt, with_usage_field);
}

std::string chat_finish_chunk(const ResponseHeader& header, int index, FinishReason finish,
                              bool with_usage_field, std::string_view tool_call_error) {
  return chat_chunk(header, index, json::object(), finish, with_usage_field, tool_call_error);
}

std::string chat_usage_chunk(const ResponseHeader& header, const Usage& usage) {
  json chunk = envelope(header, "chat.completion.chunk");
  chunk["choices"] = json::array();
  chunk["usage"] = usage_object(usage);
  return dump(chunk);
}

std::string completion_json(const ResponseHeader& header, std::span<const Choice> choices,
                            const Usage& usage) {
  json response = envelope(header, "text_completion");
  json& list = response["choices"] = json::array();
  for (std::size_t i = 0; i < choices.size(); ++i) {
    list.push_back(json{{"text", choices[i].text},
                        {"index", i},
                        {"logprobs", nullptr},
                        {"finish_reason", to_string(choices[i].finish)}});
  }
  response["usage"] = usage_object(usage);
  return dump(response);
}

std::string completion_chunk(const ResponseHeader& header, int index, std::string_view text,
                             std::optional<FinishReason> finish, bool with_usage_field) {
  json chunk = envelope(header, "text_completion");
  chunk["choices"] =
      json::array({json{{"text", text},
                        {"index", index},
                        {"logprobs", nullptr},
                        {"finish_reason", finish ? json(to_string(*finish)) : json(nullptr)}}});
  if (with_usage_field) chunk["usage"] = nullptr;
  return dump(chunk);
}

std::string completion_usage_chunk(const ResponseHeader& header, const Usage& usage) {
  json chunk = envelope(header, "text_completion");
  chunk["choices"] = json::array();
  chunk["usage"] = usage_object(usage);
  return dump(chunk);
}

std::string model_json(const std::string& model, std::int64_t created,
                       std::int64_t context_tokens) {
  json entry{{"id", model}, {"object", "model"}, {"created", created}, {"owned_by", "quire"}};
  if (context_tokens > 0) entry["max_model_len"] = context_tokens;
  return dump(entry);
}

std::string models_json(const std::string& model, std::int64_t created,
                        std::int64_t context_tokens) {
  return dump(
      json{{"object", "list"},
           {"data", json::array({json::parse(model_json(model, created, context_tokens))})}});
}

std::string sse_event(std::string_view json_text) {
  std::string event;
  event.reserve(json_text.size() + 8);
  event += "data: ";
  event += json_text;
  event += "\n\n";
  return event;
}

std::string sse_done() {
  return "data: [DONE]\n\n";
}

}  // namespace quire::server
