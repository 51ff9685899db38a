#pragma once

// --context-overflow for chat, replay and generate: what happens when the
// conversation (or the prompt) outgrows the context.

#include <optional>
#include <string>

#include "quire/engine/generator/context_policy.h"
#include "quire/engine/generator/conversation.h"

namespace CLI {
class App;
class Option;
}  // namespace CLI

namespace quire::cli {

struct ContextOverflowOption {
  std::string name = "drop-oldest";
  CLI::Option* option = nullptr;
  // A preset's policy, which applies when --context-overflow is not given.
  std::optional<engine::ContextPolicy> preset;

  void add_to(CLI::App& command);
  // Takes `policy` (a preset's; nullopt: none) for when the option is not given.
  void fill(const std::optional<engine::ContextPolicy>& policy) { preset = policy; }
  // --context-overflow when given, else the preset's, else drop-oldest.
  engine::ContextPolicy policy() const;
};

// "(turns 2–4 left the context: 1,840 tokens; 288 read again)" for a chat's
// standard error.
std::string dropped_line(const engine::Trimmed& trimmed);

}  // namespace quire::cli
