#include "quire/remote/chat_request.h"

#include <nlohmann/json.hpp>

namespace quire::remote {

std::string chat_request_body(const std::string& model, const std::vector<ChatMessage>& messages,
                              const ChatSampling& sampling, int max_tokens) {
  using json = nlohmann::ordered_json;
  json list = json::array();
  for (const ChatMessage& message : messages) {
    json entry{{"role", message.role}, {"content", message.content}};
    // OpenAI's shape of a tool loop: content null beside the calls, and a
    // result that names its call.
    if (!message.tool_calls.empty()) {
      if (message.content.empty()) entry["content"] = nullptr;
      json& calls = entry["tool_calls"] = json::array();
      for (const ChatMessage::Call& call : message.tool_calls) {
        calls.push_back({{"id", call.id},
                         {"type", "function"},
                         {"function", {{"name", call.name}, {"arguments", call.arguments}}}});
      }
    }
    if (!message.tool_call_id.empty()) entry["tool_call_id"] = message.tool_call_id;
    list.push_back(std::move(entry));
  }
  json body{{"model", model},
            {"messages", std::move(list)},
            {"stream", true},
            {"stream_options", {{"include_usage", true}}},
            {"temperature", sampling.temperature}};
  if (max_tokens > 0) body["max_tokens"] = max_tokens;
  if (sampling.top_p > 0 && sampling.top_p < 1) body["top_p"] = sampling.top_p;
  if (sampling.top_k > 0) body["top_k"] = sampling.top_k;
  if (sampling.min_p > 0) body["min_p"] = sampling.min_p;
  if (sampling.repetition_penalty > 0 && sampling.repetition_penalty != 1)
    body["repetition_penalty"] = sampling.repetition_penalty;
  if (sampling.seed) body["seed"] = *sampling.seed;
  // Text the engine cannot encode would fail its JSON parser; replace it.
  return body.dump(-1, ' ', false, json::error_handler_t::replace);
}

}  // namespace quire::remote
