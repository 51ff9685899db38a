// Randomized workload: many thousands of admissions, prefill chunks, decode
// steps, releases, preemptions, resumptions, defragmentations and stale plans
// against a shadow engine. After every operation the cache's invariants are
// checked against a recount; the shadow engine checks that every sequence reads
// exactly the K/V its tokens produced and that cached pages hold the content
// of their hash.

#include <QTest>
#include <memory>
#include <random>

#include "cache_test_helpers.h"
#include "quire/cache/page_cache.h"
#include "shadow_engine.h"
#include "test_main.h"

using namespace quire::cache;
using quire::test::ShadowEngine;

namespace {

// A clock that advances only every `step` calls, so that many pages share an
// access stamp and tie-breaking is exercised.
class CoarseClock final : public Clock {
 public:
  explicit CoarseClock(int step) : step_(step) {}
  std::uint64_t now() override { return ++calls_ / static_cast<std::uint64_t>(step_); }

 private:
  int step_;
  std::uint64_t calls_ = 0;
};

struct Scenario {
  CacheConfig config;
  bool leaf_first = true;
  int clock_step = 1;
  std::uint64_t seed = 1;
  int operations = 3000;
};

struct Job {
  SequenceId sequence = 0;
  std::vector<TokenId> tokens;
  std::vector<TokenRange> pending;
  int remaining = 0;
  int conversation = -1;
};

struct Paused {
  std::vector<TokenId> tokens;
  int remaining = 0;
  int conversation = -1;
};

class Workload {
 public:
  // With `disk`, the engine plays a disk tier too, and now and then loses a
  // page file between an admission and its execution.
  Workload(const Scenario& scenario, bool disk)
      : rng_(scenario.seed),
        cache_(scenario.config,
               scenario.leaf_first ? std::unique_ptr<EvictionPolicy>(new LeafFirstLru)
                                   : std::unique_ptr<EvictionPolicy>(new LeastRecentlyUsed),
               std::make_unique<CoarseClock>(scenario.clock_step)),
        engine_(cache_),
        page_size_(scenario.config.page_size),
        disk_(disk) {
    if (disk_) engine_.attach_disk();
    for (int i = 0; i < 4; ++i)
      system_prompts_.push_back(random_tokens(pick(0, 3 * page_size_)));
  }

  // Runs the workload; returns a description of the first failure, or "".
  std::string run(int operations) {
    for (step_ = 0; step_ < operations; ++step_) {
      const int roll = pick(0, 99);
      if (roll < 22) {
        admit_new();
      } else if (roll < 50) {
        advance_prefill();
      } else if (roll < 84) {
        decode();
      } else if (roll < 91) {
        finish(pick_job());
      } else if (roll < 95) {
        resume();
      } else if (roll < 98) {
        defragment();
      } else {
        stale_plan();
      }
      if (!failure_.empty()) return failure_;
      if (const auto problems = cache_.check_invariants(); !problems.empty()) {
        return where() + "invariant broken: " + problems.front();
      }
      if (step_ % 25 == 0) verify_all();
      if (!failure_.empty()) return failure_;
    }
    while (!jobs_.empty())
      finish(0);
    if (const auto problems = cache_.check_invariants(); !problems.empty()) {
      return "at the end: invariant broken: " + problems.front();
    }
    const CacheStats stats = cache_.stats();
    if (stats.referenced_pages != 0 || stats.sequences != 0) return "pages still referenced";
    return failure_;
  }

  const PageCache& cache() const { return cache_; }
  int failed_defragmentations() const { return failed_defragmentations_; }
  int abandoned_restores() const { return abandoned_restores_; }

 private:
  int pick(int low, int high) { return std::uniform_int_distribution<int>(low, high)(rng_); }

  std::vector<TokenId> random_tokens(int count) {
    std::vector<TokenId> tokens(static_cast<std::size_t>(count));
    for (TokenId& token : tokens)
      token = pick(1, 5000);
    return tokens;
  }

