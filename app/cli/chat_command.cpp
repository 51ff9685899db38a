// quire-cli chat: an interactive conversation in the terminal, in the model's
// prompt format, with streamed replies and the cache's reuse shown per turn.

#include <CLI/CLI.hpp>
#include <iostream>

#include "cli_support.h"
#include "context_overflow_option.h"
#include "conversation_runner.h"
#include "disk_cache_option.h"
#include "draft_option.h"
#include "generation_commands.h"
#include "hub_model_option.h"

namespace quire::cli {
namespace {

struct ChatOptions {
  std::string directory;
  std::string system = "You are a helpful assistant.";
  std::string format = "auto";
  EngineOptions engine;
  GenerationOptions generation;
  DraftOptions draft;
  DiskCacheOptions disk;
  ContextOverflowOption overflow;
};

int run_chat(const ChatOptions& options) {
  const engine::DraftSettings draft = options.draft.settings();
  const std::optional<engine::DiskTierOptions> disk = options.disk.tier_options();
  LoadedSession session = load_session(options.directory, options.engine, 4096, 1,
                                       options.draft.model_directory(), disk);
  const engine::ChatFormat format = choose_format(options.directory, options.format);
  engine::Conversation conversation(format, *session.tokenizer, options.system);
  std::cerr << "Chatting with " << options.directory << " (" << format.title()
            << "). /reset starts over, /quit or Ctrl+D ends.\n";
  std::string line;
  while (true) {
    std::cout << "\nyou> " << std::flush;
    if (!std::getline(std::cin, line) || line == "/quit") break;
    if (line.empty()) continue;
    if (line == "/reset") {
      conversation = engine::Conversation(format, *session.tokenizer, options.system);
      std::cerr << "(new conversation)\n";
      continue;
    }
    std::cout << "\nassistant> " << std::flush;
    try {
      const TurnOutcome outcome = run_turn(
          session, conversation, line, options.generation,
          [](std::string_view text) { std::cout << text << std::flush; }, draft,
          options.overflow.policy());
      const engine::JobStatistics& stats = outcome.result.statistics;
      std::cout << '\n';
      if (outcome.trimmed) std::cerr << dropped_line(*outcome.trimmed) << '\n';
      std::cerr << "[" << stats.generated_tokens << " tokens at "
                << static_cast<int>(stats.decode_tokens_per_second()) << " tokens/s; "
                << stats.cached_tokens << " of " << stats.prompt_tokens
                << " prompt tokens from the cache" << disk_tokens_note(*session.runtime, stats);
      if (draft.method != engine::DraftSettings::Method::Off)
        std::cerr << "; " << draft_summary(stats);
      std::cerr << "]\n";
      if (outcome.recomputed_tokens > 0) {
        std::cerr << "(the chat template rewrote earlier turns: " << outcome.recomputed_tokens
                  << " tokens computed again)\n";
      }
    } catch (const engine::ContextOverflow& overflow) {
      std::cerr << '\n' << overflow.what() << '\n';
    } catch (const engine::ChatTemplateError& error) {
      // The model's template refused this conversation; the chat goes on.
      std::cerr << '\n' << error.what() << '\n';
    }
  }
  // On /quit or the end of input: the next chat that begins the same way,
  // in this process or another, reads these pages instead of computing them.
  archive_disk_cache(*session.runtime, std::cerr);
  return 0;
}

}  // namespace

void add_chat_command(CLI::App& app, int& exit_code) {
  auto options = std::make_shared<ChatOptions>();
  CLI::App* command = app.add_subcommand("chat", "Chat with a model in the terminal");
  command->add_option("directory", options->directory, kModelDirectoryHelp)
      ->required()
      ->transform(hub_model_reference());
  CLI::Option* system =
      command->add_option("--system", options->system, "System prompt")->capture_default_str();
  CLI::Option* format =
      command->add_option("--format", options->format, kFormatHelp)->capture_default_str();
  options->generation.add_to(*command);
  options->overflow.add_to(*command);
  options->draft.add_to(*command);
  options->disk.add_to(*command);
  options->engine.add_to(*command, true);
  command->callback([options, system, format, &exit_code] {
    if (const std::optional<PresetValues> preset =
            options->generation.apply_preset(options->overflow)) {
      const std::optional<std::string>& prompt = preset->values.system_prompt;
      if (!given(system) && prompt) options->system = *prompt;
      if (!given(format) && preset->prompt_format) options->format = *preset->prompt_format;
    }
    exit_code = run_chat(*options);
  });
}

}  // namespace quire::cli
