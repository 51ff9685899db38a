// quire-cli bench's conversation workload: see bench_conversation.h.

#include "bench_conversation.h"

#include <algorithm>
#include <iostream>
#include <string>
#include <vector>

#include "bench_generate.h"
#include "cli_support.h"
#include "conversation_runner.h"

namespace quire::cli {
namespace {}  // namespace

// Each turn reports the median of its runs: a single turn's time scatters on
// a shared machine as much as the difference being measured.
nlohmann::ordered_json measure_conversation(LoadedSession& session,
                                            const ConversationWorkload& options) {
  const EngineOptions& engine = options.engine;
  GenerationOptions generation;
  generation.greedy = true;
  generation.max_new = options.turn_reply;
  std::vector<std::vector<double>> ttft(10);
  nlohmann::ordered_json turns = nlohmann::ordered_json::array();
  std::vector<std::int32_t> last_prompt;
  for (int run = 0; run < options.repeats; ++run) {
    engine::Conversation conversation(
        engine::PromptFormatId::ChatML, *session.tokenizer,
        run == 0 ? "You are a benchmark." : "You are a benchmark, run " + std::to_string(run + 1));
    for (int turn = 1; turn <= 10; ++turn) {
      std::string message = "Turn " + std::to_string(turn) + ":";
      for (int word = 0; word < options.turn_words; ++word)
        message += " word" + std::to_string((turn * 131 + word * 7) % 97);
      const TurnOutcome outcome = run_turn(session, conversation, message, generation, {});
      const engine::JobStatistics& stats = outcome.result.statistics;
      ttft[std::size_t(turn - 1)].push_back(stats.time_to_first_token);
      if (run > 0) continue;
      turns.push_back({{"turn", turn},
                       {"prompt_tokens", stats.prompt_tokens},
                       {"cached_tokens", stats.cached_tokens}});
      if (turn == 10) {
        last_prompt = conversation.ids();
        last_prompt.resize(static_cast<std::size_t>(stats.prompt_tokens));
      }
    }
  }
  for (std::size_t turn = 0; turn < ttft.size(); ++turn) {
    std::vector<double> sorted = ttft[turn];
    std::sort(sorted.begin(), sorted.end());
    turns[turn]["time_to_first_token_s"] = sorted[sorted.size() / 2];
    turns[turn]["runs_time_to_first_token_s"] = ttft[turn];
  }
  LoadedSession cold = load_session(options.directory, engine, engine.context, 1);
  const engine::JobResult cold_result = bench_generate(cold, last_prompt, 1);
  const nlohmann::ordered_json result = {
      {"turns", turns},
      {"turn_1_ttft_s", turns[0]["time_to_first_token_s"]},
      {"turn_10_warm_ttft_s", turns[9]["time_to_first_token_s"]},
      {"turn_10_cold_ttft_s", cold_result.statistics.time_to_first_token}};
  // Printed as soon as measured, as the benchmark's other figures are.
  std::cerr << "bench: turn 10 time to first token: warm "
            << turns[9]["time_to_first_token_s"].get<double>() << " s, cold "
            << cold_result.statistics.time_to_first_token << " s" << std::endl;
  return result;
}

}  // namespace quire::cli
