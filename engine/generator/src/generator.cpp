#include "quire/engine/generator/generator.h"

#include <algorithm>
#include <future>
#include <stdexcept>

#include "generator_job.h"
#include "quire/engine/generator/draft_model.h"
#include "quire/engine/generator/vocabulary_check.h"
#include "quire/kernels/backend.h"

namespace quire::engine {

namespace {

double seconds(std::chrono::steady_clock::duration duration) {
  return std::chrono::duration<double>(duration).count();
}

}  // namespace

Generator::Generator(ModelRuntime& runtime, const Tokenizer& tokenizer, GeneratorConfig config)
    : runtime_(runtime), tokenizer_(tokenizer), config_(config) {
  check_tokenizer_fits_model(tokenizer_, runtime_.model());
  // Rows of a padded embedding have no token to stand for: never sample them.
  runtime_.forward().mask_logits_from(tokenizer_.vocab_size());
  const ForwardPass::Limits& limits = runtime_.forward().limits();
  if (config_.max_batch_size == 0) config_.max_batch_size = std::max(1, limits.max_sequences - 1);
  if (config_.max_step_tokens == 0) config_.max_step_tokens = limits.max_tokens;
  if (config_.max_batch_size < 1 || config_.max_batch_size > limits.max_sequences - 1) {
    throw std::invalid_argument("the generator's batch size must lie between 1 and " +
                                std::to_string(limits.max_sequences - 1) +
                                " (the runtime's sequences per step, less one for a prefill)");
  }
  if (config_.max_step_tokens < config_.max_batch_size + 1 ||
      config_.max_step_tokens > limits.max_tokens) {
    throw std::invalid_argument("the generator's tokens per step must lie between " +
                                std::to_string(config_.max_batch_size + 1) + " and " +
                                std::to_string(limits.max_tokens));
  }
}

Generator::~Generator() = default;

JobId Generator::submit(JobRequest request) {
  std::vector<cache::TokenId> eos_tokens;
  if (request.stop_at_eos) eos_tokens = tokenizer_.eos();
  std::unique_ptr<TokenConstraint> constraint;
  if (request.grammar) {
    if (!vocabulary_) vocabulary_ = grammar::TokenVocabulary::from_tokenizer(tokenizer_);
    std::vector<std::int32_t> end_tokens = eos_tokens;
    end_tokens.insert(end_tokens.end(), request.stop_tokens.begin(), request.stop_tokens.end());
    constraint = std::make_unique<TokenConstraint>(request.grammar, vocabulary_,
                                                   std::move(end_tokens), request.grammar_triggers);
  }
  if (request.grammar && std::any_of(request.banned_strings.begin(), request.banned_strings.end(),
                                     [](const std::string& text) { return !text.empty(); })) {
    throw std::invalid_argument(
        "banned strings cannot be combined with a response format or a strict tool: the "
        "grammar decides the reply's text; leave one of them out");
  }
  check_images(request);
  if (!request.images.empty()) request.draft.method = DraftSettings::Method::Off;
  if (request.draft.method != DraftSettings::Method::Off) validate(request.draft);
  if (request.draft.method == DraftSettings::Method::Model && !draft_model_) {
    throw std::invalid_argument("this request drafts with a draft model, but none is loaded");
  }
  auto job =
      std::make_unique<Job>(next_id_++, std::move(request), tokenizer_, std::move(eos_tokens));
  plan_rope_positions(*job);
  job->constraint = std::move(constraint);
  const SamplingSettings& sampling = job->request.sampling;
  if (sampling.dry_on() && !sampling.dry_sequence_breakers.empty()) {
    // DRY's breakers are strings; the sampler matches tokens, those whose
    // text contains one (the vocabulary's bytes, as a grammar sees them).
    if (!vocabulary_) vocabulary_ = grammar::TokenVocabulary::from_tokenizer(tokenizer_);
    const grammar::TokenVocabulary& vocabulary = *vocabulary_;
    job->sampler.set_dry_breaker_tokens(
        dry_breaker_tokens(sampling.dry_sequence_breakers, vocabulary.size(),
                           [&vocabulary](std::int32_t id) { return vocabulary.bytes(id); }));
  }
  if (job->request.draft.method == DraftSettings::Method::Ngram)
    job->drafter.emplace(job->request.draft.ngram);
  if (job->request.draft.method != DraftSettings::Method::Off)
    job->draft_length.emplace(job->request.draft.max_tokens);
  job->result.id = job->id;
  job->result.statistics.prompt_tokens = static_cast<std::int64_t>(job->tokens.size());
  const JobId id = job->id;
  queue_.push_back(std::move(job));
  maintained_ = false;
  return id;
}

void Generator::cancel(JobId id) {
  for (auto& job : queue_) {
    if (job->id == id) job->cancelled = true;
  }
  for (auto& job : running_) {
    if (job->id == id) job->cancelled = true;
  }
}

std::string Generator::label_of(cache::SequenceId sequence) const {
  auto found = by_sequence_.find(sequence);
  return found == by_sequence_.end() ? std::string() : found->second->request.label;
}

void Generator::finish(Job& job, StopReason reason, std::string error) {
  release_alternatives(job);
  job.verifying.clear();
  job.drafted_from.clear();
  if (draft_model_ && job.request.draft.method == DraftSettings::Method::Model)
    draft_model_->release(job.id);
  if (job.sequence) {
    runtime_.cache().release(*job.sequence);
    by_sequence_.erase(*job.sequence);
    job.sequence.reset();
  }
  // Text held back for a possible stop string turned out to be plain text.
  std::string tail = job.detokenizer.flush();
  std::string rest = job.stops.finish(job.bans.finish(tail));
  if (reason != StopReason::StopString && !rest.empty()) {
    job.result.text += rest;
    if (job.request.on_text) job.request.on_text(job.id, rest);
  }
  job.result.stop_reason = reason;
  job.result.error = std::move(error);
  JobStatistics& stats = job.result.statistics;
  stats.generated_tokens = job.generated;
  // A cancelled job decoded until it was stopped, not until its last token.
  const Clock::time_point decode_end =
      reason == StopReason::Cancelled ? Clock::now() : job.last_token;
  if (job.generated > 0) stats.decode_seconds = seconds(decode_end - job.first_token);
  if (job.request.on_done) job.request.on_done(job.result);
}

// Returns false when the token ended the job.
bool Generator::accept_token(Job& job, cache::TokenId token) {
  const Clock::time_point now = Clock::now();
  ++sampled_tokens_;
  JobStatistics& stats = job.result.statistics;
  if (job.generated == 0) {
    job.first_token = now;
    stats.time_to_first_token = seconds(now - job.submitted);
    stats.prefill_seconds = seconds(now - job.admitted);
  }
  job.last_token = now;
  if (job.constraint && !job.constraint->accept(token)) {
    // The mask allowed only tokens the matcher takes; this is a bug, and the
    // reply ends rather than leave its grammar.
    finish(job, StopReason::Error,
           "token " + std::to_string(token) + " was sampled outside the response format's grammar");
    return false;
  }
  const bool stop_token = job.stops.is_stop_token(token);
  const std::string piece = stop_token ? std::string() : job.detokenizer.push(token);
  if (job.constraint) job.constraint->observe_text(piece);
  StopMatcher::Step decided;
  if (job.bans.empty()) {
    decided = job.stops.feed(token, piece);
  } else if (stop_token) {
    // What banned strings held back can no longer become one.
    decided = job.stops.feed_text(job.bans.release());
    if (!decided.stop) {
      StopMatcher::Step stopped = job.stops.feed(token, {});
      decided.text += stopped.text;
      decided.stop = stopped.stop;
    }
  } else if (const std::optional<int> begins = job.bans.match_if_fed(job.generated, piece)) {
    // Only where the draw was not screened (an alternative's first token).
    ++stats.banned_rewinds;
    rewind_for_ban(
        job, *begins,
        *begins < job.generated ? job.result.tokens[static_cast<std::size_t>(*begins)] : token);
    return false;
  } else {
    decided = job.stops.feed(token, job.bans.feed(job.generated, piece));
  }
  if (!decided.text.empty()) {
    job.result.text += decided.text;
    if (job.request.on_text) job.request.on_text(job.id, decided.text);
  }
  if (decided.stop) {
    if (*decided.stop == StopReason::StopString) {
      job.result.stop_string = decided.stop_string;
      job.result.tokens.push_back(token);
      ++job.generated;
    }
    finish(job, *decided.stop);
    return false;
  }
  job.result.tokens.push_back(token);
  ++job.generated;
  if (job.constraint && job.constraint->complete()) {
    finish(job, StopReason::Eos);
    return false;
  }
  if (job.generated >= job.request.max_new_tokens) {
    finish(job, StopReason::MaxNewTokens);
    return false;
  }
  job.pending = token;
  return true;
}

void Generator::drop_cancelled() {
  // Taken out first: a callback may submit new jobs while these finish.
  std::vector<std::unique_ptr<Job>> cancelled;
  for (auto it = queue_.begin(); it != queue_.end();) {
    if ((*it)->cancelled) {
      cancelled.push_back(std::move(*it));
      it = queue_.erase(it);
    } else {
      ++it;
    }
  }
  for (auto it = running_.begin(); it != running_.end();) {
    if ((*it)->cancelled) {
      cancelled.push_back(std::move(*it));
      it = running_.erase(it);
    } else {
      ++it;
    }
  }
  for (const auto& job : cancelled)
    finish(*job, StopReason::Cancelled);
}

bool Generator::try_admit(Job& job, cache::AdmissionStatus& status, std::string& reason) {
  // Its context and the token it has yet to append.
  const auto prompt_of = [](const Job& admitted) {
    std::vector<cache::TokenId> prompt = admitted.tokens;
    if (admitted.pending) prompt.push_back(*admitted.pending);
    return prompt;
  };
  const int remaining = job.request.max_new_tokens - job.generated;
  cache::AdmissionPlan plan = runtime_.cache().prepare({prompt_of(job), remaining});
  status = plan.status();
  if (status != cache::AdmissionStatus::Fits) {
    reason = plan.reason();
    return false;
  }

  cache::Admission admission = runtime_.cache().commit(std::move(plan));
  for (;;) {
    bool complete = false;
    try {
      complete = runtime_.execute(admission.instructions);
    } catch (...) {
      // Pages half restored or copied must not come back as cached content.
      runtime_.cache().abandon(admission.sequence, admission.instructions);
      throw;
    }
    if (complete) break;
    // A page file was gone or damaged when read: the disk tier no longer
    // offers it, so the prompt is planned again and computes that page.
    runtime_.cache().abandon(admission.sequence, admission.instructions);
    plan = runtime_.cache().prepare({prompt_of(job), remaining});
    status = plan.status();
    if (status != cache::AdmissionStatus::Fits) {
      reason = plan.reason();
      return false;
    }
    admission = runtime_.cache().commit(std::move(plan));
  }
  job.failed_admissions = 0;
  if (job.pending) {
    job.tokens.push_back(*job.pending);
    job.pending.reset();
  }
  job.sequence = admission.sequence;
  job.ranges = admission.compute;
  by_sequence_[admission.sequence] = &job;
  if (!job.admitted_once) {
    job.admitted_once = true;
    job.admitted = Clock::now();
    JobStatistics& stats = job.result.statistics;
    stats.queue_seconds = seconds(job.admitted - job.submitted);
    stats.cached_tokens = admission.cached_tokens;
    stats.disk_tokens = admission.disk_tokens;
    stats.computed_tokens = stats.prompt_tokens - admission.cached_tokens;
  }
  return true;
}

void Generator::admit() {
  // In order; a job that must wait may be overtaken at most max_skips times.
  std::vector<std::pair<std::unique_ptr<Job>, std::string>> rejected;
  for (auto it = queue_.begin(); it != queue_.end();) {
    if (static_cast<int>(running_.size()) >= batch_limit()) break;
    Job& job = **it;
    if (job.leader) {  // branches off its leader's prompt once that is computed
      ++it;
      continue;
    }
    cache::AdmissionStatus status = cache::AdmissionStatus::Fits;
    std::string reason;
    bool admitted = false;
    try {
      admitted = try_admit(job, status, reason);
    } catch (const kernels::DeviceOutOfMemory& error) {
      if (!admission_failed(job, error)) break;  // it waits at its place in the queue
      rejected.emplace_back(std::move(*it), memory_.last);
      it = queue_.erase(it);
      continue;
    }
    if (admitted) {
      for (auto earlier = queue_.begin(); earlier != it; ++earlier)
        ++(*earlier)->skips;
      running_.push_back(std::move(*it));
      it = queue_.erase(it);
      continue;
    }
    // With no job running every page can be had; a request that must still
    // wait would wait forever, so it is refused instead.
    if (status == cache::AdmissionStatus::NeverFits ||
        (status == cache::AdmissionStatus::WaitForPages && running_.empty())) {
      rejected.emplace_back(std::move(*it), std::move(reason));
      it = queue_.erase(it);
      continue;
    }
    if (job.skips >= config_.max_skips) break;  // nobody may overtake it again
    ++it;
  }
  for (auto& [job, reason] : rejected)
    finish(*job, StopReason::Error, reason);
}

void Generator::preempted(cache::SequenceId sequence) {
  auto found = by_sequence_.find(sequence);
  if (found == by_sequence_.end()) return;
  Job* job = found->second;
  by_sequence_.erase(found);
  job->sequence.reset();
  job->ranges.clear();
  // Its drafts left with its pages; its last token is pending.
  job->verifying.clear();
  job->drafted_from.clear();
  ++job->result.statistics.preemptions;
  auto it =
      std::find_if(running_.begin(), running_.end(),
                   [&](const std::unique_ptr<Job>& candidate) { return candidate.get() == job; });
  if (it == running_.end()) return;
  // Back to the front of the queue; its pages stay cached for its return.
  queue_.push_front(std::move(*it));
  running_.erase(it);
}

bool Generator::step() {
  // Counts this step's time as generating when it sampled at least one token.
  struct GeneratingTime {
    Generator& generator;
    Clock::time_point began;
    std::int64_t sampled_before;
    ~GeneratingTime() {
      if (generator.sampled_tokens_ > sampled_before) {
        generator.generating_seconds_ += seconds(Clock::now() - began);
      }
    }
  } timed{*this, Clock::now(), sampled_tokens_};
  drop_cancelled();
  admit();
  if (running_.empty()) {
    maintain_when_idle();
    return !queue_.empty();
  }
  maintained_ = false;
  cache::PageCache& cache = runtime_.cache();

  // Decoding jobs first take a page slot for their pending token, and their
  // drafts when they draft; that may preempt the youngest jobs, which leave
  // the batch.
  std::vector<Job*> decoding;
  std::map<const Job*, DraftProposal> drafts = draft_all(draft_limit());
  for (std::size_t i = 0; i < running_.size(); ++i) {
    Job* job = running_[i].get();
    if (!job->ranges.empty() || !job->pending || !job->sequence) continue;
    const cache::TokenId token = *job->pending;
    std::vector<cache::TokenId> appending{token};
    DraftProposal proposal;
    if (auto drafted = drafts.find(job); drafted != drafts.end())
      proposal = std::move(drafted->second);
    appending.insert(appending.end(), proposal.tokens.begin(), proposal.tokens.end());
    cache::AppendResult appended = cache.append(*job->sequence, appending);
    if (appended.status == cache::AppendStatus::NoSpace && appending.size() > 1) {
      // No room for the drafts: the token alone, as without drafting (a
      // window pool may have taken them in the other pool).
      cache.truncate(*job->sequence, static_cast<std::int32_t>(job->tokens.size()));
      appending.resize(1);
      appended = cache.append(*job->sequence, appending);
    }
    save_evicted(appended);
    if (appended.status == cache::AppendStatus::NoSpace) {
      finish(*job, StopReason::Error,
             "the cache has no page left for this reply; it holds " +
                 std::to_string(cache.num_pages() * cache.page_size()) + " tokens");
      continue;
    }
    for (const cache::SequenceId victim : appended.preempted)
      preempted(victim);
    if (appended.status == cache::AppendStatus::Appended) {
      job->tokens.push_back(token);
      job->pending.reset();
      if (appending.size() > 1) {
        job->verifying = std::move(appending);
        job->drafted_from = std::move(proposal.distributions);
      }
    }
    // Preemption moved jobs out of running_; rescan from the start.
    if (!appended.preempted.empty()) i = static_cast<std::size_t>(-1);
  }
  // Jobs finished with an error above are still in running_: drop them.
  std::erase_if(running_, [](const std::unique_ptr<Job>& job) { return !job->sequence; });
  for (const auto& job : running_) {
    if (job->ranges.empty() && !job->pending) decoding.push_back(job.get());
  }
  const std::vector<Prefill> prefills = take_prefill_pages(decoding);

  // One forward pass: every decoding job's token, then prefill chunks.
  StepBatch step;
  std::vector<ForwardPass::Sequence>& batch = step.sequences;
  std::vector<Job*>& members = step.members;
  std::vector<cache::TokenRange>& chunks = step.chunks;
  const bool candidates = use_candidates();
  const std::int64_t vocab = runtime_.model().config.vocab_size;
  // With candidates on, a row that will be sampled asks for the sampler's
  // share; one that will not (a prefill chunk short of the prompt's end)
  // asks for a single candidate, the least that keeps its row on the device.
  const auto request = [&](Job& job, bool samples) {
    ForwardPass::CandidateRequest wanted;
    if (!candidates) return wanted;
    wanted.k = 1;
    if (!samples) return wanted;
    const SamplingSettings& settings = job.sampler.settings();
    wanted.k = job.sampler.candidates_wanted(vocab);
    wanted.inv_temperature = settings.greedy() ? 1.0f : 1.0f / settings.temperature;
    job.sampler.adjusted_tokens(job.tokens, vocab, job.adjusted);
    wanted.gather = job.adjusted;
    return wanted;
  };
  for (Job* job : decoding) {
    const auto position = static_cast<std::int32_t>(job->tokens.size()) - 1;
    step.first.push_back(batch.size());
    if (!job->verifying.empty()) {
      // The last token and its drafts, with a row of logits for each: as
      // sequences of one token each over the same pages, or one chunk.
      const auto count = static_cast<std::int32_t>(job->verifying.size());
      const std::span<const cache::TokenId> verifying(job->verifying);
      const bool split = split_verification();
      for (std::int32_t t = 0; t < (split ? count : 1); ++t) {
        batch.push_back({cache.page_table(*job->sequence),
                         split ? verifying.subspan(std::size_t(t), 1) : verifying,
                         position + t,
                         !split,
                         {}});
        batch.back().window_pages = cache.window_page_table(*job->sequence);
        batch.back().decode_rows = true;
        batch.back().rewindable = !split;
      }
      members.push_back(job);
      chunks.push_back({position, position + count});
      continue;
    }
    batch.push_back({cache.page_table(*job->sequence),
                     std::span<const cache::TokenId>(job->tokens).subspan(std::size_t(position), 1),
                     position, false, request(*job, true)});
    batch.back().window_pages = cache.window_page_table(*job->sequence);
    give_rope_positions(*job, {position, position + 1}, batch.back());
    members.push_back(job);
    chunks.push_back({position, position + 1});
  }
  for (const auto& [job, chunk] : prefills) {
    const bool ends_prompt = job->ranges.size() == 1 && chunk.end == job->ranges.front().end &&
                             job->request.max_new_tokens > job->generated;
    ForwardPass::Sequence sequence{
        cache.page_table(*job->sequence),
        std::span<const cache::TokenId>(job->tokens)
            .subspan(std::size_t(chunk.begin), std::size_t(chunk.end - chunk.begin)),
        chunk.begin, false, request(*job, ends_prompt)};
    sequence.window_pages = cache.window_page_table(*job->sequence);
    try {
      give_images(*job, chunk, sequence);
      give_rope_positions(*job, chunk, sequence);
    } catch (const std::exception& error) {
      finish(*job, StopReason::Error, std::string("an image could not be read: ") + error.what());
      continue;
    }
    step.first.push_back(batch.size());
    batch.push_back(sequence);
    members.push_back(job);
    chunks.push_back(chunk);
  }
  if (batch.empty()) return !idle();

  // The grammars' masks for this step's draws depend on the text so far,
  // not on the logits: they are worked out on another thread while the
  // model computes (the future's destructor waits, whatever happens).
  std::vector<TokenConstraint*> constrained;
  for (Job* job : members) {
    if (job->constraint && job->constraint->active()) constrained.push_back(job->constraint.get());
  }
  std::future<void> masks;
  if (!constrained.empty()) {
    masks = std::async(std::launch::async, [constrained] {
      for (TokenConstraint* constraint : constrained)
        constraint->prepare();
    });
  }
  const std::optional<ForwardPass::Result> ran = run_pass(step);
  if (masks.valid()) masks.wait();
  if (!ran) {
    std::erase_if(running_, [](const std::unique_ptr<Job>& job) { return !job->sequence; });
    return !idle();
  }
  const ForwardPass::Result& result = *ran;

  for (std::size_t i = 0; i < members.size(); ++i) {
    Job& job = *members[i];
    const std::size_t index = step.first[i];
    if (!job.verifying.empty()) {
      accept_drafted(job, result, index, step.end(i) - index > 1);
      continue;
    }
    cache.mark_computed(*job.sequence, chunks[i].end);
    if (!job.ranges.empty()) {
      cache::TokenRange& range = job.ranges.front();
      range.begin = chunks[i].end;
      if (range.begin == range.end) job.ranges.erase(job.ranges.begin());
      if (!job.ranges.empty()) continue;  // more prompt to compute
      if (job.request.max_new_tokens <= job.generated) {
        finish(job, StopReason::MaxNewTokens);
        continue;
      }
    }
    const std::optional<cache::TokenId> token = sample_unbanned(job, result, index);
    if (!token) continue;
    if (!job.followers.empty()) branch_alternatives(job, result, index);
    accept_token(job, *token);
  }
  std::erase_if(running_, [](const std::unique_ptr<Job>& job) { return !job->sequence; });
  return !idle();
}

void Generator::run_until_idle() {
  while (step()) {
  }
}

void Generator::maintain_when_idle() {
  if (maintained_ || !queue_.empty()) return;
  maintained_ = true;
  if (!config_.defragment_when_idle) return;
  const std::optional<cache::DefragPlan> plan = runtime_.cache().defragment();
  if (!plan) return;
  try {
    runtime_.storage().apply_moves(*plan);
  } catch (const std::exception& error) {
    // Defragmenting only tidies: when a move fails (memory short for a copy,
    // say), the pages it was moving forget their content and are computed
    // again when next needed, and nothing else changes. Idle, no job holds a
    // page; a sequence that does (a caller's own) cannot go on without it.
    for (const cache::SequenceId sequence : runtime_.cache().forget_moved_pages(*plan)) {
      runtime_.cache().release_after_failure(sequence);
    }
    ++memory_.failed_defragmentations;
    memory_.last = std::string("Tidying the cache's pages failed (") + error.what() +
                   "); the pages it was moving will be computed again when needed.";
  }
}

}  // namespace quire::engine
