// Several replies to one prompt: the first job computes the prompt, the
// others branch off its sequence when its first token is sampled, so the
// prompt's K/V and its last row of logits are computed once for all of them.

#include <algorithm>
#include <stdexcept>
#include <utility>

#include "generator_job.h"
#include "quire/engine/generator/generator.h"
#include "quire/kernels/backend.h"

namespace quire::engine {

std::vector<JobId> Generator::submit_alternatives(JobRequest request, int count) {
  if (count < 1) {
    throw std::invalid_argument("a request for " + std::to_string(count) +
                                " replies; ask for at least one");
  }
  std::vector<JobId> ids;
  Job* leader = nullptr;
  for (int i = 0; i < count; ++i) {
    JobRequest alternative = i + 1 < count ? request : std::move(request);
    if (alternative.sampling.seed) *alternative.sampling.seed += static_cast<std::uint64_t>(i);
    ids.push_back(submit(std::move(alternative)));
    Job& job = *queue_.back();
    job.result.alternative = i;
    if (!leader) {
      leader = &job;
    } else {
      job.leader = leader->id;
      leader->followers.push_back(job.id);
    }
  }
  return ids;
}

void Generator::release_alternatives(Job& leader) {
  for (const JobId id : std::exchange(leader.followers, {})) {
    for (auto& job : queue_) {
      if (job->id != id) continue;
      job->leader.reset();
      job->skips = 0;
    }
  }
}

void Generator::branch_alternatives(Job& leader, const ForwardPass::Result& result,
                                    std::size_t index) {
  cache::PageCache& cache = runtime_.cache();
  const std::vector<JobId> followers = leader.followers;
  release_alternatives(leader);
  for (const JobId id : followers) {
    auto it = std::find_if(queue_.begin(), queue_.end(),
                           [&](const std::unique_ptr<Job>& job) { return job->id == id; });
    if (it == queue_.end() || (*it)->cancelled) continue;
    if (static_cast<int>(running_.size()) >= batch_limit()) return;  // the rest wait their turn
    Job& job = **it;
    const int remaining = job.request.max_new_tokens - job.generated;
    const std::optional<cache::Admission> branch =
        cache.branch({*leader.sequence, static_cast<std::int32_t>(job.tokens.size()), remaining});
    if (!branch) continue;  // admitted as usual once pages free up
    try {
      // A branch shares or copies what it reuses: nothing comes from disk.
      [[maybe_unused]] const bool complete = runtime_.execute(branch->instructions);
    } catch (const kernels::DeviceOutOfMemory& error) {
      cache.abandon(branch->sequence, branch->instructions);
      ran_short(error);
      continue;
    }
    job.sequence = branch->sequence;
    by_sequence_[branch->sequence] = &job;
    job.admitted_once = true;
    job.admitted = leader.admitted;
    JobStatistics& stats = job.result.statistics;
    stats.queue_seconds = leader.result.statistics.queue_seconds;
    stats.cached_tokens = branch->cached_tokens;
    stats.computed_tokens = stats.prompt_tokens - branch->cached_tokens;
    running_.push_back(std::move(*it));
    queue_.erase(it);

    // The leader's row was asked for with its sampler's wants, which differ
    // from this one's only in the seed.
    job.adjusted = leader.adjusted;
    if (const std::optional<cache::TokenId> token = sample_unbanned(job, result, index)) {
      accept_token(job, *token);
    }
  }
}

}  // namespace quire::engine
