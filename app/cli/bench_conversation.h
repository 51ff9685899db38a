#pragma once

// quire-cli bench's conversation workload: ten turns of a chat, each turn's
// time to first token with the earlier turns in the cache, and the last
// turn again on an empty cache (a freshly loaded model).

#include <nlohmann/json.hpp>
#include <string>

#include "engine_options.h"
#include "generation_options.h"

namespace quire::cli {

struct ConversationWorkload {
  std::string directory;  // the model's, loaded again for the cold turn
  EngineOptions engine;   // as the benchmark loaded it (its context set)
  int repeats = 3;
  int turn_words = 40;  // words in each user message
  int turn_reply = 48;  // tokens of each reply
};

// Runs the conversation `repeats` times, each with a system prompt of its
// own so that its first turn finds nothing cached. Returns turns (prompt and
// cached tokens of the first run, each turn's median time to first token and
// its runs), turn_1_ttft_s, turn_10_warm_ttft_s and turn_10_cold_ttft_s.
nlohmann::ordered_json measure_conversation(LoadedSession& session,
                                            const ConversationWorkload& workload);

}  // namespace quire::cli