  // A deterministic "model": the same prefix always continues the same way
  // (mostly), so regenerated replies fill identical pages.
  TokenId next_token(const std::vector<TokenId>& tokens) {
    if (pick(0, 9) == 0) return pick(1, 5000);
    return model_token(tokens);
  }

  static TokenId model_token(const std::vector<TokenId>& tokens) {
    const auto fingerprints = ShadowEngine::fingerprints(tokens);
    return static_cast<TokenId>(fingerprints.back() % 61) + 1;
  }

  std::string where() const { return "step " + std::to_string(step_) + ": "; }

  void fail(const std::string& text) {
    if (failure_.empty()) failure_ = where() + text;
  }

  void check(SequenceId sequence) {
    const std::string problem = engine_.verify_sequence(sequence);
    if (!problem.empty()) fail(problem);
  }

  void verify_all() {
    for (const Job& job : jobs_)
      check(job.sequence);
    const std::string problem = engine_.verify_cached_pages();
    if (!problem.empty()) fail(problem);
  }

  std::size_t pick_job() { return static_cast<std::size_t>(pick(0, int(jobs_.size()) - 1)); }

  bool start(std::vector<TokenId> tokens, int max_new, int conversation) {
    AdmissionPlan refused;
    std::optional<Admission> admission = cache_.admit({tokens, max_new}, &refused);
    if (!admission) {
      if (refused.status() == AdmissionStatus::NeverFits &&
          static_cast<int>(tokens.size()) + max_new <= page_size_ * cache_.num_pages()) {
        fail("a request that fits the cache was called never-fitting: " + refused.reason());
      }
      return false;
    }
    std::int64_t to_compute = 0;
    for (const TokenRange& range : admission->compute)
      to_compute += range.end - range.begin;
    if (to_compute + admission->cached_tokens != static_cast<std::int64_t>(tokens.size())) {
      fail("computed and cached tokens do not add up to the prompt");
    }
    if (admission->compute.empty() || admission->compute.back().end != int(tokens.size())) {
      fail("the last prompt token is not computed");
    }
    const std::vector<DiskRestore>& restores = admission->instructions.disk_restores;
    if (disk_ && !restores.empty() && pick(0, 3) == 0) {
      // Another process removed a file the plan counted on.
      engine_.disk().erase(
          restores[static_cast<std::size_t>(pick(0, static_cast<int>(restores.size()) - 1))].hash);
    }
    const std::size_t failed_before = engine_.failed_restores().size();
    engine_.execute(admission->instructions);
    if (engine_.failed_restores().size() != failed_before) {
      // The generator's way: abandon the admission and plan it again, now
      // without the missing page.
      cache_.abandon(admission->sequence, admission->instructions);
      ++abandoned_restores_;
      return start(std::move(tokens), max_new, conversation);
    }
    jobs_.push_back(
        Job{admission->sequence, std::move(tokens), admission->compute, max_new, conversation});
    check(admission->sequence);
    return true;
  }

