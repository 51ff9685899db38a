#include "quire/engine/generator/draft_model.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

#include "quire/engine/model_error.h"
#include "quire/kernels/backend.h"

namespace quire::engine {

void check_draft_tokenizer(const Tokenizer& model, const Tokenizer& draft,
                           const std::string& model_directory, const std::string& draft_directory) {
  const std::string advice =
      "; a draft model must use the model's own tokenizer (a smaller model of the same family "
      "and version, such as a 0.5B beside a 32B)";
  if (draft.vocab_size() != model.vocab_size()) {
    throw ModelError("the draft model " + draft_directory + " has " +
                     std::to_string(draft.vocab_size()) + " tokens, the model " + model_directory +
                     " has " + std::to_string(model.vocab_size()) + advice);
  }
  for (std::int32_t id = 0; id < model.vocab_size(); ++id) {
    if (draft.token_bytes(id) == model.token_bytes(id) && draft.kind(id) == model.kind(id))
      continue;
    throw ModelError("the draft model " + draft_directory + " has another tokenizer than " +
                     model_directory + ": token " + std::to_string(id) + " is \"" +
                     draft.piece(id) + "\" there and \"" + model.piece(id) + "\" here" + advice);
  }
}

RuntimeOptions draft_runtime_options(const ModelRuntime& target) {
  RuntimeOptions options = target.options();
  options.cache_tokens =
      std::int64_t{target.cache().num_pages()} * std::int64_t{target.cache().page_size()};
  options.host_pages = 0;
  return options;
}

// One request's progress through a draft() call.
struct DraftModel::Drafting {
  const Request* request = nullptr;
  std::vector<cache::TokenRange> ranges;  // history positions still to compute
  std::vector<cache::TokenId> context;    // for a sampler's penalties: history and drafts
  DraftProposal proposal;
  bool done = false;
};

DraftModel::DraftModel(ModelRuntime& runtime, std::int64_t vocabulary)
    : runtime_(runtime), vocabulary_(vocabulary) {
  if (vocabulary_ < runtime_.model().config.vocab_size)
    runtime_.forward().mask_logits_from(vocabulary_);
}

DraftModel::~DraftModel() {
  for (const auto& [job, follower] : followers_) {
    if (runtime_.cache().contains(follower.sequence)) runtime_.cache().release(follower.sequence);
  }
}

void DraftModel::release(std::uint64_t job) {
  const auto found = followers_.find(job);
  if (found == followers_.end()) return;
  if (runtime_.cache().contains(found->second.sequence))
    runtime_.cache().release(found->second.sequence);
  followers_.erase(found);
}

void DraftModel::forget(cache::SequenceId sequence) {
  std::erase_if(followers_, [&](const auto& entry) { return entry.second.sequence == sequence; });
}

namespace {

// Saves of pages evicted to the host tier; a failed save forgets the slots.
void save_to_host(ModelRuntime& runtime, std::span<const cache::HostSave> saves) {
  try {
    runtime.storage().save_to_host(saves);
  } catch (const kernels::DeviceOutOfMemory&) {
    runtime.cache().drop_host_saves(saves);
  }
}

}  // namespace

bool DraftModel::follow(Drafting& drafting) {
  cache::PageCache& cache = runtime_.cache();
  const Request& request = *drafting.request;
  const std::span<const cache::TokenId> history = request.history;
  const auto length = static_cast<std::int32_t>(history.size());
  const auto found = followers_.find(request.job);
  if (found != followers_.end() && cache.contains(found->second.sequence)) {
    // The sequence holds the job's earlier history, computed, and the
    // drafts fed since, written but not counted. Those the job kept become
    // computed; the rest are given back.
    const cache::SequenceId sequence = found->second.sequence;
    const std::span<const cache::TokenId> held = cache.tokens(sequence);
    const std::int32_t computed = cache.computed(sequence);
    const auto common = static_cast<std::int32_t>(
        std::mismatch(held.begin(), held.end(), history.begin(), history.end()).first -
        held.begin());
    const std::int32_t keep = std::min(common, length - 1);
    if (keep >= computed) {
      if (keep > computed) cache.mark_computed(sequence, keep);
      cache.truncate(sequence, keep);
      const cache::AppendResult appended =
          cache.append(sequence, history.subspan(std::size_t(keep)));
      save_to_host(runtime_, appended.saves);
      for (const cache::SequenceId victim : appended.preempted)
        forget(victim);
      if (appended.status != cache::AppendStatus::Appended) return false;
      drafting.ranges = {{keep, length}};
      return true;
    }
    // The job's history no longer starts with what the sequence computed:
    // start over, from the cache's pages.
    release(request.job);
  } else if (found != followers_.end()) {
    followers_.erase(found);
  }

  cache::AdmissionRequest admission_request{
      std::vector<cache::TokenId>(history.begin(), history.end()), 0};
  // The last token is computed even where the cache holds it: its row is
  // the first draft's.
  admission_request.reuse_limit = length - 1;
  cache::AdmissionPlan plan = cache.prepare(std::move(admission_request));
  if (!plan.fits()) return false;
  const cache::Admission admission = cache.commit(std::move(plan));
  try {
    runtime_.storage().execute(admission.instructions);
  } catch (const kernels::DeviceOutOfMemory&) {
    cache.abandon(admission.sequence, admission.instructions);
    return false;
  }
  if (admission.compute.empty() || admission.compute.back().end != length) {
    cache.release(admission.sequence);
    return false;
  }
  Follower& follower = followers_[request.job];
  follower.sequence = admission.sequence;
  if (request.sampling && !follower.sampler) {
    SamplingSettings settings = *request.sampling;
    // Its own stream of draws, reproducible where the job's is.
    if (settings.seed) settings.seed = *settings.seed ^ 0x9e3779b97f4a7c15ULL;
    follower.sampler.emplace(settings);
  }
  drafting.ranges = admission.compute;
  return true;
}

std::optional<cache::TokenId> DraftModel::choose(Drafting& drafting, std::span<const float> row,
                                                 const ForwardPass::RowCandidates* candidates) {
  Follower& follower = followers_.at(drafting.request->job);
  if (!follower.sampler) {
    if (candidates->ids.empty() || !std::isfinite(candidates->values.front())) return std::nullopt;
    return candidates->ids.front();
  }
  cache::TokenId token = 0;
  try {
    token = follower.sampler->sample(row, drafting.context);
  } catch (const std::invalid_argument&) {
    return std::nullopt;  // a broken row drafts nothing; the model's own step says why
  }
  DraftDistribution& drawn_from = drafting.proposal.distributions.emplace_back();
  for (const SamplingCandidate& candidate : follower.sampler->last_candidates()) {
    drawn_from.ids.push_back(candidate.id);
    drawn_from.probabilities.push_back(candidate.probability);
  }
  return token;
}

std::vector<DraftProposal> DraftModel::draft(std::span<const Request> requests) {
  cache::PageCache& cache = runtime_.cache();
  const ForwardPass::Limits& limits = runtime_.forward().limits();
  std::vector<Drafting> all(requests.size());
  for (std::size_t i = 0; i < requests.size(); ++i) {
    Drafting& drafting = all[i];
    drafting.request = &requests[i];
    drafting.done = requests[i].count <= 0 || requests[i].history.empty() || !follow(drafting);
    if (!drafting.done && requests[i].sampling) {
      drafting.context.assign(requests[i].history.begin(), requests[i].history.end());
    }
  }
  // A request whose sequence the draft cache took back (to make room for
  // another) stops where it is.
  const auto sequence_of = [&](const Drafting& drafting) -> std::optional<cache::SequenceId> {
    const auto found = followers_.find(drafting.request->job);
    if (found == followers_.end() || !cache.contains(found->second.sequence)) return std::nullopt;
    return found->second.sequence;
  };

  for (;;) {
    // This pass: each request's next chunk of history, or its latest draft,
    // with the pages for it taken.
    std::vector<Drafting*> members;
    std::vector<cache::TokenRange> chunks;
    int budget = limits.max_tokens;
    for (Drafting& drafting : all) {
      if (drafting.done) continue;
      if (static_cast<int>(members.size()) >= limits.max_sequences || budget <= 0) break;
      const std::optional<cache::SequenceId> sequence = sequence_of(drafting);
      if (!sequence) {
        drafting.done = true;
        continue;
      }
      cache::TokenRange chunk;
      cache::AppendResult taken;
      if (!drafting.ranges.empty()) {
        chunk = page_aligned_chunks(drafting.ranges.front(), budget, cache.page_size()).front();
        taken = cache.ensure_pages(*sequence, chunk.end);
      } else {
        const cache::TokenId latest = drafting.proposal.tokens.back();
        const auto end = static_cast<std::int32_t>(cache.tokens(*sequence).size());
        chunk = {end, end + 1};
        taken = cache.append(*sequence, std::span(&latest, 1));
      }
      save_to_host(runtime_, taken.saves);
      for (const cache::SequenceId victim : taken.preempted)
        forget(victim);
      if (taken.status != cache::AppendStatus::Appended) {
        drafting.done = true;
        continue;
      }
      members.push_back(&drafting);
      chunks.push_back(chunk);
      budget -= chunk.end - chunk.begin;
    }
    // Taking pages may have preempted members met earlier in this pass.
    std::vector<ForwardPass::Sequence> batch;
    for (std::size_t i = 0; i < members.size(); ++i) {
      const std::optional<cache::SequenceId> sequence = sequence_of(*members[i]);
      if (!sequence) {
        members[i]->done = true;
        members.erase(members.begin() + std::ptrdiff_t(i));
        chunks.erase(chunks.begin() + std::ptrdiff_t(i));
        --i;
        continue;
      }
      const cache::TokenRange chunk = chunks[i];
      ForwardPass::CandidateRequest wanted;
      if (!members[i]->request->sampling) wanted.k = 1;  // the argmax is all a greedy draft needs
      batch.push_back({cache.page_table(*sequence),
                       cache.tokens(*sequence).subspan(std::size_t(chunk.begin),
                                                       std::size_t(chunk.end - chunk.begin)),
                       chunk.begin, false, wanted});
      batch.back().window_pages = cache.window_page_table(*sequence);
    }
    if (members.empty()) break;

    ForwardPass::Result result;
    try {
      result = runtime_.forward().run(batch);
      ++passes_;
    } catch (const kernels::DeviceOutOfMemory&) {
      // Drafts are a hint: the step goes on with what was drafted so far.
      for (Drafting* member : members) {
        if (const std::optional<cache::SequenceId> sequence = sequence_of(*member)) {
          cache.release_after_failure(*sequence);
          followers_.erase(member->request->job);
        }
        member->done = true;
      }
      runtime_.forward().graphs().invalidate();
      runtime_.backend().release_cached_memory();
      break;
    }

    for (std::size_t i = 0; i < members.size(); ++i) {
      Drafting& drafting = *members[i];
      const cache::TokenRange chunk = chunks[i];
      if (!drafting.ranges.empty()) {
        cache.mark_computed(*sequence_of(drafting), chunk.end);
        cache::TokenRange& range = drafting.ranges.front();
        range.begin = chunk.end;
        if (range.begin == range.end) drafting.ranges.erase(drafting.ranges.begin());
        if (!drafting.ranges.empty()) continue;  // more history to compute first
      }
      const bool sampled = drafting.request->sampling != nullptr;
      const std::optional<cache::TokenId> token =
          choose(drafting, sampled ? result.row(i) : std::span<const float>(),
                 sampled ? nullptr : &result.candidates[i]);
      if (!token) {
        drafting.done = true;
        continue;
      }
      drafting.proposal.tokens.push_back(*token);
      if (sampled) drafting.context.push_back(*token);
      if (static_cast<int>(drafting.proposal.tokens.size()) >= drafting.request->count)
        drafting.done = true;
    }
  }

  std::vector<DraftProposal> proposals;
  proposals.reserve(all.size());
  for (Drafting& drafting : all) {
    // History appended but not computed (the request stopped before its
    // turn) must not be taken for written K/V next time.
    const std::optional<cache::SequenceId> sequence =
        drafting.ranges.empty() ? std::nullopt : sequence_of(drafting);
    if (sequence) cache.truncate(*sequence, cache.computed(*sequence));
    proposals.push_back(std::move(drafting.proposal));
  }
  return proposals;
}

}  // namespace quire::engine
