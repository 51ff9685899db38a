#include "quire/remote/openai_stream.h"

#include <nlohmann/json.hpp>

namespace quire::remote {
namespace {

using json = nlohmann::json;

json parse_object(std::string_view text, const char* what) {
  json value = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (value.is_discarded()) {
    std::string start(text.substr(0, 80));
    throw ProtocolError(std::string(what) + " is not JSON: \"" + start +
                        (text.size() > 80 ? "…\"" : "\""));
  }
  if (!value.is_object()) throw ProtocolError(std::string(what) + " is not a JSON object");
  return value;
}

// A count the engine wrote as a number (some write 12.0); absent or null: 0.
std::int64_t count_of(const json& object, const char* key, const char* where) {
  const auto it = object.find(key);
  if (it == object.end() || it->is_null()) return 0;
  if (!it->is_number()) {
    throw ProtocolError(std::string(where) + "." + key + " is not a number");
  }
  const double value = it->get<double>();
  if (!(value >= 0) || value > 1e15) {
    throw ProtocolError(std::string(where) + "." + key + " is not a count");
  }
  return static_cast<std::int64_t>(value);
}

// Text that may be absent, null or a string; anything else is an error.
std::string text_of(const json& object, const char* key, const char* where) {
  const auto it = object.find(key);
  if (it == object.end() || it->is_null()) return {};
  if (!it->is_string()) throw ProtocolError(std::string(where) + "." + key + " is not text");
  return it->get<std::string>();
}

std::optional<std::string> message_of_error(const json& error) {
  if (error.is_string()) return error.get<std::string>();
  if (error.is_object()) {
    if (const auto message = error.find("message");
        message != error.end() && message->is_string()) {
      return message->get<std::string>();
    }
    return error.dump();
  }
  return std::nullopt;
}

StreamUsage usage_of(const json& usage, const json& chunk) {
  StreamUsage result;
  result.prompt_tokens = count_of(usage, "prompt_tokens", "usage");
  result.completion_tokens = count_of(usage, "completion_tokens", "usage");
  if (const auto details = usage.find("prompt_tokens_details");
      details != usage.end() && details->is_object() && details->contains("cached_tokens") &&
      !(*details)["cached_tokens"].is_null()) {
    result.cached_tokens = count_of(*details, "cached_tokens", "usage.prompt_tokens_details");
  } else if (const auto timings = chunk.find("timings");
             timings != chunk.end() && timings->is_object() && timings->contains("cache_n")) {
    // llama.cpp's server states its cache reuse in its own timings.
    result.cached_tokens = count_of(*timings, "cache_n", "timings");
  }
  // Quire's server says what its context policy dropped.
  if (const auto drop = usage.find("context_overflow"); drop != usage.end() && !drop->is_null()) {
    if (!drop->is_object()) throw ProtocolError("usage.context_overflow is not an object");
    ContextDrop read;
    read.policy = text_of(*drop, "policy", "usage.context_overflow");
    read.first_dropped_turn = count_of(*drop, "first_dropped_turn", "usage.context_overflow");
    read.dropped_turns = count_of(*drop, "dropped_turns", "usage.context_overflow");
    read.dropped_tokens = count_of(*drop, "dropped_tokens", "usage.context_overflow");
    read.recomputed_tokens = count_of(*drop, "recomputed_tokens", "usage.context_overflow");
    result.context_drop = std::move(read);
  }
  return result;
}

}  // namespace

ChatChunk parse_chat_chunk(std::string_view data) {
  ChatChunk chunk;
  if (data == "[DONE]") {
    chunk.done = true;
    return chunk;
  }
  const json object = parse_object(data, "an event of the stream");
  if (const auto error = object.find("error"); error != object.end() && !error->is_null()) {
    chunk.error = message_of_error(*error).value_or("the engine reported an error");
    return chunk;
  }
  if (object.value("object", json()).is_string() && object["object"] == "error") {
    chunk.error = text_of(object, "message", "error");
    if (chunk.error->empty()) chunk.error = "the engine reported an error";
    return chunk;
  }
  if (const auto usage = object.find("usage"); usage != object.end() && !usage->is_null()) {
    if (!usage->is_object()) throw ProtocolError("usage is not an object");
    chunk.usage = usage_of(*usage, object);
  }
  const auto choices = object.find("choices");
  if (choices == object.end() || choices->is_null()) return chunk;
  if (!choices->is_array()) throw ProtocolError("choices is not a list");
  for (const json& choice : *choices) {
    if (!choice.is_object()) throw ProtocolError("a choice is not an object");
    // One reply is asked for; an engine that numbers it says 0.
    if (const auto index = choice.find("index");
        index != choice.end() && index->is_number() && index->get<double>() != 0) {
      continue;
    }
    if (const auto delta = choice.find("delta"); delta != choice.end() && !delta->is_null()) {
      if (!delta->is_object()) throw ProtocolError("a choice's delta is not an object");
      chunk.content += text_of(*delta, "content", "delta");
      const std::string reasoning = text_of(*delta, "reasoning_content", "delta");
      chunk.reasoning += reasoning.empty() ? text_of(*delta, "reasoning", "delta") : reasoning;
    }
    if (const auto finish = choice.find("finish_reason");
        finish != choice.end() && !finish->is_null()) {
      if (!finish->is_string()) throw ProtocolError("finish_reason is not text");
      chunk.finish_reason = finish->get<std::string>();
    }
  }
  return chunk;
}

ChatChunk parse_chat_completion(std::string_view body) {
  const json object = parse_object(body, "the reply");
  ChatChunk chunk;
  if (const auto error = object.find("error"); error != object.end() && !error->is_null()) {
    chunk.error = message_of_error(*error).value_or("the engine reported an error");
    return chunk;
  }
  if (const auto usage = object.find("usage"); usage != object.end() && !usage->is_null()) {
    if (!usage->is_object()) throw ProtocolError("usage is not an object");
    chunk.usage = usage_of(*usage, object);
  }
  const auto choices = object.find("choices");
  if (choices == object.end() || !choices->is_array() || choices->empty()) {
    throw ProtocolError("the reply has no choices");
  }
  const json& choice = choices->front();
  if (!choice.is_object()) throw ProtocolError("a choice is not an object");
  if (const auto message = choice.find("message");
      message != choice.end() && message->is_object()) {
    chunk.content = text_of(*message, "content", "message");
    const std::string reasoning = text_of(*message, "reasoning_content", "message");
    chunk.reasoning = reasoning.empty() ? text_of(*message, "reasoning", "message") : reasoning;
  }
  chunk.finish_reason = text_of(choice, "finish_reason", "choice");
  if (chunk.finish_reason->empty()) chunk.finish_reason = "stop";
  return chunk;
}

std::string error_message_of(std::string_view body) {
  const json value = json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (value.is_object()) {
    if (const auto error = value.find("error"); error != value.end() && !error->is_null()) {
      if (auto message = message_of_error(*error)) return *message;
    }
    if (const auto message = value.find("message"); message != value.end() && message->is_string())
      return message->get<std::string>();
    if (const auto detail = value.find("detail"); detail != value.end()) {
      if (detail->is_string()) return detail->get<std::string>();
      // FastAPI's validation errors: a list of {"loc", "msg"}.
      if (detail->is_array()) {
        std::string joined;
        for (const json& item : *detail) {
          if (!item.is_object() || !item.contains("msg") || !item["msg"].is_string()) continue;
          if (!joined.empty()) joined += "; ";
          joined += item["msg"].get<std::string>();
        }
        if (!joined.empty()) return joined;
      }
    }
    return {};
  }
  // Plain text from a proxy or a server that is not an OpenAI engine.
  constexpr std::size_t kShort = 300;
  if (value.is_discarded() && !body.empty() && body.size() <= kShort &&
      body.find('<') == std::string_view::npos) {
    std::string text(body);
    while (!text.empty() && (text.back() == '\n' || text.back() == '\r' || text.back() == ' '))
      text.pop_back();
    return text;
  }
  return {};
}

std::vector<RemoteModel> parse_model_list(std::string_view body) {
  const json object = parse_object(body, "the list of models");
  const auto data = object.find("data");
  if (data == object.end() || !data->is_array()) {
    throw ProtocolError("the list of models has no \"data\" list");
  }
  std::vector<RemoteModel> models;
  for (const json& entry : *data) {
    if (!entry.is_object()) throw ProtocolError("an entry of the list of models is not an object");
    RemoteModel model;
    model.id = text_of(entry, "id", "model");
    if (model.id.empty()) throw ProtocolError("a model in the list has no id");
    for (const char* key : {"max_model_len", "context_length", "max_context_length"}) {
      if (entry.contains(key) && entry[key].is_number()) {
        model.context_tokens = count_of(entry, key, "model");
        break;
      }
    }
    if (const auto owner = entry.find("owned_by"); owner != entry.end() && owner->is_string())
      model.owned_by = owner->get<std::string>();
    models.push_back(std::move(model));
  }
  return models;
}

bool is_quire_server(const RemoteModel& model) {
  return model.owned_by == "quire";
}

}  // namespace quire::remote
