#include "context_overflow_option.h"

#include <CLI/CLI.hpp>

#include "cli_support.h"

namespace quire::cli {

void ContextOverflowOption::add_to(CLI::App& command) {
  option = command.add_option(
      "--context-overflow", name,
      "When the conversation outgrows the context: stop (say so and send nothing), "
      "drop-oldest (whole turns from the oldest; the system prompt stays) or "
      "truncate-middle (the system prompt and the first turn stay; whole turns go "
      "from the middle, so the cache keeps more; default: the preset's, else drop-oldest). "
      "docs/context-policy.md");
  option->capture_default_str()->check([](const std::string& text) {
    return engine::parse_context_policy(text)
               ? std::string()
               : "\"" + text + "\" is not stop, drop-oldest or truncate-middle";
  });
}

engine::ContextPolicy ContextOverflowOption::policy() const {
  if (preset && (option == nullptr || option->count() == 0)) return *preset;
  const std::optional<engine::ContextPolicy> policy = engine::parse_context_policy(name);
  if (!policy) throw UsageError("--context-overflow takes stop, drop-oldest or truncate-middle");
  return *policy;
}

std::string dropped_line(const engine::Trimmed& trimmed) {
  const int first = trimmed.first_turn + 1;
  const int last = trimmed.first_turn + trimmed.turns;
  const std::string turns =
      first == last ? "turn " + std::to_string(first)
                    : "turns " + std::to_string(first) + "\u2013" + std::to_string(last);
  return "(" + turns + " left the context: " + std::to_string(trimmed.tokens) + " tokens; " +
         std::to_string(trimmed.recomputed) + " read again)";
}

}  // namespace quire::cli
