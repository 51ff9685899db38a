#pragma once

// --context-overflow for chat, replay and generate: what happens when the
// conversation (or the prompt) outgrows the context.

#include <string>

#include "quire/engine/generator/context_policy.h"
#include "quire/engine/generator/conversation.h"

namespace CLI {
class App;
}

namespace quire::cli {

struct ContextOverflowOption {
  std::string name = "drop-oldest";

  void add_to(CLI::App& command);
  engine::ContextPolicy policy() const;
};

// "(turns 2–4 left the context: 1,840 tokens; 288 read again)" for a chat's
// standard error.
std::string dropped_line(const engine::Trimmed& trimmed);

}  // namespace quire::cli
