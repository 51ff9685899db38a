#pragma once

// The bodies of OpenAI's /v1/chat/completions and /v1/completions, parsed once
// at the edge into typed values. Everything that can be judged without the
// model is judged here: JSON syntax, UTF-8, types, ranges, the order of the
// messages, and the fields Quire does not offer. Plain C++ and nlohmann-json,
// so a fuzzer drives it directly (fuzz/fuzz_openai_request.cpp).

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "quire/engine/generator/context_policy.h"
#include "quire/server/chat_messages.h"
#include "quire/server/response_format.h"

namespace quire::server {

// Sampling and stopping fields shared by both endpoints; absent fields stay
// empty and the server's defaults apply (openai_defaults in completion_job.h).
struct SamplingFields {
  std::optional<std::int64_t> max_tokens;   // max_completion_tokens wins over max_tokens
  std::optional<double> temperature;        // [0, 2]
  std::optional<double> top_p;              // [0, 1]
  std::optional<std::int64_t> top_k;        // >= 0 (0 or -1: off)
  std::optional<double> min_p;              // [0, 1]
  std::optional<double> frequency_penalty;  // [-2, 2]
  std::optional<double> presence_penalty;   // [-2, 2]
  std::optional<std::int64_t> seed;
  std::vector<std::string> stop;
  std::map<std::int64_t, double> logit_bias;  // token id -> bias in [-100, 100]
  // llama.cpp's form of logit_bias: text whose every token gets the bias.
  std::map<std::string, double> logit_bias_text;
  // TabbyAPI's banned_strings: text the reply must never show.
  std::vector<std::string> banned_strings;
  // DRY, XTC, top-nσ and mirostat v2, named as llama.cpp's server and
  // TabbyAPI name them (tuned_sampling_fields.cpp lists the spellings).
  std::optional<double> dry_multiplier;            // [0, 100] (0: off)
  std::optional<double> dry_base;                  // [1, 100]
  std::optional<std::int64_t> dry_allowed_length;  // >= 1
  std::optional<std::int64_t> dry_range;           // >= 0 (0: the whole context)
  std::optional<std::vector<std::string>> dry_sequence_breakers;
  std::optional<double> xtc_threshold;    // [0, 1]
  std::optional<double> xtc_probability;  // [0, 1]
  std::optional<double> top_n_sigma;      // [-100, 100] (0 or less: off)
  std::optional<std::int64_t> mirostat;   // 0 or 2
  std::optional<double> mirostat_tau;     // [0.01, 100]
  std::optional<double> mirostat_eta;     // [0.001, 1]
  // TabbyAPI's and exllamav2's multiplicative penalty (> 0; 1: off), which a
  // preset may also give.
  std::optional<double> repetition_penalty;

  friend bool operator==(const SamplingFields&, const SamplingFields&) = default;
};

// One earlier exchange of the conversation.
struct ChatExchange {
  std::string user;
  std::string assistant;
  std::vector<MessageImage> user_images = {};  // the user message's images, in order

  friend bool operator==(const ChatExchange&, const ChatExchange&) = default;
};

// The messages as the prompt formats take them: every system (or developer)
// message, joined by blank lines; then user and assistant messages in turn,
// ending with the user message that awaits the reply.
struct ChatTurns {
  std::string system;
  std::vector<ChatExchange> history;
  std::string user;
  std::vector<MessageImage> user_images = {};  // the last user message's images, in order

  friend bool operator==(const ChatTurns&, const ChatTurns&) = default;
};

// Most replies one request may ask for (`n`): each is a job of its own, with
// its own pages beyond the shared prompt and its own place in the batch.
inline constexpr int kMaxChoices = 16;

struct ChatCompletionRequest {
  std::string model;  // empty when the request names none
  // Every message in order, system messages joined into one at the front.
  std::vector<ChatMessage> messages;
  // The same as turns, for a request without tools (uses_tools() false);
  // such a request keeps to system, then user and assistant in turn.
  ChatTurns turns;
  ToolsRequest tools;
  int n = 1;  // replies to the same prompt, 1 to kMaxChoices
  bool stream = false;
  bool include_usage = false;  // stream_options.include_usage
  SamplingFields sampling;
  ResponseFormat response_format;
  // Quire's extension "context_overflow": what to do when the chat does not
  // fit the context (docs/context-policy.md). Absent: stop, answering 400
  // context_length_exceeded, as OpenAI's API does.
  std::optional<engine::ContextPolicy> context_overflow;
  // A preset's name (request_preset.h): its values fill what the request leaves out.
  std::string preset;

  // Tools are offered (and tool_choice is not "none"), or the messages hold
  // tool calls or their results: the conversation goes to the model's chat
  // template as `messages`, with `tools`, and the reply may call them.
  bool uses_tools() const;
};

struct CompletionRequest {
  std::string model;
  // The prompt as text, or as token ids when the request gives a list of
  // integers (ids are checked against the vocabulary by the server).
  std::string prompt;
  std::optional<std::vector<std::int64_t>> prompt_ids;
  int n = 1;
  bool stream = false;
  bool include_usage = false;
  SamplingFields sampling;
  std::string preset;  // as ChatCompletionRequest::preset
};

// Most stop strings and logit_bias entries a request may give.
inline constexpr std::size_t kMaxStopStrings = 16;
inline constexpr std::size_t kMaxLogitBias = 1024;
inline constexpr std::size_t kMaxBannedStrings = 64;

// Both throw ApiException (status 400, an OpenAI error object naming the
// field) for a body that is not valid UTF-8, not JSON, not an object, or has
// a field of the wrong type or outside its range.
ChatCompletionRequest parse_chat_completion_request(std::string_view body);
CompletionRequest parse_completion_request(std::string_view body);

// The offset of the first byte that is not part of well-formed UTF-8
// (overlong forms, surrogates and code points above U+10FFFF included);
// nullopt when the text is valid.
std::optional<std::size_t> first_invalid_utf8(std::string_view text);

}  // namespace quire::server
