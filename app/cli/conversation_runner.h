#pragma once

#include <functional>
#include <optional>
#include <string>

#include "generation_options.h"
#include "quire/engine/generator/chat_format.h"
#include "quire/engine/generator/conversation.h"

namespace quire::cli {

// One turn of a conversation through the generator: fit the context, render
// the prompt, generate with the format's stop markers (drafting as `draft`
// says), record the reply.
struct TurnOutcome {
  engine::JobResult result;
  std::optional<engine::Trimmed> trimmed;
  // Ids of the earlier conversation the chat template rewrote (computed again).
  std::int64_t recomputed_tokens = 0;
};

// `policy`: what happens when the conversation outgrows the context
// (Conversation::fit; Stop throws ContextOverflow, sending nothing).
TurnOutcome run_turn(LoadedSession& session, engine::Conversation& conversation,
                     const std::string& message, const GenerationOptions& generation,
                     const std::function<void(std::string_view)>& on_text,
                     const engine::DraftSettings& draft = {},
                     engine::ContextPolicy policy = engine::ContextPolicy::DropOldest);

// The format for `name` ("auto", "template" or a built-in name; see
// engine::choose_chat_format). A notice (why the model's template is not
// used) goes to standard error as one line.
engine::ChatFormat choose_format(const std::string& directory, const std::string& name);

// What --format takes, for the commands' help.
inline constexpr const char* kFormatHelp =
    "Prompt format: auto (the model's chat template, else a built-in format its files point "
    "to), template, llama2, llama3, chatml, mistral, gemma or plain";

}  // namespace quire::cli