  void admit_new() {
    if (jobs_.size() >= 6) return;
    const int max_new = pick(0, 2 * page_size_);
    std::vector<TokenId> tokens;
    int conversation = -1;
    switch (pick(0, 5)) {
      case 0:  // a new conversation
        tokens = system_prompts_[static_cast<std::size_t>(pick(0, 3))];
        for (TokenId t : random_tokens(pick(1, 2 * page_size_)))
          tokens.push_back(t);
        conversations_.push_back(tokens);
        conversation = static_cast<int>(conversations_.size()) - 1;
        break;
      case 1: {  // the next turn of an idle conversation
        if (conversations_.empty()) return;
        conversation = pick(0, static_cast<int>(conversations_.size()) - 1);
        for (const Job& job : jobs_) {
          if (job.conversation == conversation) return;
        }
        tokens = conversations_[static_cast<std::size_t>(conversation)];
        for (TokenId t : random_tokens(pick(1, page_size_)))
          tokens.push_back(t);
        break;
      }
      case 2:  // regenerate a recent prompt
        if (recent_.empty()) return;
        tokens = recent_[static_cast<std::size_t>(pick(0, int(recent_.size()) - 1))];
        break;
      case 3:
        tokens = random_tokens(pick(1, 4 * page_size_));
        break;
      case 4: {
        // Branch ahead of a running job: its tokens plus what it will most
        // likely generate next, so the job later fills pages this prompt has
        // registered (possibly before they are computed).
        if (jobs_.empty()) return;
        tokens = jobs_[pick_job()].tokens;
        const int ahead = pick(1, 2 * page_size_);
        for (int i = 0; i < ahead; ++i)
          tokens.push_back(model_token(tokens));
        break;
      }
      default:  // a shared system prompt with a new question
        tokens = system_prompts_[static_cast<std::size_t>(pick(0, 3))];
        for (TokenId t : random_tokens(pick(1, page_size_)))
          tokens.push_back(t);
        break;
    }
    if (tokens.empty()) return;
    if (conversation >= 0) {
      // Keep conversations within the cache: drop the oldest turn when long.
      const std::size_t limit = static_cast<std::size_t>(page_size_ * cache_.num_pages() / 2);
      if (tokens.size() > limit)
        tokens.erase(tokens.begin(), tokens.end() - static_cast<long>(limit));
    }
    const std::vector<TokenId> prompt = tokens;
    if (start(std::move(tokens), max_new, conversation)) {
      recent_.push_back(prompt);
      if (recent_.size() > 8) recent_.erase(recent_.begin());
    }
  }

  void advance_prefill() {
    std::vector<std::size_t> prefilling;
    for (std::size_t i = 0; i < jobs_.size(); ++i) {
      if (!jobs_[i].pending.empty()) prefilling.push_back(i);
    }
    if (prefilling.empty()) return;
    Job& job = jobs_[prefilling[static_cast<std::size_t>(pick(0, int(prefilling.size()) - 1))]];
    TokenRange& range = job.pending.front();
    const std::int32_t end = std::min(range.end, range.begin + pick(1, 3 * page_size_));
    const SequenceId sequence = job.sequence;
    const AppendResult result = engine_.compute(sequence, TokenRange{range.begin, end});
    if (result.status == AppendStatus::NoSpace) {
      fail("a prefill within its reserved budget found no space");
      return;
    }
    if (result.status == AppendStatus::Appended) {
      range.begin = end;
      if (range.begin == range.end) job.pending.erase(job.pending.begin());
      check(sequence);
    }
    for (const SequenceId preempted : result.preempted)
      pause(preempted);
  }

  void pause(SequenceId sequence) {
    for (std::size_t i = 0; i < jobs_.size(); ++i) {
      if (jobs_[i].sequence != sequence) continue;
      paused_.push_back(Paused{jobs_[i].tokens, jobs_[i].remaining, jobs_[i].conversation});
      jobs_.erase(jobs_.begin() + static_cast<long>(i));
      return;
    }
    fail("a preempted sequence is not a running job");
  }

  void decode() {
    std::vector<std::size_t> decoding;
    for (std::size_t i = 0; i < jobs_.size(); ++i) {
      if (jobs_[i].pending.empty()) decoding.push_back(i);
    }
    if (decoding.empty()) return;
    const std::size_t index = decoding[static_cast<std::size_t>(pick(0, int(decoding.size()) - 1))];
    if (jobs_[index].remaining == 0) {
      finish(index);
      return;
    }
    if (jobs_[index].remaining >= 2 && pick(0, 2) == 0) {
      speculate(index);
      return;
    }
    const TokenId token = next_token(jobs_[index].tokens);
    const SequenceId sequence = jobs_[index].sequence;
    const AppendResult result = engine_.decode(sequence, token);
    switch (result.status) {
      case AppendStatus::NoSpace:
        fail("a job within its reserved budget found no space");
        return;
      case AppendStatus::Preempted:
      case AppendStatus::Appended:
        break;
    }
    if (result.status == AppendStatus::Appended) {
      jobs_[index].tokens.push_back(token);
      --jobs_[index].remaining;
      check(sequence);
    }
    for (const SequenceId preempted : result.preempted)
      pause(preempted);
    if (result.status == AppendStatus::Preempted &&
        (result.preempted.empty() || result.preempted.back() != sequence)) {
      fail("a self-preemption does not name the sequence");
    }
  }

