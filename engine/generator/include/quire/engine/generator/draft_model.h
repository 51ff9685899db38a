#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "quire/cache/types.h"
#include "quire/engine/generator/draft_proposal.h"
#include "quire/engine/generator/sampler.h"
#include "quire/engine/runtime/model_runtime.h"
#include "quire/engine/tokenizer/tokenizer.h"

namespace quire::engine {

// Refuses a draft model whose tokenizer is not the model's: the drafts are
// token ids, so the two must mean the same text by every id. Throws
// ModelError naming the draft's directory, the first id that differs and
// what to use instead.
void check_draft_tokenizer(const Tokenizer& model, const Tokenizer& draft,
                           const std::string& model_directory, const std::string& draft_directory);

// The options a draft model runs with beside `target`: the same cache
// coding, pages, sequences, step size and placement policy, and room for as
// many tokens as the target's cache, so that every chat the target caches
// the draft can cache too (a draft's pages are a fraction of the target's).
// No host tier of its own.
RuntimeOptions draft_runtime_options(const ModelRuntime& target);

// A smaller model with the model's tokenizer that drafts for jobs
// (DraftSettings::Method::Model). Each drafting job has a sequence of its
// own in the draft model's paged cache, admitted like any prompt, so the
// pages of a chat's earlier turns (and of a system prompt other chats
// share) are found by their hashes instead of being computed again. The
// sequence follows the job: before drafting, it computes what the job
// accepted since the last step (the whole prompt the first time, less what
// the cache has), then decodes the drafts one token a pass, every drafting
// job in the same passes.
//
// Drafted tokens are fed back to draft the next one, so their K/V are in
// the sequence's pages, but they count as computed only once the job has
// accepted them: a rejected draft is given back (PageCache::truncate) and
// never sealed into a page that others could share.
//
// Drafting is a hint: where the draft cache has no page left, a pass runs
// out of memory, or the draft model fails, the job gets fewer drafts (or
// none) for that step and decodes as usual. Single-threaded, like Generator.
class DraftModel {
 public:
  // `runtime`: the draft model, loaded (planned against what the model left
  // free, so a draft that does not fit is refused before its weights are
  // read); the caller keeps it alive. Drafts are ids below `vocabulary`
  // (the tokenizer's), whatever rows the draft's embedding pads.
  DraftModel(ModelRuntime& runtime, std::int64_t vocabulary);
  ~DraftModel();
  DraftModel(const DraftModel&) = delete;
  DraftModel& operator=(const DraftModel&) = delete;

  struct Request {
    std::uint64_t job = 0;                    // Generator's JobId
    std::span<const cache::TokenId> history;  // the job's tokens, the last not yet computed
    int count = 0;                            // drafts wanted
    // Sampled jobs: the job's settings, so that drafts are drawn as the
    // job draws (the draft's own sampler, seeded from the settings' seed).
    // Null: greedy drafts (the draft model's argmax).
    const SamplingSettings* sampling = nullptr;
  };
  // Up to `count` drafts per request, in order; for a sampled request,
  // with the distribution each was drawn from.
  std::vector<DraftProposal> draft(std::span<const Request> requests);
  // The job ended: its sequence is released, its pages stay cached.
  void release(std::uint64_t job);

  ModelRuntime& runtime() { return runtime_; }
  // Draft-model forward passes run, over all jobs.
  std::int64_t passes() const { return passes_; }

 private:
  struct Drafting;
  struct Follower {
    cache::SequenceId sequence = 0;
    std::optional<Sampler> sampler;
  };
  // Brings the job's sequence to `history` less its last token computed:
  // admitted, or cut back to what the job kept and extended. The
  // positions still to compute go into `drafting`. False where the draft
  // cache cannot hold it now.
  bool follow(Drafting& drafting);
  void forget(cache::SequenceId sequence);
  // The draft after a row of logits for a request; nothing for a row that
  // allows no token.
  std::optional<cache::TokenId> choose(Drafting& drafting, std::span<const float> row,
                                       const ForwardPass::RowCandidates* candidates);

  ModelRuntime& runtime_;
  std::int64_t vocabulary_;
  std::map<std::uint64_t, Follower> followers_;
  std::int64_t passes_ = 0;
};

}  // namespace quire::engine

namespace quire::engine {

// A draft model opened beside `target`: its directory read, its tokenizer
// checked against the model's (check_draft_tokenizer), planned against what
// the model left free (draft_runtime_options; a draft that does not fit is
// refused before its weights are read) and loaded. Throws ModelError naming
// the directory and what to do.
class LoadedDraftModel {
 public:
  LoadedDraftModel(const std::filesystem::path& directory, ModelRuntime& target,
                   const Tokenizer& tokenizer, kernels::Backend& backend);
  ~LoadedDraftModel();

  DraftModel& drafter() { return *drafter_; }
  ModelRuntime& runtime() { return *runtime_; }
  const ModelDescription& description() const { return *description_; }

 private:
  std::shared_ptr<const ModelDescription> description_;
  std::unique_ptr<ModelRuntime> runtime_;
  std::unique_ptr<DraftModel> drafter_;
};

}  // namespace quire::engine
