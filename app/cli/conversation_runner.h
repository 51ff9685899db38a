#pragma once

#include <functional>
#include <optional>
#include <string>

#include "generation_options.h"
#include "quire/engine/generator/conversation.h"

namespace quire::cli {

// One turn of a conversation through the generator: fit the context, render
// the prompt, generate with the format's stop markers, record the reply.
struct TurnOutcome {
  engine::JobResult result;
  std::optional<engine::Trimmed> trimmed;
};

TurnOutcome run_turn(LoadedSession& session, engine::Conversation& conversation,
                     const std::string& message, const GenerationOptions& generation,
                     const std::function<void(std::string_view)>& on_text);

engine::PromptFormatId choose_format(const std::string& directory, const std::string& name);

}  // namespace quire::cli
