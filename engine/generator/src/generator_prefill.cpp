// The prefill side of a step: which prompt chunks join it, with their pages.

#include "generator_job.h"
#include "quire/engine/generator/generator.h"

namespace quire::engine {

std::vector<Generator::Prefill> Generator::take_prefill_pages(std::vector<Job*>& decoding) {
  cache::PageCache& cache = runtime_.cache();
  std::vector<Prefill> prefills;
  // With a sliding window a prefill's pages are taken as it reaches them; on
  // demand that may preempt jobs, which leave the step, so the choice is made
  // again without them.
  for (bool settled = false; !settled;) {
    settled = true;
    prefills.clear();
    int budget = config_.max_step_tokens;
    for (const Job* job : decoding)
      budget -= std::max<int>(1, static_cast<int>(job->verifying.size()));
    for (const auto& job : running_) {
      if (job->ranges.empty() || budget <= 0 || !job->sequence) continue;
      const std::optional<cache::TokenRange> cut = image_chunk(
          *job, page_aligned_chunks(job->ranges.front(), budget, cache.page_size()).front(),
          budget);
      if (!cut) continue;  // an image that attends both ways waits for room
      const cache::TokenRange chunk = *cut;
      const cache::AppendResult taken = cache.ensure_pages(*job->sequence, chunk.end);
      save_evicted(taken);
      if (taken.status == cache::AppendStatus::NoSpace) {
        finish(*job, StopReason::Error,
               "the cache has no page left for this prompt; it holds " +
                   std::to_string(cache.num_pages() * cache.page_size()) + " tokens");
        settled = false;
        break;
      }
      if (!taken.preempted.empty()) {
        for (const cache::SequenceId victim : taken.preempted)
          preempted(victim);
        settled = false;
        break;
      }
      prefills.push_back({job.get(), chunk});
      budget -= chunk.end - chunk.begin;
    }
    if (!settled) {
      std::erase_if(decoding, [](const Job* job) { return !job->sequence; });
      std::erase_if(running_, [](const std::unique_ptr<Job>& job) { return !job->sequence; });
    }
  }
  return prefills;
}

}  // namespace quire::engine
