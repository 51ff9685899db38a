#pragma once

// From a parsed request to a Generator job: the prompt rendered in the
// model's format and tokenized, the sampling settings with OpenAI's defaults,
// and the checks that need the model (its name, the context, the vocabulary).

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>

#include "quire/engine/generator/chat_format.h"
#include "quire/engine/generator/job.h"
#include "quire/engine/tokenizer/tokenizer.h"
#include "quire/engine/tools/tool_call.h"
#include "quire/server/openai_request.h"
#include "quire/server/openai_response.h"
#include "quire/server/reply_memory.h"

namespace quire::server {

// What the server knows of the model it runs.
struct ServedModel {
  std::string id;                   // what /v1/models lists and requests name
  std::int64_t context_tokens = 0;  // prompt and reply of one request together
  int vocab_size = 0;               // token ids from 0 below this
  // The model's vision tower is loaded and runs: with the generator's image
  // support it decides whether requests may hold images (model_sees_images
  // in vision_support.h). Front ends set it from the model description's
  // vision tower.
  bool vision_tower = false;
  // Turns a request's image into what the prompt holds (the front end's
  // decoder and the model's engine::ImagePreparer); unset where the model
  // takes no images. Throws std::exception with a message for the client
  // (the file does not decode, the processor refuses it).
  std::function<std::shared_ptr<const engine::PreparedImage>(const MessageImage&)> prepare_image =
      nullptr;
};

// Throws ApiException 404 (model_not_found) when `requested` is neither empty
// nor the served model's id.
void check_model(const std::string& requested, const ServedModel& model);

// OpenAI's defaults where the request is silent: temperature 1, top_p 1, and
// no top-k, min-p, typical or repetition penalty (exllamav2's defaults, which
// the other commands use, are not what OpenAI's clients expect). Temperature 0
// is greedy. Throws ApiException for a logit_bias id outside the vocabulary.
engine::SamplingSettings openai_sampling(const SamplingFields& fields, const ServedModel& model);

// DRY, XTC, top-nσ and mirostat's fields written into `settings` where they
// are given (the others keep their values): openai_sampling's, and
// quire-cli's for a preset's samplers.
void apply_tuned_fields(engine::SamplingSettings& settings, const SamplingFields& fields);

// The fields that need the tokenizer or the job's grammar: logit_bias given
// as text (every token of the text gets the bias, as llama.cpp's server
// does) and banned_strings. Call after the job's grammar is set: banned
// strings and a grammar (response_format, strict or required tools) are
// refused together with ApiException, as is text with no tokens.
void apply_text_fields(engine::JobRequest& job, const SamplingFields& fields,
                       const engine::Tokenizer& tokenizer);

// How a reply's text becomes content, reasoning and tool calls.
struct ReplyShape {
  // The chat template's tool-call format; None: every byte is content.
  engine::tools::ToolCallFormat format = engine::tools::ToolCallFormat::None;
  // The template writes reasoning between <think> and </think> (Qwen3,
  // DeepSeek R1): a reply's leading think block is reasoning, not content.
  bool think_tags = false;
  // The prompt ends inside <think>: the reply begins as reasoning.
  bool starts_in_reasoning = false;
  // parallel_tool_calls: false keeps a reply's first call only.
  bool parallel = true;
};

struct PreparedJob {
  engine::JobRequest request;  // without on_text and on_done
  std::int64_t prompt_tokens = 0;
  // Set for a request with tools: the reply is read for calls.
  std::optional<ReplyShape> shape;
  // What the request's context_overflow policy dropped, when it dropped turns.
  std::optional<ContextDropUsage> context_drop;
};

// The conversation rendered with `format` (a chat template, or a built-in
// format), the format's stop markers and the request's stop strings. Earlier
// replies that `replies` knows take the ids they were generated as; others
// are tokenized from their text.
// With context_overflow "drop_oldest" or "truncate_middle", whole turns are
// dropped as Conversation::fit() does, keeping max_tokens (else a quarter of
// the context) for the reply; context_drop says what went.
// Throws ApiException: 400 when the template refuses the messages or the
// prompt and the reply do not fit the context (naming the numbers; code
// context_length_exceeded).
PreparedJob prepare_chat_job(const ChatCompletionRequest& request, const engine::ChatFormat& format,
                             const engine::Tokenizer& tokenizer, const ServedModel& model,
                             ReplyMemory* replies = nullptr);

// A request with tools (uses_tools()): every message, with `tools`, through
// the model's chat template, which must know the format of tool calls when
// tools are offered. tool_choice "required" or a named function constrain
// the reply to one call of the request's tools in the template's format, its
// arguments held to the function's schema. Throws ApiException 400 for a
// built-in prompt format, a template without tool calls, a template that
// refuses the messages, and what the grammar cannot enforce.
PreparedJob prepare_tool_chat_job(const ChatCompletionRequest& request,
                                  const engine::ChatFormat& format,
                                  const engine::Tokenizer& tokenizer, const ServedModel& model);

// The prompt as given (text with the tokenizer's BOS, or token ids) and the
// request's stop strings; EOS ends the reply.
PreparedJob prepare_completion_job(const CompletionRequest& request,
                                   const engine::Tokenizer& tokenizer, const ServedModel& model);

// The usage of a request from its finished jobs, one per choice: the prompt
// once, with the cached tokens the first choice (which computed the prompt
// for all) found; the completion tokens of every choice added up.
Usage request_usage(std::span<const engine::JobResult> results);

}  // namespace quire::server