  // A decode step that verifies drafts: the token, the drafts the model
  // agrees with, then one it does not (unless all are kept); everything
  // after the kept ones is given back.
  void speculate(std::size_t index) {
    Job& job = jobs_[index];
    const CacheConfig& config = cache_.config();
    int most = job.remaining - 1;
    if (config.window > 0 || config.has_window_pool()) {
      const int step = config.max_step_tokens > 0 ? config.max_step_tokens : config.page_size;
      most = std::min(most, step - 1);
    }
    if (most < 1) return;
    const int drafted = pick(1, most);
    const int accepted = pick(0, drafted);
    std::vector<TokenId> history = job.tokens;
    std::vector<TokenId> step{next_token(history)};
    history.push_back(step.back());
    for (int i = 0; i < drafted; ++i) {
      TokenId token = next_token(history);
      if (i >= accepted) token += 5001;  // never what the job goes on with
      step.push_back(token);
      history.push_back(token);
    }
    const SequenceId sequence = job.sequence;
    const AppendResult result = engine_.speculate(sequence, step, 1 + accepted);
    if (result.status == AppendStatus::NoSpace) {
      fail("a speculative step within its reserved budget found no space");
      return;
    }
    if (result.status == AppendStatus::Appended) {
      job.tokens.insert(job.tokens.end(), step.begin(), step.begin() + 1 + accepted);
      job.remaining -= 1 + accepted;
      check(sequence);
    }
    for (const SequenceId preempted : result.preempted)
      pause(preempted);
  }

  void finish(std::size_t index) {
    if (jobs_.empty()) return;
    const Job job = jobs_[index];
    check(job.sequence);
    cache_.release(job.sequence);
    jobs_.erase(jobs_.begin() + static_cast<long>(index));
    if (job.conversation >= 0 && job.pending.empty()) {
      conversations_[static_cast<std::size_t>(job.conversation)] = job.tokens;
    }
  }

  // A job whose sequence the cache has ended: no conversation continues it.
  void finish_without_release(std::size_t index) {
    jobs_.erase(jobs_.begin() + static_cast<long>(index));
  }

  void resume() {
    if (paused_.empty() || jobs_.size() >= 6) return;
    const Paused paused = paused_.front();
    if (start(paused.tokens, paused.remaining, paused.conversation)) {
      paused_.erase(paused_.begin());
    }
  }

  void defragment() {
    const std::optional<DefragPlan> plan = cache_.defragment();
    if (!plan) return;
    ++defragmentations_;
    if (pick(0, 3) > 0) {
      engine_.apply(*plan);
      verify_all();
      return;
    }
    // The engine fails part way: only some chains moved. Every page of the
    // plan forgets its content and the jobs holding one end; whatever stays
    // cached must still hold exactly its tokens' K/V.
    DefragPlan done;
    const int moved_chains = pick(0, static_cast<int>(plan->moves.size()) - 1);
    for (int chain = 0; chain < moved_chains; ++chain)
      done.moves.push_back(plan->moves[static_cast<std::size_t>(chain)]);
    engine_.apply(done);
    for (const SequenceId sequence : cache_.forget_moved_pages(*plan)) {
      std::size_t index = 0;
      while (index < jobs_.size() && jobs_[index].sequence != sequence)
        ++index;
      if (index == jobs_.size()) {
        fail("forget_moved_pages named a sequence no job holds");
        return;
      }
      cache_.release_after_failure(sequence);
      finish_without_release(index);
    }
    ++failed_defragmentations_;
    verify_all();
  }

  void stale_plan() {
    if (jobs_.empty()) return;
    AdmissionPlan plan = cache_.prepare({random_tokens(pick(1, page_size_)), 0});
    if (!plan.fits()) return;
    finish(pick_job());
    try {
      cache_.commit(std::move(plan));
      fail("a plan prepared before a release was committed");
    } catch (const std::logic_error&) {
    }
  }

