// Speculative decoding in the generator's step: a job that drafts verifies
// its drafts in the same forward pass as its last token.
//
// A decoding job holds `tokens` (all in the cache, the last one not yet
// computed) and its pending token. Without drafting a step appends the
// pending token and computes that one position. With drafting, the step
// appends the pending token t and the drafts d1..dk to the sequence
// (PageCache::append, so the pages for them are taken as for any decoded
// token, with the same preemption and reservation rules), and the forward
// pass computes positions p..p+k with a row of logits for each (as single
// tokens or as one chunk: see "Arithmetic" below). Row r is the model's
// distribution after d1..dr, and the job's own sampler reads it in the
// context the job would have then, so penalties, bias and bans apply
// exactly (Sampler::verify_draft, draft_verification.cpp):
//
// - Greedy jobs keep the longest prefix d1..dj where each d_{r+1} is
//   row r's argmax, and the argmax g_j after it (the model's own next token):
//   j + 1 tokens for one pass, token for token the reply without drafting.
// - Sampled jobs use speculative sampling's rejection rule (Leviathan et
//   al. 2023, Chen et al. 2023). With p the distribution sample() would draw
//   from at row r (every filter applied) and q the one d_{r+1} was drafted
//   from, d_{r+1} stands with probability min(1, p(d) / q(d)); the first
//   draft turned down is replaced by a draw from max(0, p - q),
//   renormalized, and the rest are given back. When every draft stands, the
//   last row is sampled as usual. Prompt lookup drafts without a
//   distribution: q is a point mass, so d stands with probability p(d) and
//   a rejected one is replaced by a draw from p without d. A draft model
//   hands its q per position (DraftProposal). Each token that comes out is
//   distributed exactly as a step of its own would draw it, though not the
//   same token: the draws consume the seeded stream differently (one number
//   per test, one more per rejection), so a seeded reply with drafts is
//   reproducible but differs from the one without.
//
// The drafts come from prompt lookup (NgramDrafter: the job's own tokens,
// free) or from the draft model (DraftModel: a smaller model with the same
// tokenizer and a cache of its own, which drafts for every job that asks
// in the same passes, before the step). How many a job drafts follows what
// it kept (DraftLength): drafts that keep failing pause drafting.
//
// Rollback is bookkeeping. The positions past p + j hold K/V the pass wrote
// for rejected drafts; PageCache::truncate gives those tokens back. They
// lie past what the sequence counts as computed, so they are in its own
// unsealed tail: a page is hashed (sealed) only once every position in it is
// computed, and pages shared with other sequences are full and sealed, so
// the pass never wrote into one (append refuses a shared page). The pages
// there forget the content they held before they were taken, since some of
// their slots were overwritten; the kept positions are overwritten by later
// steps before any query reads them, as attention reads only positions
// before the query's own.
//
// The accepted tokens then go through accept_token one by one, exactly as
// if each had come from a step of its own: stop tokens, EOS, stop strings
// and max_new_tokens end the job at the same token, and the cache counts as
// computed what it would count without drafting (each accepted draft's
// position is marked computed only once the token before it was accepted
// and did not end the job). Drafts never run past max_new_tokens: a job
// drafts at most max_new_tokens - generated - 1 tokens, so its last draft
// and the model's token after it are still tokens it may emit.
//
// Not drafted (the setting is ignored, the job decodes one token a step):
// jobs with a grammar, whose masks depend on the text accepted so far, and
// alternatives while they branch. Drafted rows come to the host whole,
// never as candidates.
//
// Arithmetic: a verified row must get the bits it gets in a decode step of
// its own, or a greedy reply can change at a near tie. Where the cache has
// no FP16 mirrors (FP16, or the residual window off), no pages in host memory and writes that
// never recode a page, the step verifies the job's k + 1 tokens as k + 1
// sequences of one token each over the same page table at consecutive
// positions (split_verification): each layer writes every token's K/V
// before any attends, so token i reads the drafts before it, and each row
// is computed exactly as in a batch of decode steps (the forward pass keeps
// a decode row's bits whatever else runs: row_segments.h, and the CPU
// attention's one block per sequence). A drafting job then takes k + 1 of
// the pass's sequences, which bounds the drafts in a busy batch
// (draft_limit). Otherwise the tokens go as one chunk
// (ForwardPass::Sequence::all_logits) whose rows are multiplied as decode
// rows and attend as decode rows (decode_rows: each token its own attention
// sequence over the chunk's page table and mirror), so that on the CPU each
// row has a decode step's bits in either path. The CUDA backend's products
// and attention choose kernels by the step's row count, so there a row
// equals its decode step's where the kernels do not depend on it; chunks are
// never recorded as graphs (they ask for every row of logits), split steps
// can be, like any decode batch.
//
// Cache codings. With the residual window, a decode step reads the page of
// its position from the FP16 mirror of the sequence's open page and every
// other page coded; the mirror is the page of the step's last position, and
// a step that fills a page frees its mirror. So the pending token and its
// drafts stay on the open page and leave its last slot free (draft_for): a
// chunk that crossed into the next page read its first page coded where its
// decode steps read the mirror, and one that filled the page, or crossed it,
// and then gave drafts back found the page's mirror gone and filled again
// from the coded tokens, for the rest of the page. (On the tests' prompts,
// keeping chunks on their page was what made the Q6 and FP8 replies equal
// those without drafts; before, both parted from them.) The integer codings
// encode each token on its own, so a rejected draft leaves nothing behind
// that a later token sees. FP8's per-page scale only grows, and a token
// that grows it encodes the page's earlier tokens again: a rejected draft
// could leave the kept tokens at another scale and with other bytes, read
// once the page leaves the mirror and by every later turn that shares it.
// The chunk is run rewindable and, when drafts are given back,
// ForwardPass::rewind puts its pages back as they were and writes the kept
// tokens again in order, which is what their own steps would have done;
// where FP8 pages live in host memory, which rewind cannot reach, jobs do
// not draft. The tests compare every coding's greedy replies and sealed
// pages with and without drafts (test_speculative_decoding), and each
// chunk row and rewound page with decode steps (test_verification_rows).

