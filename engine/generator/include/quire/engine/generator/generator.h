#pragma once

#include <chrono>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "quire/engine/generator/job.h"
#include "quire/engine/grammar/token_vocabulary.h"
#include "quire/engine/runtime/model_runtime.h"
#include "quire/engine/tokenizer/streaming_detokenizer.h"
#include "quire/engine/tokenizer/tokenizer.h"

namespace quire::engine {

class DraftModel;

struct GeneratorConfig {
  // Running jobs at once; 0: as many as the runtime's steps hold (one slot
  // stays free for a prefill).
  int max_batch_size = 0;
  // Tokens per step, decode tokens and prefill chunks together (prefill chunks
  // end on page boundaries); 0: the runtime's step size.
  int max_step_tokens = 0;
  // A waiting job may be overtaken by later ones this many times; then the
  // queue waits for it.
  int max_skips = 4;
  bool defragment_when_idle = true;
  // How sampling reads the logits. Whole rows cross to the host every step;
  // candidates (the highest logits and a few numbers per row, computed where
  // the logits are) decide most rows exactly, and the rest fetch their row
  // (Sampler::sample_from_candidates). Automatic: candidates unless the
  // backend's memory is the host's, where the row costs nothing to read.
  enum class Logits { Automatic, WholeRows, Candidates };
  Logits logits = Logits::Automatic;
};

// How often the candidate path decided, over all jobs.
struct SamplingCounters {
  std::int64_t from_candidates = 0;  // rows decided from their candidates
  std::int64_t row_fetches = 0;      // rows the candidates left undecided
};

// What the generator did when a step ran out of device memory. A step whose
// forward pass throws kernels::DeviceOutOfMemory is not lost: the backend
// frees its cached workspaces and the step runs again; if it fails again,
// the most recently admitted jobs go back to the queue (their pages stay
// cached) and the step runs with fewer, down to one; then, where that frees
// enough, the cache's pages move to host memory for good
// (ModelRuntime::offload_cache) and the step runs again; a job that fails
// even so ends with StopReason::Error and says why. Front ends read this to
// tell the user once.
struct MemoryRecoveries {
  // In the order they are tried; a later one is the more serious.
  enum class Action {
    None,
    Retried,         // the same step ran again after the backend freed its workspaces
    RanFewer,        // jobs went back to the queue so that fewer run at once
    OffloadedCache,  // the cache moved to host memory; replies go on, slower
    EndedJob,        // a job that failed even alone ended with an error
  };
  std::int64_t steps = 0;           // steps that ran short and went on
  std::int64_t retries = 0;         // forward passes run again
  std::int64_t preempted_jobs = 0;  // jobs sent back to the queue
  std::int64_t ended_jobs = 0;      // jobs ended because they did not fit alone
  bool cache_offloaded = false;     // the cache moved to host memory (it stays there)
  // Defragmentations whose page moves failed; their pages forgot their content.
  std::int64_t failed_defragmentations = 0;
  // The latest step that ran short: the most that had to be done, where, and
  // all of it in one line for people.
  Action last_action = Action::None;
  int device = -1;
  std::string device_name;
  std::string last;
};

// Runs many jobs over one model: admits them in order (bounded overtaking),
// prefills new tokens in chunks while every running job decodes in the same
// step (continuous batching), reuses cached pages by hash, preempts and
// resumes jobs when pages run out (on-demand reservation), streams text, and
// defragments the cache when idle. Single-threaded: one thread calls
// submit/cancel/step, and the callbacks run on it.
class Generator {
 public:
  Generator(ModelRuntime& runtime, const Tokenizer& tokenizer, GeneratorConfig config = {});
  ~Generator();

  // Queues a job. A job that can never fit ends at the next step with
  // StopReason::Error and the cache's explanation.
  JobId submit(JobRequest request);
  // Queues `count` replies to one prompt ("show me 3 replies", the OpenAI
  // API's `n`), each a job of its own with the request's callbacks, which
  // tell them apart by id or by JobResult::alternative. The prompt is
  // computed once: the first job prefills it, and at its end the others
  // branch off its sequence (PageCache::branch: its pages shared, its open
  // page copied) and draw their first token from the same logits; then all
  // decode in the same steps. Reply i samples with seed request.sampling.seed
  // + i (each draws its own where the request has none), so it equals a lone
  // job with that seed. A reply that cannot branch then (no page or batch
  // slot free, or the first ended early) is admitted as usual, reusing the
  // prompt's pages by hash. Returns the ids, in order.
  std::vector<JobId> submit_alternatives(JobRequest request, int count);
  // Ends a job at the next step boundary (StopReason::Cancelled); unknown or
  // finished ids are ignored.
  void cancel(JobId id);

  // One step: cancellations, admissions, one forward pass over the batch,
  // sampling and streaming. Returns whether work remains.
  bool step();
  void run_until_idle();

