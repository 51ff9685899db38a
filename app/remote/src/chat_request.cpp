#include "quire/remote/chat_request.h"

#include <nlohmann/json.hpp>

namespace quire::remote {
namespace {

// Ordered: the body lists its fields as written, as people read it in logs.
using BodyJson = nlohmann::ordered_json;

// OpenAI's content parts: {"type": "text", "text"} and {"type": "image_url",
// "image_url": {"url", "detail"}}.
BodyJson content_parts(const std::vector<ChatMessage::Part>& parts) {
  BodyJson list = BodyJson::array();
  for (const ChatMessage::Part& part : parts) {
    if (part.image_url.empty()) {
      list.push_back({{"type", "text"}, {"text", part.text}});
      continue;
    }
    BodyJson image{{"url", part.image_url}};
    if (!part.detail.empty()) image["detail"] = part.detail;
    list.push_back({{"type", "image_url"}, {"image_url", std::move(image)}});
  }
  return list;
}

BodyJson request_json(const std::string& model, const std::vector<ChatMessage>& messages,
                      const ChatSampling& sampling, int max_tokens) {
  BodyJson list = BodyJson::array();
  for (const ChatMessage& message : messages) {
    BodyJson entry{{"role", message.role}, {"content", message.content}};
    if (!message.parts.empty()) entry["content"] = content_parts(message.parts);
    // OpenAI's shape of a tool loop: content null beside the calls, and a
    // result that names its call.
    if (!message.tool_calls.empty()) {
      if (message.content.empty()) entry["content"] = nullptr;
      BodyJson& calls = entry["tool_calls"] = BodyJson::array();
      for (const ChatMessage::Call& call : message.tool_calls) {
        calls.push_back({{"id", call.id},
                         {"type", "function"},
                         {"function", {{"name", call.name}, {"arguments", call.arguments}}}});
      }
    }
    if (!message.tool_call_id.empty()) entry["tool_call_id"] = message.tool_call_id;
    list.push_back(std::move(entry));
  }
  BodyJson body{{"model", model},
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
  if (sampling.dry_multiplier > 0) {
    body["dry_multiplier"] = sampling.dry_multiplier;
    body["dry_base"] = sampling.dry_base;
    body["dry_allowed_length"] = sampling.dry_allowed_length;
    // llama.cpp's spelling: -1 for the whole context.
    body["dry_penalty_last_n"] = sampling.dry_range > 0 ? sampling.dry_range : -1;
    body["dry_sequence_breakers"] = sampling.dry_sequence_breakers;
  }
  if (sampling.xtc_probability > 0 && sampling.xtc_threshold <= 0.5) {
    body["xtc_threshold"] = sampling.xtc_threshold;
    body["xtc_probability"] = sampling.xtc_probability;
  }
  if (sampling.top_n_sigma > 0) body["top_n_sigma"] = sampling.top_n_sigma;
  if (sampling.mirostat) {
    body["mirostat"] = 2;
    body["mirostat_tau"] = sampling.mirostat_tau;
    body["mirostat_eta"] = sampling.mirostat_eta;
  }
  if (!sampling.banned_strings.empty()) body["banned_strings"] = sampling.banned_strings;
  if (!sampling.logit_bias_text.empty()) {
    BodyJson pairs = BodyJson::array();
    for (const auto& [text, bias] : sampling.logit_bias_text)
      pairs.push_back(BodyJson::array({text, bias}));
    body["logit_bias"] = std::move(pairs);
  }
  return body;
}

// Text the engine cannot encode would fail its JSON parser; replaced.
std::string body_text(const BodyJson& body) {
  return body.dump(-1, ' ', false, BodyJson::error_handler_t::replace);
}

}  // namespace

std::string chat_request_body(const std::string& model, const std::vector<ChatMessage>& messages,
                              const ChatSampling& sampling, int max_tokens) {
  return body_text(request_json(model, messages, sampling, max_tokens));
}

std::string chat_request_body(const RemoteModel& model, const std::vector<ChatMessage>& messages,
                              const ChatSampling& sampling, int max_tokens,
                              const std::string& context_overflow) {
  BodyJson body = request_json(model.id, messages, sampling, max_tokens);
  if (is_quire_server(model) && !context_overflow.empty())
    body["context_overflow"] = context_overflow;
  return body_text(body);
}

}  // namespace quire::remote
