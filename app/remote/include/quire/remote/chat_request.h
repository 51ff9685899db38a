#pragma once

// The body of a streamed chat completion request as OpenAI-compatible engines
// take it. Sampling fields are sent only where they change something, so an
// engine that lacks one (OpenAI's own API has no top_k) is asked for nothing
// it must refuse when the user never set it. No Qt.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "quire/remote/openai_stream.h"

namespace quire::remote {

struct ChatMessage {
  ChatMessage() = default;
  ChatMessage(std::string message_role, std::string text)
      : role(std::move(message_role)), content(std::move(text)) {}

  std::string role;  // "system", "user", "assistant" or "tool"
  std::string content;
  // An assistant message's tool calls, in OpenAI's shape; a tool message's
  // call id.
  struct Call {
    std::string id;
    std::string name;
    std::string arguments;  // JSON text
  };
  std::vector<Call> tool_calls;
  std::string tool_call_id;
  // A user message that holds images: its content as OpenAI's content parts,
  // in order, each image's data: URL passed on unchanged (remote engines
  // such as vLLM, llama.cpp's server or another Quire may see images). Empty:
  // the content is `content`, as text. Each field has a default, so a part
  // may be written as {text} or {"", url}.
  struct Part {
    std::string text = {};       // a text part
    std::string image_url = {};  // an image part: "data:image/png;base64,..." (text empty)
    std::string detail = {};     // the image's detail ("auto", "low", "high"); empty: not sent
  };
  std::vector<Part> parts;
};

struct ChatSampling {
  double temperature = 1.0;
  double top_p = 0;               // 0 or 1: off
  int top_k = 0;                  // 0: off
  double min_p = 0;               // 0: off
  double repetition_penalty = 0;  // 0 or 1: off (vLLM, SGLang, TabbyAPI read it)
  std::optional<std::int64_t> seed;
  // DRY, XTC, top-nσ and mirostat v2, under llama.cpp's server's names (which
  // TabbyAPI also reads for DRY and XTC); each group is sent only when on.
  double dry_multiplier = 0;  // 0: off
  double dry_base = 1.75;
  int dry_allowed_length = 2;
  int dry_range = 0;  // 0: the whole context
  std::vector<std::string> dry_sequence_breakers;
  double xtc_threshold = 0.1;
  double xtc_probability = 0;  // 0: off
  double top_n_sigma = 0;      // 0: off
  bool mirostat = false;
  double mirostat_tau = 5;
  double mirostat_eta = 0.1;
  // Text the reply must never show, and biases by text; each sent only when
  // not empty, as our own server (and llama.cpp's, for the biases) reads
  // them: "banned_strings": [...], "logit_bias": [[text, bias], ...]. The
  // array of pairs keeps a text of digits ("42") text, where an object's
  // key would name a token id.
  std::vector<std::string> banned_strings;
  std::map<std::string, double> logit_bias_text;
};

// {"model", "messages", "stream": true, "stream_options": {"include_usage":
// true}, "max_tokens", "temperature", ...} as compact JSON.
std::string chat_request_body(const std::string& model, const std::vector<ChatMessage>& messages,
                              const ChatSampling& sampling, int max_tokens);

// The body for `model` as its engine reads it: the above, and the chat's
// context policy (`context_overflow`: "stop", "drop_oldest" or
// "truncate_middle") as "context_overflow" when Quire's server serves it; its
// usage then says what it dropped (StreamUsage::context_drop). No other
// engine takes a policy per request (llama.cpp's context shift is an option
// of its server, vLLM and TabbyAPI refuse a prompt that does not fit, LM
// Studio's contextOverflowPolicy belongs to its own SDK, not to its
// OpenAI-compatible API), so they are sent none and what they do with a long
// chat is theirs.
std::string chat_request_body(const RemoteModel& model, const std::vector<ChatMessage>& messages,
                              const ChatSampling& sampling, int max_tokens,
                              const std::string& context_overflow);

}  // namespace quire::remote
