// Banned strings: a draw that would begin one is refused on the spot and the
// row drawn again without that token; one that completes a banned string
// begun by earlier tokens sends the reply back to where it began
// (JobRequest::banned_strings, BannedStringGuard).
//
// Going back releases the job's sequence and queues the job at the front, as
// preemption does: its full pages stay cached and are found again by their
// hashes, the open page's tokens are copied back from it where the cache
// still has it, and only the position before the banned token is computed
// again to give the row to draw from. Tokens banned at a reply index stay
// banned there until the reply goes back to an earlier index, so every
// return draws something not drawn before there and the reply moves on.

#include <algorithm>

#include "generator_job.h"
#include "quire/engine/generator/generator.h"

namespace quire::engine {

std::optional<cache::TokenId> Generator::sample_unbanned(Job& job,
                                                         const ForwardPass::Result& result,
                                                         std::size_t index) {
  std::optional<cache::TokenId> token = sample_or_end(job, result, index);
  if (job.bans.empty()) return token;
  while (token && !job.stops.is_stop_token(*token)) {
    StreamingDetokenizer trial = job.detokenizer;
    std::string piece;
    try {
      piece = trial.push(*token);
    } catch (const std::out_of_range&) {
      return token;  // accept_token ends the job with the reason
    }
    const std::optional<int> begins = job.bans.match_if_fed(job.generated, piece);
    if (!begins) return token;
    ++job.result.statistics.banned_rewinds;
    if (*begins < job.generated) {
      rewind_for_ban(job, *begins, job.result.tokens[static_cast<std::size_t>(*begins)]);
      return std::nullopt;
    }
    job.position_bans[job.generated].push_back(*token);
    token = sample_or_end(job, result, index);
  }
  return token;
}

TokenMask Generator::ban_mask(Job& job, std::int64_t vocab) {
  const auto banned = job.position_bans.find(job.generated);
  if (banned == job.position_bans.end() || banned->second.empty()) return {};
  job.ban_mask.assign(static_cast<std::size_t>((vocab + 31) / 32), ~0u);
  for (const cache::TokenId token : banned->second) {
    if (token < 0 || token >= vocab) continue;
    job.ban_mask[static_cast<std::size_t>(token) / 32] &= ~(1u << (token % 32));
  }
  return job.ban_mask;
}

void Generator::rewind_for_ban(Job& job, int index, cache::TokenId token) {
  job.position_bans.erase(job.position_bans.upper_bound(index), job.position_bans.end());
  job.position_bans[index].push_back(token);
  job.bans.rewind(index);
  job.result.tokens.resize(static_cast<std::size_t>(index));
  job.generated = index;
  // The detokenizer's state after the kept tokens: their text is out
  // already (streamed, or still held by the guard), so what pushing them
  // returns again is dropped.
  job.detokenizer = StreamingDetokenizer(tokenizer_, !job.request.special_tokens_in_text);
  for (const cache::TokenId kept : job.result.tokens)
    (void)job.detokenizer.push(kept);
  job.tokens.assign(job.request.prompt.begin(), job.request.prompt.end());
  job.tokens.insert(job.tokens.end(), job.result.tokens.begin(), job.result.tokens.end());
  job.pending.reset();
  job.ranges.clear();
  job.verifying.clear();
  job.drafted_from.clear();
  if (job.sequence) {
    runtime_.cache().release(*job.sequence);
    by_sequence_.erase(*job.sequence);
    job.sequence.reset();
  }
  const auto running =
      std::find_if(running_.begin(), running_.end(),
                   [&](const std::unique_ptr<Job>& held) { return held.get() == &job; });
  if (running == running_.end()) return;
  queue_.push_front(std::move(*running));
  running_.erase(running);
}

}  // namespace quire::engine
