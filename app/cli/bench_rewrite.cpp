// quire-cli bench's rewrite workload: see bench_rewrite.h.

#include "bench_rewrite.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <vector>

#include "cli_support.h"
#include "conversation_runner.h"
#include "draft_option.h"

namespace quire::cli {
namespace {

// A function as people write it, and the change asked for: the reply should
// be the same function with one name replaced throughout.
constexpr const char* kRewriteRequest =
    R"(Rename the variable `total` to `sum` in this function and give the whole function back, unchanged otherwise.

```cpp
// Splits `text` into lines and returns the length of the longest line,
// counting a tab as four columns.
int longest_line(const std::string& text) {
  int total = 0;
  int longest = 0;
  for (const char c : text) {
    if (c == '\n') {
      longest = std::max(longest, total);
      total = 0;
    } else if (c == '\t') {
      total += 4;
    } else {
      total += 1;
    }
  }
  longest = std::max(longest, total);
  return longest;
}

// Counts the lines of `text` that are longer than `limit` columns.
int lines_over(const std::string& text, int limit) {
  int total = 0;
  int over = 0;
  for (const char c : text) {
    if (c == '\n') {
      if (total > limit) over += 1;
      total = 0;
    } else {
      total += c == '\t' ? 4 : 1;
    }
  }
  if (total > limit) over += 1;
  return over;
}
```)";

}  // namespace

std::string rewrite_message(const std::string& prompt_file) {
  if (prompt_file.empty()) return kRewriteRequest;
  std::string text = read_text_file(prompt_file, "--prompt-file");
  if (text.find_first_not_of(" \t\r\n") == std::string::npos) {
    throw UsageError("--prompt-file " + prompt_file + " is empty; give a prompt to rewrite");
  }
  return text;
}

nlohmann::ordered_json measure_rewrite(LoadedSession& session, const RewriteWorkload& workload) {
  const std::string message = rewrite_message(workload.prompt_file);
  engine::Conversation conversation(choose_format(workload.directory, "auto"), *session.tokenizer);
  const std::vector<std::int32_t> prompt = conversation.begin_turn(message);
  std::vector<double> rates;
  std::int64_t generated = 0, drafted = 0, accepted = 0;
  for (int run = 0; run < workload.repeats; ++run) {
    engine::JobRequest request;
    request.prompt = prompt;
    request.sampling = engine::SamplingSettings::greedy_settings();
    request.stop_at_eos = false;
    request.max_new_tokens = workload.tokens;
    request.draft = workload.draft;
    engine::JobResult result;
    request.on_done = [&](const engine::JobResult& done) { result = done; };
    session.generator->submit(std::move(request));
    session.generator->run_until_idle();
    if (result.stop_reason == engine::StopReason::Error) throw UsageError(result.error);
    rates.push_back(result.statistics.decode_tokens_per_second());
    generated += result.statistics.generated_tokens;
    drafted += result.statistics.drafted_tokens;
    accepted += result.statistics.accepted_tokens;
  }
  std::vector<double> sorted = rates;
  std::sort(sorted.begin(), sorted.end());
  nlohmann::ordered_json entry{{"prompt_tokens", prompt.size()},
                               {"generated_tokens", workload.tokens},
                               {"tokens_per_s", sorted[sorted.size() / 2]},
                               {"runs_tokens_per_s", rates}};
  add_draft_fields(entry, generated, drafted, accepted);
  return entry;
}

void add_draft_fields(nlohmann::ordered_json& entry, std::int64_t generated, std::int64_t drafted,
                      std::int64_t accepted) {
  engine::JobStatistics together;
  together.generated_tokens = generated;
  together.drafted_tokens = drafted;
  together.accepted_tokens = accepted;
  const DraftFigures figures = draft_figures(together);
  entry["drafted_tokens"] = figures.drafted;
  entry["accepted_tokens"] = figures.accepted;
  entry["acceptance_rate"] = figures.acceptance_rate;
  entry["tokens_per_step"] = figures.tokens_per_step;
}

std::string draft_text(const nlohmann::ordered_json& entry) {
  if (entry.value("drafted_tokens", std::int64_t{0}) == 0) return {};
  char text[96];
  std::snprintf(text, sizeof text, ", %d%% of drafts accepted, %.1f tokens per step",
                static_cast<int>(std::lround(100.0 * entry["acceptance_rate"].get<double>())),
                entry["tokens_per_step"].get<double>());
  return text;
}

}  // namespace quire::cli