  std::mt19937_64 rng_;
  PageCache cache_;
  ShadowEngine engine_;
  int page_size_;
  bool disk_ = false;
  int abandoned_restores_ = 0;
  int step_ = 0;
  int defragmentations_ = 0;
  int failed_defragmentations_ = 0;
  std::string failure_;
  std::vector<Job> jobs_;
  std::vector<Paused> paused_;
  std::vector<std::vector<TokenId>> system_prompts_;
  std::vector<std::vector<TokenId>> conversations_;
  std::vector<std::vector<TokenId>> recent_;
};

CacheConfig config(int page_size, int pages, ReservationPolicy policy, int host_pages,
                   int min_copy = 1, int window = 0) {
  CacheConfig c;
  c.window = window;
  // The workload's prefill steps compute up to three pages at once.
  c.max_step_tokens = window > 0 ? 3 * page_size : 0;
  c.page_size = page_size;
  c.num_pages = pages;
  c.reservation = policy;
  c.host_pages = host_pages;
  c.min_copy_tokens = min_copy;
  return c;
}

// A mixed model's cache: windowed layers over `layer_window` positions in a
// pool of `window_pages` pages of their own, the others in the main pool.
CacheConfig pooled(int page_size, int pages, ReservationPolicy policy, int host_pages,
                   int layer_window, int window_pages) {
  CacheConfig c = config(page_size, pages, policy, host_pages);
  c.layer_window = layer_window;
  c.window_pages = window_pages;
  c.max_step_tokens = 3 * page_size;
  c.layers = {CacheLayer{{2, 8}, -1, true}, CacheLayer{{2, 8}, -1, false}};
  return c;
}

}  // namespace

Q_DECLARE_METATYPE(Scenario)

class PageCacheRandomizedTest : public QObject {
  Q_OBJECT

 private slots:
  void workload_data() {
    QTest::addColumn<Scenario>("scenario");
    QTest::addColumn<bool>("expectPreemption");
    QTest::addColumn<bool>("expectHostRestores");
    QTest::addColumn<bool>("disk");
    using enum ReservationPolicy;
    for (const std::uint64_t seed : {11ull, 29ull, 47ull}) {
      QTest::addRow("reserve, leaf-first, seed %llu", static_cast<unsigned long long>(seed))
          << Scenario{config(16, 40, ReserveOnAdmission, 0), true, 1, seed, 3000} << false << false
          << false;
      QTest::addRow("on demand, leaf-first, seed %llu", static_cast<unsigned long long>(seed))
          << Scenario{config(16, 14, OnDemand, 0), true, 1, seed, 3000} << true << false << false;
      QTest::addRow("reserve, host tier, seed %llu", static_cast<unsigned long long>(seed))
          << Scenario{config(8, 24, ReserveOnAdmission, 12), true, 1, seed, 3000} << false << true
          << false;
      QTest::addRow("on demand, host tier, lru, seed %llu", static_cast<unsigned long long>(seed))
          << Scenario{config(8, 20, OnDemand, 8), false, 1, seed, 3000} << true << true << false;
      QTest::addRow("tight, min copy 2, seed %llu", static_cast<unsigned long long>(seed))
          << Scenario{config(4, 14, OnDemand, 4, 2), true, 1, seed, 3000} << true << true << false;
      QTest::addRow("coarse clock, seed %llu", static_cast<unsigned long long>(seed))
          << Scenario{config(8, 32, ReserveOnAdmission, 6), true, 7, seed, 3000} << false << true
          << false;
      // Sliding windows: shorter than a page, not a multiple of one, several.
      QTest::addRow("window 5, reserve, seed %llu", static_cast<unsigned long long>(seed))
          << Scenario{config(8, 24, ReserveOnAdmission, 6, 1, 5), true, 1, seed, 3000} << false
          << true << false;
      QTest::addRow("window 21, on demand, seed %llu", static_cast<unsigned long long>(seed))
          << Scenario{config(8, 16, OnDemand, 4, 1, 21), true, 1, seed, 3000} << true << true
          << false;
      QTest::addRow("window 32, reserve, lru, seed %llu", static_cast<unsigned long long>(seed))
          << Scenario{config(16, 20, ReserveOnAdmission, 0, 1, 32), false, 1, seed, 3000} << false
          << false << false;
      // Two pools: windows shorter than a page and not a multiple of one;
      // window pools barely above a sequence's bound, so that they evict
      // (and, on demand, preempt) on their own. The host tier keeps only
      // main-pool pages, which a turn restores only while the window pool
      // still holds the prefix's window: not expected here.
      QTest::addRow("two pools, window 5, reserve, seed %llu",
                    static_cast<unsigned long long>(seed))
          << Scenario{pooled(8, 32, ReserveOnAdmission, 6, 5, 16), true, 1, seed, 3000} << false
          << false << false;
      QTest::addRow("two pools, window 13, on demand, seed %llu",
                    static_cast<unsigned long long>(seed))
          << Scenario{pooled(8, 24, OnDemand, 4, 13, 8), true, 1, seed, 3000} << true << false
          << false;
      QTest::addRow("two pools, window 21, reserve, lru, seed %llu",
                    static_cast<unsigned long long>(seed))
          << Scenario{pooled(16, 24, ReserveOnAdmission, 0, 21, 12), false, 1, seed, 3000} << false
          << false << false;
      // The disk tier, under and without a host tier, with a sliding window.
      QTest::addRow("disk, reserve, seed %llu", static_cast<unsigned long long>(seed))
          << Scenario{config(8, 24, ReserveOnAdmission, 0), true, 1, seed, 3000} << false << false
          << true;
      QTest::addRow("disk, host tier, on demand, seed %llu", static_cast<unsigned long long>(seed))
          << Scenario{config(8, 20, OnDemand, 6), true, 1, seed, 3000} << true << true << true;
      QTest::addRow("disk, window 21, on demand, seed %llu", static_cast<unsigned long long>(seed))
          << Scenario{config(8, 16, OnDemand, 0, 1, 21), true, 1, seed, 3000} << true << false
          << true;
    }
  }