  bool idle() const { return queue_.empty() && running_.empty(); }
  std::size_t queued() const { return queue_.size(); }
  std::size_t running() const { return running_.size(); }
  // Whether job `id` is in the batch now: admitted, not waiting in the queue
  // nor ended (a cancelled job is until the next step).
  bool is_running(JobId id) const;
  // Tokens sampled since the generator was made, over all jobs: the memory
  // panel's tokens-per-second chart differentiates it between snapshots.
  std::int64_t sampled_tokens() const { return sampled_tokens_; }
  // Seconds spent in steps that sampled a token: with sampled_tokens, the
  // speed while generating, which idle time between replies does not dilute.
  double generating_seconds() const { return generating_seconds_; }
  const SamplingCounters& sampling_counters() const { return sampling_counters_; }
  const MemoryRecoveries& memory_recoveries() const { return memory_; }
  // Jobs that may run at once: the configured batch size, or fewer for a
  // while after memory ran short.
  int batch_limit() const;
  // The label of the job that holds a sequence, for the page map.
  std::string label_of(cache::SequenceId sequence) const;

  ModelRuntime& runtime() { return runtime_; }
  const GeneratorConfig& config() const { return config_; }

  // The draft model for jobs that draft with one (DraftSettings::Method::
  // Model), or null for none; the caller keeps it alive while it is set.
  // Submitting such a job without one throws std::invalid_argument;
  // changing it while such a job runs throws std::logic_error.
  void set_draft_model(DraftModel* draft);
  DraftModel* draft_model() const { return draft_model_; }

 private:
  using Clock = std::chrono::steady_clock;
  struct Job;

  void drop_cancelled();
  void admit();
  bool try_admit(Job& job, cache::AdmissionStatus& status, std::string& reason);
  void preempted(cache::SequenceId sequence);
  // At the first token of `leader`, sampled from row `index` of `result`:
  // its waiting alternatives branch off its sequence and sample from the
  // same row (generator_alternatives.cpp).
  void branch_alternatives(Job& leader, const ForwardPass::Result& result, std::size_t index);
  // The leader's waiting alternatives are admitted as ordinary jobs.
  void release_alternatives(Job& leader);
  bool accept_token(Job& job, cache::TokenId token);
  // Speculative decoding (generator_drafts.cpp). The drafts of this step's
  // decoding jobs, at most `limit` each, with the drafter's distributions
  // when it has them; none for a job that does not draft, or pauses
  // drafting (DraftLength). Jobs that draft with the draft model draft
  // together.
  std::map<const Job*, DraftProposal> draft_all(
      int limit);  // The most tokens each decoding job may draft this step, so that the step
  // keeps within its tokens and rows of logits.
  int draft_limit() const;
  // After a step that verified `job`'s drafts (row `index` of `result`):
  // keeps the drafts the model confirms (greedy: its own choices; sampled:
  // speculative sampling's rejection rule), gives back the rest, and accepts
  // the tokens in order as a step without drafts would have.
  // `index`: the job's first sequence in the pass; `split`: it verified its
  // tokens as sequences of one token each, else as one sequence.
  void accept_drafted(Job& job, const ForwardPass::Result& result, std::size_t index, bool split);
  // Whether drafts are verified as single-token sequences rather than as
  // one chunk of decode rows (both exact on the CPU: each row is computed
  // as a decode step's); a chunk where the residual window, pages in host
  // memory or FP8 pages (ForwardPass::rewind) need one sequence per job.
  bool split_verification() const;
  void finish(Job& job, StopReason reason, std::string error = {});
  void maintain_when_idle();
  bool use_candidates() const;
  // This step's prefill chunks, within the token budget left by `decoding`,
  // with their pages taken; jobs preempted meanwhile leave `decoding`.
  struct Prefill {
    Job* job;
    cache::TokenRange chunk;
  };
  std::vector<Prefill> take_prefill_pages(std::vector<Job*>& decoding);
  // Images (generator_images.cpp). Throws std::invalid_argument naming what
  // request.prompt does not hold as request.images says.
  void check_images(const JobRequest& request) const;
  // `chunk` of `job`'s prompt ended where it would cut an image that
  // attends both ways: before the image, or after it when the rest of the
  // image fits `budget`; nothing when it must wait for a larger budget.
  std::optional<cache::TokenRange> image_chunk(const Job& job, cache::TokenRange chunk,
                                               int budget) const;
  // The embedding rows and both-ways ranges of `job`'s images in `chunk`
  // given to `sequence`, running an image's embed() the first time it is
  // needed. Throws what embed() throws, or std::runtime_error for rows of
  // the wrong size.
  void give_images(Job& job, cache::TokenRange chunk, ForwardPass::Sequence& sequence);
  // M-RoPE (generator_rope.cpp). For a model whose rotary positions are
  // M-RoPE and a prompt with images, each prompt token's (t, h, w) ids as
  // transformers' get_rope_index numbers them, over the whole prompt (a
  // prefix found in the cache leaves the rest's ids unchanged), and the
  // delta of the tokens after it. Throws std::invalid_argument for an image
  // whose grid does not hold its positions.
  void plan_rope_positions(Job& job) const;
  // The rotary ids of the positions `chunk` of `job` computes, given to
  // `sequence`; nothing where they equal the slots.
  void give_rope_positions(Job& job, cache::TokenRange chunk, ForwardPass::Sequence& sequence);
  // The token for a job whose row `index` of `result` was computed in this step.
  cache::TokenId sample(Job& job, const ForwardPass::Result& result, std::size_t index);
  // sample(), or nothing when it failed: the job has then ended with the
  // error, and the caller moves on to the next one.
  std::optional<cache::TokenId> sample_or_end(Job& job, const ForwardPass::Result& result,
                                              std::size_t index);
  // Banned strings (generator_bans.cpp). sample_or_end(), drawing the row
  // again while the token would begin a banned string right there; nothing
  // when the job ended or went back to an earlier token (rewind_for_ban).
  std::optional<cache::TokenId> sample_unbanned(Job& job, const ForwardPass::Result& result,
                                                std::size_t index);
  // The mask for the job's next draw: every token but those banned at its
  // reply index; empty when none is.
  TokenMask ban_mask(Job& job, std::int64_t vocab);
  // Takes the reply back to before reply index `index`, where `token` began
  // a banned string and is banned from now on. The job leaves its pages
  // (they stay cached) and goes back to the front of the queue, to compute
  // again the position before `index` and draw there.
  void rewind_for_ban(Job& job, int index, cache::TokenId token);

