// quire-cli replay: a scripted conversation in one process, with what each
// turn took from the cache and what it computed.

#include <CLI/CLI.hpp>
#include <cstdio>
#include <iostream>
#include <nlohmann/json.hpp>

#include "cli_support.h"
#include "context_overflow_option.h"
#include "conversation_runner.h"
#include "conversation_script.h"
#include "disk_cache_option.h"
#include "generation_commands.h"
#include "hub_model_option.h"

namespace quire::cli {
namespace {

struct ReplayOptions {
  std::string directory;
  std::string conversation;
  std::string format = "auto";
  bool json = false;
  EngineOptions engine;
  GenerationOptions generation;
  DiskCacheOptions disk;
  ContextOverflowOption overflow;
};

int run_replay(const ReplayOptions& options) {
  const std::optional<engine::DiskTierOptions> disk = options.disk.tier_options();
  const ConversationScript script = read_conversation_script(options.conversation);
  LoadedSession session = load_session(options.directory, options.engine, 4096, 1, {}, disk);
  const engine::ChatFormat format = choose_format(options.directory, options.format);
  engine::Conversation conversation(format, *session.tokenizer, script.system);

  nlohmann::ordered_json turns = nlohmann::ordered_json::array();
  if (!options.json) {
    std::printf("%4s %8s %8s %9s %10s %12s %8s\n", "turn", "prompt", "cached", "computed",
                "ttft ms", "decode tok/s", "reply");
  }
  for (std::size_t i = 0; i < script.messages.size(); ++i) {
    const TurnOutcome outcome = run_turn(session, conversation, script.messages[i],
                                         options.generation, {}, {}, options.overflow.policy());
    const engine::JobStatistics& stats = outcome.result.statistics;
    turns.push_back({{"turn", i + 1},
                     {"prompt_tokens", stats.prompt_tokens},
                     {"cached_tokens", stats.cached_tokens},
                     {"disk_tokens", stats.disk_tokens},
                     {"computed_tokens", stats.computed_tokens},
                     {"time_to_first_token_s", stats.time_to_first_token},
                     {"decode_tokens_per_s", stats.decode_tokens_per_second()},
                     {"generated_tokens", stats.generated_tokens},
                     {"stop_reason", std::string(engine::to_string(outcome.result.stop_reason))},
                     {"trimmed_turns", outcome.trimmed ? outcome.trimmed->turns : 0},
                     {"trimmed_first_turn", outcome.trimmed ? outcome.trimmed->first_turn + 1 : 0},
                     {"trimmed_tokens", outcome.trimmed ? outcome.trimmed->tokens : 0},
                     {"trim_recomputed_tokens", outcome.trimmed ? outcome.trimmed->recomputed : 0},
                     {"recomputed_tokens", outcome.recomputed_tokens},
                     {"reply", outcome.result.text}});
    if (!options.json) {
      std::printf("%4zu %8lld %8lld %9lld %10.1f %12.1f %8lld\n", i + 1,
                  static_cast<long long>(stats.prompt_tokens),
                  static_cast<long long>(stats.cached_tokens),
                  static_cast<long long>(stats.computed_tokens), stats.time_to_first_token * 1000.0,
                  stats.decode_tokens_per_second(), static_cast<long long>(stats.generated_tokens));
    }
  }
  if (options.json) {
    const cache::CacheStats cache = session.runtime->cache().stats();
    const cache::CacheConfig& config = session.runtime->cache().config();
    std::cout << nlohmann::ordered_json{{"turns", turns},
                                        {"cache_hit_rate", cache.hit_rate()},
                                        {"reused_tokens", cache.reused_tokens},
                                        {"copied_tokens", cache.copied_tokens},
                                        {"reservation", cache::to_string(config.reservation)},
                                        {"host_pages", config.host_pages},
                                        {"host_saves", cache.host_saves},
                                        {"host_restores", cache.host_restores},
                                        {"disk_saves", cache.disk_saves},
                                        {"disk_restores", cache.disk_restores},
                                        {"evictions", cache.evictions},
                                        {"preemptions", cache.preemptions}}
                     .dump(2)
              << '\n';
  }
  archive_disk_cache(*session.runtime, std::cerr);
  return 0;
}

}  // namespace

void add_replay_command(CLI::App& app, int& exit_code) {
  auto options = std::make_shared<ReplayOptions>();
  CLI::App* command = app.add_subcommand(
      "replay", "Play a scripted conversation and report what each turn reused and computed");
  command->add_option("directory", options->directory, kModelDirectoryHelp)
      ->required()
      ->transform(hub_model_reference());
  command->add_option("--conversation", options->conversation, kConversationFileHelp)->required();
  command->add_option("--format", options->format, kFormatHelp)->capture_default_str();
  command->add_flag("--json", options->json, "Print the numbers as JSON");
  options->generation.add_to(*command);
  options->overflow.add_to(*command);
  options->disk.add_to(*command);
  options->engine.add_to(*command, true);
  command->callback([options, &exit_code] {
    // The script brings its own system prompt; the preset its sampling and
    // context policy.
    options->generation.apply_preset(options->overflow);
    exit_code = run_replay(*options);
  });
}

}  // namespace quire::cli