#include <algorithm>
#include <stdexcept>
#include <string>

#include "generator_job.h"
#include "quire/engine/generator/draft_model.h"
#include "quire/engine/generator/generator.h"

namespace quire::engine {
namespace {

constexpr int kMostDraftTokens = 64;

}  // namespace

void validate(const DraftSettings& settings) {
  if (settings.max_tokens < 1 || settings.max_tokens > kMostDraftTokens) {
    throw std::invalid_argument("a job drafts between 1 and " + std::to_string(kMostDraftTokens) +
                                " tokens a step (got " + std::to_string(settings.max_tokens) + ")");
  }
  if (settings.method == DraftSettings::Method::Ngram) validate(settings.ngram);
}

void Generator::set_draft_model(DraftModel* draft) {
  for (const auto& job : running_) {
    if (job->request.draft.method == DraftSettings::Method::Model)
      throw std::logic_error("the draft model changes while a job drafts with it");
  }
  draft_model_ = draft;
}

int Generator::draft_limit() const {
  if (running_.empty()) return 0;
  const auto jobs = static_cast<int>(running_.size());
  // Every running job may bring a token (or a prefill chunk) of its own.
  const ForwardPass::Limits& limits = runtime_.forward().limits();
  const int tokens = config_.max_step_tokens - jobs;
  const int rows = limits.max_logit_rows - jobs;
  int limit = std::min(tokens, rows) / jobs;
  // Verified as single tokens, each draft is a sequence of the pass.
  if (split_verification()) limit = std::min(limit, (limits.max_sequences - jobs) / jobs);
  // With a sliding window a sequence's pages are bounded by one step's
  // positions (cache::CacheConfig::max_step_tokens).
  const cache::CacheConfig& cache = runtime_.cache().config();
  const int step = cache.max_step_tokens > 0 ? cache.max_step_tokens : cache.page_size;
  limit = std::min(limit, step - 1);
  return std::max(0, limit);
}

bool Generator::split_verification() const {
  // The residual window's FP16 mirrors serve one sequence's open page a
  // step, and pages in host memory are staged per sequence: several
  // sequences of one job would each want the same page.
  // Where writes recode pages (FP8 with per-page scales), taking back
  // rejected drafts needs the step to keep their pages and keys and values
  // (ForwardPass::rewind), which it does for one sequence of the job.
  const KvStorage& storage = runtime_.storage();
  return storage.mirror_slots() == 0 && !storage.any_on_host() && !storage.writes_recode_pages();
}

std::map<const Generator::Job*, DraftProposal> Generator::draft_all(int limit) {
  std::map<const Job*, DraftProposal> drafts;
  // The draft model's requests, drafted together below; their histories
  // live here until then.
  std::vector<DraftModel::Request> requests;
  std::vector<const Job*> requesting;
  std::vector<std::vector<cache::TokenId>> histories;
  if (!runtime_.forward().can_rewind()) return drafts;
  for (const auto& owned : running_) {
    Job& job = *owned;
    const bool decoding = job.ranges.empty() && job.pending && job.sequence;
    if (!decoding || !job.draft_length || job.constraint || !job.bans.empty() ||
        !job.followers.empty() || job.leader)
      continue;
    // The drafts and the model's token after them must all be tokens the
    // job may still emit.
    int wanted = std::min(limit, job.request.max_new_tokens - job.generated - 1);
    // With the residual window, every verified row must read its page from
    // the FP16 mirror that its own decode step would read: the pending token
    // and its drafts stay on the open page and leave its last slot free, so
    // that the page's mirror neither moves to the next page nor is freed as
    // sealed while drafts may still be given back.
    if (runtime_.storage().mirror_slots() > 0) {
      const int page_size = runtime_.cache().config().page_size;
      const auto position = static_cast<int>(job.tokens.size());
      wanted = std::min(wanted, page_size - 2 - position % page_size);
    }
    if (wanted <= 0) continue;
    wanted = std::min(wanted, job.draft_length->next());
    if (wanted <= 0) continue;
    std::vector<cache::TokenId> history;
    history.reserve(job.tokens.size() + 1);
    history.assign(job.tokens.begin(), job.tokens.end());
    history.push_back(*job.pending);
    if (job.drafter) {
      // Prompt lookup proposes tokens without a distribution: a point mass each.
      drafts[&job].tokens = job.drafter->draft(history, wanted);
      continue;
    }
    if (!draft_model_) continue;
    histories.push_back(std::move(history));
    requesting.push_back(&job);
    const SamplingSettings& sampling = job.sampler.settings();
    requests.push_back({job.id, {}, wanted, sampling.greedy() ? nullptr : &sampling});
  }
  if (requests.empty()) return drafts;
  for (std::size_t i = 0; i < requests.size(); ++i)
    requests[i].history = histories[i];
  std::vector<DraftProposal> proposals = draft_model_->draft(requests);
  for (std::size_t i = 0; i < proposals.size(); ++i) {
    DraftProposal& proposal = proposals[i];
    // accept_drafted reads one distribution per draft, or takes none as
    // point masses; some but not all would bias the reply.
    if (!proposal.distributions.empty() &&
        proposal.distributions.size() != proposal.tokens.size()) {
      throw std::logic_error("the draft model gave " +
                             std::to_string(proposal.distributions.size()) + " distributions for " +
                             std::to_string(proposal.tokens.size()) +
                             " drafted tokens; it must give one per token or none");
    }
    drafts[requesting[i]] = std::move(proposal);
  }
  return drafts;
}

void Generator::accept_drafted(Job& job, const ForwardPass::Result& result, std::size_t index,
                               bool split) {
  cache::PageCache& cache = runtime_.cache();
  const cache::SequenceId sequence = *job.sequence;
  const std::vector<cache::TokenId> verified = std::move(job.verifying);
  const std::vector<DraftDistribution> drafted_from = std::move(job.drafted_from);
  job.verifying.clear();
  job.drafted_from.clear();
  const std::size_t drafted = verified.size() - 1;
  // `tokens` ends with the token this step computed; the drafts follow it.
  const auto base = static_cast<std::int32_t>(job.tokens.size());
  cache.mark_computed(sequence, base);
  // Whatever is kept, the pass wrote K/V at every drafted position.
  cache.mark_overwritten(sequence, base, base + static_cast<std::int32_t>(drafted));

  // Row r decides the token after the first r drafts, in the context the
  // job has there: the draft d_{r+1} or, once one is turned down, the token
  // drawn in its place; after the last draft, the model's own next token.
  std::vector<cache::TokenId> chosen;
  std::size_t accepted = 0;
  try {
    std::vector<cache::TokenId> context = job.tokens;
    for (std::size_t r = 0; r <= drafted; ++r) {
      const std::span<const float> row =
          split ? result.row(index + r) : result.row(index, static_cast<int>(r));
      if (r == drafted) {
        chosen.push_back(job.sampler.sample(row, context));
        break;
      }
      const DraftDistribution* q = drafted_from.empty() ? nullptr : &drafted_from[r];
      const DraftVerdict verdict = job.sampler.verify_draft(row, context, verified[r + 1], q);
      chosen.push_back(verdict.token);
      if (!verdict.accepted) break;
      context.push_back(verdict.token);
      ++accepted;
    }
  } catch (const std::invalid_argument& error) {
    finish(job, StopReason::Error, std::string("sampling failed: ") + error.what());
    return;
  }
  // The pages as a step of the kept tokens alone would leave them (an FP8
  // page's scale grown by a rejected draft shrinks back).
  if (!split && accepted < drafted)
    runtime_.forward().rewind(index, static_cast<int>(accepted) + 1);
  cache.truncate(sequence, base + static_cast<std::int32_t>(accepted));
  JobStatistics& stats = job.result.statistics;
  stats.drafted_tokens += static_cast<std::int64_t>(drafted);
  stats.accepted_tokens += static_cast<std::int64_t>(accepted);
  ++stats.draft_steps;
  job.draft_length->record(static_cast<int>(drafted), static_cast<int>(accepted));

  for (std::size_t r = 0; r < accepted; ++r) {
    if (!accept_token(job, chosen[r])) return;
    // Already in the cache: what a step of its own would have computed.
    job.tokens.push_back(chosen[r]);
    job.pending.reset();
    cache.mark_computed(sequence, base + static_cast<std::int32_t>(r) + 1);
  }
  accept_token(job, chosen[accepted]);
}

}  // namespace quire::engine