  // One step's forward pass: a sequence per member job, with the positions
  // it computes.
  // A member has one sequence of the pass, or one per token when it
  // verifies drafts as single tokens (generator_drafts.cpp); first[i] is
  // member i's first, the rest follow it.
  struct StepBatch {
    std::vector<ForwardPass::Sequence> sequences;
    std::vector<Job*> members;
    std::vector<cache::TokenRange> chunks;
    std::vector<std::size_t> first;
    // Member i's sequences: [first[i], end(i)).
    std::size_t end(std::size_t i) const {
      return i + 1 < first.size() ? first[i + 1] : sequences.size();
    }
  };
  // Runs the pass, recovering from DeviceOutOfMemory as MemoryRecoveries
  // says (generator_memory.cpp); members that leave the step leave `step`.
  // Nothing when no member is left.
  std::optional<ForwardPass::Result> run_pass(StepBatch& step);
  // Sends the youngest running jobs back to the queue until at most `keep`
  // members of the step are left.
  void run_fewer(StepBatch& step, std::size_t keep);
  // The next source of memory after the backend's workspaces and fewer jobs
  // at once, for the shortage `error` reports; false when there is none.
  bool free_more_memory(const kernels::DeviceOutOfMemory& error);
  // After a step that did not run short: the batch limit grows back.
  void calm_step();
  // The storage work of admitting `job` ran out of memory and the admission
  // was undone: true when the job should end (memory_.last says why)
  // rather than wait in the queue to be admitted again.
  bool admission_failed(Job& job, const kernels::DeviceOutOfMemory& error);
  // Saves of evicted pages to the host tier; ones that fail are forgotten,
  // as if the pages had been evicted without a save.
  void save_evicted(const cache::AppendResult& taken);
  // The row `index` of `result` into fetched_row_, run again once after the
  // backend frees its workspaces; a second shortage is thrown.
  void fetch_row(const ForwardPass::Result& result, std::size_t index);
  // Why a job ends whose row could not be fetched even so.
  std::string row_fetch_failed(const kernels::DeviceOutOfMemory& error);
  // Notes a shortage outside the forward pass and frees what the backend caches.
  void ran_short(const kernels::DeviceOutOfMemory& error);
  std::string device_name(int device) const;

  ModelRuntime& runtime_;
  const Tokenizer& tokenizer_;
  DraftModel* draft_model_ = nullptr;
  GeneratorConfig config_;
  JobId next_id_ = 1;
  std::deque<std::unique_ptr<Job>> queue_;
  std::vector<std::unique_ptr<Job>> running_;
  std::map<cache::SequenceId, Job*> by_sequence_;
  bool maintained_ = true;
  std::int64_t sampled_tokens_ = 0;
  double generating_seconds_ = 0;
  SamplingCounters sampling_counters_;
  MemoryRecoveries memory_;
  // Jobs at once since memory last ran short (0: no limit beyond the
  // configuration), and the steps that ran well since it was last raised.
  int memory_batch_limit_ = 0;
  int calm_steps_ = 0;
  std::vector<float> fetched_row_;
  // The tokenizer's vocabulary as the grammars see it, built at the first
  // constrained job and shared by all.
  std::shared_ptr<const grammar::TokenVocabulary> vocabulary_;
};

}  // namespace quire::engine
