#pragma once

// What OpenAI-compatible engines send back, read as the engines people run
// actually write it: vLLM, SGLang, TabbyAPI, llama.cpp's server, Ollama and
// Quire's own server. A chat completion streams as chunks whose first may
// carry only the role, whose deltas may be empty or null, whose reasoning
// models put their thoughts in "reasoning_content" (vLLM, SGLang) or
// "reasoning" (Ollama, newer vLLM), whose usage comes in a last chunk
// without choices (or inside the finishing chunk), with cached prompt tokens
// under prompt_tokens_details or llama.cpp's timings, or not at all; an error
// may arrive in the middle of a stream as an event of its own. No Qt: the
// fuzz build links this too.

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace quire::remote {

// The endpoint sent something that is not what the protocol allows.
class ProtocolError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// What a Quire server's context policy dropped from the conversation to fit
// its context (usage.context_overflow, docs/context-policy.md).
struct ContextDrop {
  std::string policy;                   // "drop_oldest" or "truncate_middle"
  std::int64_t first_dropped_turn = 0;  // from 1, among the request's user messages
  std::int64_t dropped_turns = 0;
  std::int64_t dropped_tokens = 0;
  std::int64_t recomputed_tokens = 0;  // of the shortened prompt, what its cache could not serve
};

struct StreamUsage {
  std::int64_t prompt_tokens = 0;
  std::int64_t completion_tokens = 0;
  // Prompt tokens the engine took from its prefix cache, when it says.
  std::optional<std::int64_t> cached_tokens;
  // Turns a Quire server dropped; no other engine says.
  std::optional<ContextDrop> context_drop;
};

// One event of a streamed chat completion, for the first choice.
struct ChatChunk {
  bool done = false;      // the "[DONE]" that ends the stream
  std::string content;    // text of the reply added by this chunk
  std::string reasoning;  // text of the model's reasoning added by this chunk
  std::optional<std::string> finish_reason;
  std::optional<StreamUsage> usage;
  // An error the engine reported inside the stream: its message.
  std::optional<std::string> error;
};

// Reads the data of one event. Throws ProtocolError when it is not JSON, not
// an object, or a field the reply depends on has the wrong type.
ChatChunk parse_chat_chunk(std::string_view data);

// A whole (not streamed) chat completion, which an engine that ignores
// "stream" answers with: its first choice's message as one chunk, with
// finish_reason and usage. Throws ProtocolError as parse_chat_chunk does.
ChatChunk parse_chat_completion(std::string_view body);

// The message an engine gives in the body of an error response: OpenAI's
// {"error": {"message"}}, vLLM's older {"object": "error", "message"},
// FastAPI's {"detail"} (TabbyAPI), Ollama's {"error": "..."}; else the body
// itself when it is short plain text; else "".
std::string error_message_of(std::string_view body);

struct RemoteModel {
  std::string id;
  // The context the engine serves it with, when it says (vLLM's and Quire's
  // max_model_len, context_length); else 0. llama.cpp's meta.n_ctx_train is
  // the context it was trained with, not the one it serves, and is not used.
  std::int64_t context_tokens = 0;
  // Who serves it, as the list says ("quire" for Quire's server, "vllm",
  // "llamacpp", ...); empty when it does not say.
  std::string owned_by;
};

// Whether the model is served by Quire's own server, which reads Quire's
// request fields (context_overflow) and reports what they did.
bool is_quire_server(const RemoteModel& model);

// GET /v1/models's answer. Throws ProtocolError when it is not a list.
std::vector<RemoteModel> parse_model_list(std::string_view body);

}  // namespace quire::remote
