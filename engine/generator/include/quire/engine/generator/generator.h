#pragma once

#include <chrono>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "quire/engine/generator/job.h"
#include "quire/engine/runtime/model_runtime.h"
#include "quire/engine/tokenizer/streaming_detokenizer.h"
#include "quire/engine/tokenizer/tokenizer.h"

namespace quire::engine {

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
  // Tokens sampled since the generator was made, over all jobs: the memory
  // panel's tokens-per-second chart differentiates it between snapshots.
  std::int64_t sampled_tokens() const { return sampled_tokens_; }
  // Seconds spent in steps that sampled a token: with sampled_tokens, the
  // speed while generating, which idle time between replies does not dilute.
  double generating_seconds() const { return generating_seconds_; }
  const SamplingCounters& sampling_counters() const { return sampling_counters_; }
  // The label of the job that holds a sequence, for the page map.
  std::string label_of(cache::SequenceId sequence) const;

  ModelRuntime& runtime() { return runtime_; }
  const GeneratorConfig& config() const { return config_; }

 private:
  using Clock = std::chrono::steady_clock;
  struct Job;

  void drop_cancelled();
  void admit();
  bool try_admit(Job& job, cache::AdmissionStatus& status, std::string& reason);
  void preempted(cache::SequenceId sequence);
  bool accept_token(Job& job, cache::TokenId token);
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
  // The token for a job whose row `index` of `result` was computed in this step.
  cache::TokenId sample(Job& job, const ForwardPass::Result& result, std::size_t index);

  ModelRuntime& runtime_;
  const Tokenizer& tokenizer_;
  GeneratorConfig config_;
  JobId next_id_ = 1;
  std::deque<std::unique_ptr<Job>> queue_;
  std::vector<std::unique_ptr<Job>> running_;
  std::map<cache::SequenceId, Job*> by_sequence_;
  bool maintained_ = true;
  std::int64_t sampled_tokens_ = 0;
  double generating_seconds_ = 0;
  SamplingCounters sampling_counters_;
  std::vector<float> fetched_row_;
};

}  // namespace quire::engine
