#pragma once

// The answers of the OpenAI-compatible endpoints as JSON text: whole
// responses, the chunks of a stream and their server-sent-event framing.
// Plain C++ and nlohmann-json; text that is not UTF-8 is replaced, never
// thrown on.

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "quire/server/chat_messages.h"

namespace quire::server {

enum class FinishReason { Stop, Length, ToolCalls };
std::string_view to_string(FinishReason reason);  // "stop", "length", "tool_calls"

// With several choices the prompt counts once and the completions add up, as
// in OpenAI's API.
// Quire's extension to usage, "context_overflow": the turns a chat request's
// context_overflow policy dropped to fit (numbered from 1 among the request's
// user messages), and the tokens of the shortened prompt the prefix cache
// had to compute again because of it.
struct ContextDropUsage {
  std::string policy;  // "drop_oldest", "truncate_middle"
  int first_dropped_turn = 0;
  int dropped_turns = 0;
  std::int64_t dropped_tokens = 0;
  std::int64_t recomputed_tokens = 0;

  friend bool operator==(const ContextDropUsage&, const ContextDropUsage&) = default;
};

struct Usage {
  Usage() = default;
  Usage(std::int64_t prompt, std::int64_t completion, std::int64_t cached)
      : prompt_tokens(prompt), completion_tokens(completion), cached_tokens(cached) {}

  std::int64_t prompt_tokens = 0;
  std::int64_t completion_tokens = 0;
  std::int64_t cached_tokens = 0;  // prompt tokens the KV cache already held
  std::optional<ContextDropUsage> context_drop;
};

// What every response and chunk of one request repeats.
struct ResponseHeader {
  std::string id;            // "chatcmpl-..." or "cmpl-..."
  std::int64_t created = 0;  // Unix seconds
  std::string model;
};

// One reply of a response; a request with `n` has n of them, at indices 0..n-1.
struct Choice {
  Choice() = default;
  Choice(std::string reply_text, FinishReason reason)
      : text(std::move(reply_text)), finish(reason) {}

  std::string text;
  FinishReason finish = FinishReason::Stop;
  // Chat replies of a request with tools: the model's reasoning (its think
  // block, Harmony's analysis channel), sent as "reasoning_content" as vLLM
  // and llama.cpp's server do; the calls it made; and, for a reply that
  // began a call and broke it off (then `text` holds the whole reply), why.
  std::string reasoning;
  std::vector<FunctionCall> tool_calls;
  std::string tool_call_error;
};

// What one chunk of a chat stream adds to a choice.
struct ChatDelta {
  std::string content;
  std::string reasoning;
  // A call's first part carries its index, id and name; later ones more of
  // its arguments, as OpenAI streams them.
  struct CallPart {
    std::size_t index = 0;
    std::string id;
    std::string name;
    std::string arguments;
  };
  std::vector<CallPart> calls;

  bool empty() const { return content.empty() && reasoning.empty() && calls.empty(); }
};

// POST /v1/chat/completions without streaming: every choice, and the usage of
// the whole request.
std::string chat_completion_json(const ResponseHeader& header, std::span<const Choice> choices,
                                 const Usage& usage);
// Chunks of a chat stream, each about the choice at `index`.
// `with_usage_field`: stream_options.include_usage was set, so every chunk
// carries "usage": null until the last one.
std::string chat_role_chunk(const ResponseHeader& header, int index, bool with_usage_field);
std::string chat_content_chunk(const ResponseHeader& header, int index, std::string_view text,
                               bool with_usage_field);
std::string chat_delta_chunk(const ResponseHeader& header, int index, const ChatDelta& delta,
                             bool with_usage_field);
// `tool_call_error`: why a reply's tool call broke off, when it did.
std::string chat_finish_chunk(const ResponseHeader& header, int index, FinishReason finish,
                              bool with_usage_field, std::string_view tool_call_error = {});
// The last chunk with include_usage, once every choice has finished: no
// choices, the usage of the whole request.
std::string chat_usage_chunk(const ResponseHeader& header, const Usage& usage);

// POST /v1/completions, whole and streamed.
std::string completion_json(const ResponseHeader& header, std::span<const Choice> choices,
                            const Usage& usage);
std::string completion_chunk(const ResponseHeader& header, int index, std::string_view text,
                             std::optional<FinishReason> finish, bool with_usage_field);
std::string completion_usage_chunk(const ResponseHeader& header, const Usage& usage);

// GET /v1/models: the one model this server runs, with the tokens one
// request may hold as vLLM writes them (max_model_len), which clients such as
// Quire's remote engine read; 0 leaves the field out.
std::string models_json(const std::string& model, std::int64_t created,
                        std::int64_t context_tokens = 0);
std::string model_json(const std::string& model, std::int64_t created,
                       std::int64_t context_tokens = 0);

// "data: <json>\n\n", and the stream's end, "data: [DONE]\n\n".
std::string sse_event(std::string_view json);
std::string sse_done();

}  // namespace quire::server