  void workload() {
    QFETCH(Scenario, scenario);
    QFETCH(bool, expectPreemption);
    QFETCH(bool, expectHostRestores);
    QFETCH(bool, disk);
    Workload workload(scenario, disk);
    const std::string failure = workload.run(scenario.operations);
    QVERIFY2(failure.empty(), failure.c_str());

    // The workload must have exercised what it is meant to test.
    const CacheStats stats = workload.cache().stats();
    qInfo(
        "hit rate %.2f, evictions %lld, copies %lld, dedup %lld, preemptions %lld, host "
        "restores %lld, defragmentations %lld",
        stats.hit_rate(), static_cast<long long>(stats.evictions),
        static_cast<long long>(stats.copied_tokens), static_cast<long long>(stats.dedup_switches),
        static_cast<long long>(stats.preemptions), static_cast<long long>(stats.host_restores),
        static_cast<long long>(stats.defragmentations));
    QVERIFY(stats.reused_tokens > 0);
    QVERIFY(stats.copied_tokens > 0);
    QVERIFY(stats.evictions > 0);
    QVERIFY(stats.dedup_switches > 0);
    QVERIFY(stats.defragmentations > 0);
    QVERIFY(workload.failed_defragmentations() > 0);
    if (expectPreemption) QVERIFY(stats.preemptions > 0);
    if (expectHostRestores) QVERIFY(stats.host_restores > 0);
    if (disk) {
      qInfo("disk saves %lld, disk restores %lld, abandoned restores %d",
            static_cast<long long>(stats.disk_saves), static_cast<long long>(stats.disk_restores),
            workload.abandoned_restores());
      QVERIFY(stats.disk_saves > 0);
      QVERIFY(stats.disk_restores > 0);
      QVERIFY(workload.abandoned_restores() > 0);
    }
  }
};

QUIRE_TEST(PageCacheRandomizedTest)
#include "test_page_cache_randomized.moc"
