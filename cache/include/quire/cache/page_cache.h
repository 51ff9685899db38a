#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "quire/cache/cache_config.h"
#include "quire/cache/cache_stats.h"
#include "quire/cache/clock.h"
#include "quire/cache/disk_index.h"
#include "quire/cache/eviction_policy.h"
#include "quire/cache/host_tier.h"
#include "quire/cache/page_hash.h"
#include "quire/cache/page_moves.h"
#include "quire/cache/page_record.h"
#include "quire/cache/types.h"

namespace quire::cache {

// Copy the K/V of the first `tokens` positions of page `source` into page
// `destination` (every layer), instead of computing them.
struct PageCopy {
  PageIndex source = kNoPage;
  PageIndex destination = kNoPage;
  std::int32_t tokens = 0;
  friend bool operator==(const PageCopy&, const PageCopy&) = default;
};

// Save device page `page` into host slot `slot` before the page is reused.
struct HostSave {
  PageIndex page = kNoPage;
  HostSlot slot = -1;
  friend bool operator==(const HostSave&, const HostSave&) = default;
};

// Restore host slot `slot` into device page `page`.
struct HostRestore {
  HostSlot slot = -1;
  PageIndex page = kNoPage;
  friend bool operator==(const HostRestore&, const HostRestore&) = default;
};

// Token positions [begin, end) of a sequence.
struct TokenRange {
  std::int32_t begin = 0;
  std::int32_t end = 0;
  friend bool operator==(const TokenRange&, const TokenRange&) = default;
};

// Byte work the engine must execute before it computes anything for the
// sequence, in this order: saves (to the host tier and to disk), then
// restores (from the host tier and from disk), then copies. Everything but
// window_copies concerns the layers of the main pool; window_copies, the
// layers whose pages come from the window pool (CacheConfig::layer_window).
struct CacheInstructions {
  std::vector<HostSave> saves;
  std::vector<DiskSave> disk_saves;
  std::vector<HostRestore> restores;
  std::vector<DiskRestore> disk_restores;
  std::vector<PageCopy> copies;
  std::vector<PageCopy> window_copies;

  bool empty() const {
    return saves.empty() && disk_saves.empty() && restores.empty() && disk_restores.empty() &&
           copies.empty() && window_copies.empty();
  }
};

struct AdmissionRequest {
  std::vector<TokenId> tokens;
  std::int32_t max_new_tokens = 0;
  // Give every prompt position a page even where a sliding window makes its
  // K/V unnecessary: for recomputing the whole prompt.
  bool every_page = false;
  // Positions from here on are computed even where the cache holds their
  // K/V; -1: no limit. A cache with a window pool sets it so that both of
  // its pools start computing at the same position.
  std::int32_t reuse_limit = -1;
};

enum class AdmissionStatus : std::uint8_t {
  Fits,          // commit() will succeed
  WaitForPages,  // pages are held by running sequences; try again when one ends
  NeverFits,     // the request exceeds the whole cache
};

// The outcome of PageCache::prepare(): what admitting a request would do. It
// changes nothing; commit() applies it if the cache has not changed since.
class AdmissionPlan {
 public:
  AdmissionStatus status() const { return status_; }
  bool fits() const { return status_ == AdmissionStatus::Fits; }
  // Why the request does not fit, for people.
  const std::string& reason() const { return reason_; }
  // Pages the request needs that it cannot share, and how many could be had now
  // (free pages, plus cached ones when free pages are not enough).
  int pages_needed() const { return pages_needed_; }
  int pages_available() const { return pages_available_; }
  // Prompt tokens that would not have to be computed.
  std::int32_t cached_tokens() const { return cached_tokens_; }
  // Of those, the tokens of pages read back from the disk tier.
  std::int32_t disk_tokens() const { return disk_tokens_; }

 private:
  friend class PageCache;

  // Restore: from the host tier; Disk: from the disk tier.
  // Skip: before the window of the cached prefix, never needed (no page).
  // Later: a page taken when the sequence reaches it (no page yet).
  enum class Source : std::uint8_t { Fresh, Share, Revive, Restore, Disk, Skip, Later };
  // Whether a slot of this source takes a page of its own now (from the free
  // or evictable pages), rather than sharing one or waiting.
  static bool takes_page(Source source) {
    return source == Source::Fresh || source == Source::Restore || source == Source::Disk;
  }
  struct Slot {
    Source source = Source::Fresh;
    PageIndex page = kNoPage;  // chosen page (shared, revived or newly taken)
    HostSlot host = -1;        // for Restore
    std::int32_t copy_tokens = 0;
    PageIndex copy_source = kNoPage;
  };

  AdmissionStatus status_ = AdmissionStatus::NeverFits;
  std::string reason_;
  int pages_needed_ = 0;
  int pages_available_ = 0;
  std::int32_t cached_tokens_ = 0;
  std::int32_t disk_tokens_ = 0;

  std::uint64_t generation_ = 0;
  AdmissionRequest request_;
  std::vector<PageHash> hashes_;  // chained hashes of the context pages
  std::vector<Slot> slots_;       // one per page of the new sequence's table
  std::vector<PageIndex> victims_;
  std::vector<HostSave> saves_;
  std::vector<DiskSave> disk_saves_;
  int reservation_ = 0;  // pages promised for Later slots
  int bound_ = 0;        // pages the sequence may hold at once
  // The same request's plan in the window pool, when the cache has one.
  std::shared_ptr<const AdmissionPlan> window_plan_;
};

// A new sequence that continues the first `length` tokens of a live one
// (PageCache::branch): regenerating a reply while keeping the old one, editing
// an earlier message, several replies to one prompt.
struct BranchRequest {
  SequenceId source = 0;
  // Tokens of the source the branch starts with: [0, length). -1: all of them.
  std::int32_t length = -1;
  // Tokens the branch may add, as AdmissionRequest::max_new_tokens.
  std::int32_t max_new_tokens = 0;
};

struct Admission {
  SequenceId sequence = 0;
  CacheInstructions instructions;
  // Prompt positions whose K/V must still be computed, ascending.
  std::vector<TokenRange> compute;
  // Prompt tokens that are not computed (shared, revived, restored or copied).
  std::int32_t cached_tokens = 0;
  // Of those, the tokens of pages read back from the disk tier.
  std::int32_t disk_tokens = 0;
  int evicted_pages = 0;
};

enum class AppendStatus : std::uint8_t {
  Appended,
  Preempted,  // the appending sequence was itself preempted (released as cached)
  NoSpace,    // no page could be had; nothing changed
};

struct AppendResult {
  AppendStatus status = AppendStatus::Appended;
  // Sequences preempted to make room (released as cached; resume by admitting
  // their tokens again). Contains the appending sequence when status is Preempted.
  std::vector<SequenceId> preempted;
  // Host and disk saves to execute before the new pages are written.
  std::vector<HostSave> saves;
  std::vector<DiskSave> disk_saves;
};

struct DefragPlan {
  std::vector<PageMoveChain> moves;
  int pages_moved = 0;
};

// The bookkeeping of a paged KV cache shared by every conversation: pages,
// page tables, chained page hashes, the prefix index, eviction, the host tier,
// defragmentation and statistics. It holds no K/V bytes: it hands out page
// indices and instructions that the engine executes on its buffers.
// Not thread-safe: the engine thread owns it and publishes snapshots.
class PageCache {
 public:
  explicit PageCache(CacheConfig config, std::unique_ptr<EvictionPolicy> policy = nullptr,
                     std::unique_ptr<Clock> clock = nullptr);
  ~PageCache();
  PageCache(const PageCache&) = delete;
  PageCache& operator=(const PageCache&) = delete;

  const CacheConfig& config() const { return config_; }
  int page_size() const { return config_.page_size; }
  int num_pages() const { return config_.num_pages; }
  // Pages promised to running sequences that they have not taken yet.
  int reserved_pages() const { return reserved_pages_; }

  // Admission, as a transaction: prepare() plans without changing anything;
  // commit() applies a plan that fits and was prepared against the current state
  // (it throws std::logic_error otherwise). admit() does both.
  AdmissionPlan prepare(AdmissionRequest request) const;
  Admission commit(AdmissionPlan plan);
  std::optional<Admission> admit(AdmissionRequest request, AdmissionPlan* refused = nullptr);

  // Makes a new sequence from the first `length` tokens of a live one, as
  // copy-on-write: the branch shares every full page of that prefix whose
  // K/V the source has written (reference counts up, nothing computed) and
  // gets its own page for the rest, into which the written part of the
  // source's page is copied (instructions.copies: at most one copy). Both then
  // grow independently; shared pages are never written, as append() checks.
  // Positions the source has not computed yet are left to compute
  // (Admission::compute). Nothing when the branch's own pages cannot be had
  // now, or the source has handed back pages of the prefix's window (then
  // `refused` says why; admitting the tokens finds those pages by hash).
  // Throws std::out_of_range for an unknown source or a length past its tokens.
  std::optional<Admission> branch(const BranchRequest& request, AdmissionPlan* refused = nullptr);

  // Adds decoded tokens to a sequence, taking pages as needed.
  AppendResult append(SequenceId sequence, std::span<const TokenId> tokens);
  // Takes the pages of positions [0, end) that the sequence does not hold yet:
  // with a sliding window, prompt pages are taken as the prefill reaches them.
  // Without one, admission has taken them all and this changes nothing.
  AppendResult ensure_pages(SequenceId sequence, std::int32_t end);
  // The K/V of the sequence's tokens [0, end) are now written. Pages that fill
  // are hashed; a page whose hash a valid page already has is swapped for it.
  void mark_computed(SequenceId sequence, std::int32_t end);
  // A step over positions [begin, end) of the sequence failed midway, so
  // some layers' K/V there may be written: each page there forgets the
  // content it held before it was taken (it would otherwise get that back
  // on release, with some layers overwritten). What mark_computed counts as
  // written stays so.
  void mark_overwritten(SequenceId sequence, std::int32_t begin, std::int32_t end);
  // Gives back the sequence's tokens [length, end), appended but never
  // computed (computed <= length): a speculative step's rejected drafts,
  // whose K/V a forward pass wrote. Only the sequence's own unsealed tail
  // changes: its pages stay in its table (empty slots for later tokens),
  // forget the content they held before they were taken (as mark_overwritten),
  // and count only the tokens kept. Sealed pages and pages other sequences
  // hold are never touched, since everything past `computed` is the
  // sequence's own. Throws std::out_of_range for a length outside
  // [computed, tokens].
  void truncate(SequenceId sequence, std::int32_t length);
  // Ends a sequence. Its pages keep their content as cached pages.
  void release(SequenceId sequence);
  // The instructions of the sequence's admission failed midway, so pages
  // they restore or copy into hold unknown bytes and so may the host slots
  // they save into: those pages and slots forget their content (it is
  // computed again when next needed) and the sequence ends. Pages the
  // instructions did not write keep what they held before.
  void abandon(SequenceId sequence, const CacheInstructions& instructions);
  // Saves into the host tier that failed: their slots forget their content.
  void drop_host_saves(std::span<const HostSave> saves);
  // Ends a sequence whose last step failed somewhere unknown: every page
  // past what mark_computed counts as written is taken as overwritten
  // (mark_overwritten), then the sequence is released.
  void release_after_failure(SequenceId sequence);

  bool contains(SequenceId sequence) const { return sequences_.contains(sequence); }
  std::vector<SequenceId> sequences() const;
  // One entry per page of the sequence; kNoPage where a sliding window has
  // handed the page back (or not yet taken it).
  std::span<const PageIndex> page_table(SequenceId sequence) const;
  // The sequence's table in the window pool, which the windowed layers read
  // and write; page_table() where the cache has no window pool.
  std::span<const PageIndex> window_page_table(SequenceId sequence) const;
  // The pool of the windowed layers' pages (CacheConfig::layer_window), or
  // nothing: its statistics, pages and configuration. Every sequence of this
  // cache has one there; the pool is changed only through this cache.
  const PageCache* window_pool() const { return window_pool_.get(); }
  // The sequence's id in the window pool (whose pages name their holders by
  // those ids); throws std::out_of_range for a sequence this cache lacks.
  // Needs a window pool.
  SequenceId window_sequence(SequenceId sequence) const;
  std::span<const TokenId> tokens(SequenceId sequence) const;
  std::int32_t computed(SequenceId sequence) const;

  // Lays pages out along their hash chains when that is worth it: every page has
  // been touched since the last defragmentation and more than the configured
  // fraction would move. Applies the new layout to the bookkeeping and returns
  // the moves the engine must execute before the next step.
  std::optional<DefragPlan> defragment();
  // The engine could not carry out a defragmentation's moves (a copy failed
  // part way), so every page they touch holds unknown bytes: each forgets its
  // content, which is computed again when next needed. Returns the sequences
  // that hold one of those pages; their K/V there is lost, so they must end
  // (release_after_failure) before anything reads them.
  std::vector<SequenceId> forget_moved_pages(const DefragPlan& plan);

  // Records where the autosplit placed an attention layer's storage.
  void place_layer(std::size_t layer, int device);

  // The disk tier below the host tier, or null for none. With one, every
  // full hashed page evicted from the device is saved to disk unless the
  // index holds it already (instructions' disk_saves), and admission
  // restores pages the index holds that neither memory tier has
  // (disk_restores). The index must outlive its use here. Throws
  // std::invalid_argument for a cache with a window pool, whose windowed
  // layers' pages the disk tier does not keep.
  void attach_disk(const DiskIndex* index);
  const DiskIndex* disk() const { return disk_; }

  CacheStats stats() const;
  std::vector<PageInfo> pages() const;
  const PageRecord& page(PageIndex index) const {
    return pages_.at(static_cast<std::size_t>(index));
  }

  // Descriptions of every broken invariant; empty when the cache is consistent.
  std::vector<std::string> check_invariants() const;

 private:
  // This pool's own share of the public operations of the same name; those
  // apply them to the window pool too, when there is one (page_cache_pools.cpp).
  AdmissionPlan prepare_here(AdmissionRequest request) const;
  Admission commit_here(AdmissionPlan plan);
  std::optional<Admission> branch_here(const BranchRequest& request, AdmissionPlan* refused);
  AppendResult append_here(SequenceId sequence, std::span<const TokenId> tokens);
  AppendResult ensure_pages_here(SequenceId sequence, std::int32_t end);
  void mark_computed_here(SequenceId sequence, std::int32_t end);
  void mark_overwritten_here(SequenceId sequence, std::int32_t begin, std::int32_t end);
  void truncate_here(SequenceId sequence, std::int32_t length);
  void release_here(SequenceId sequence);
  void abandon_here(SequenceId sequence, const CacheInstructions& instructions);
  void release_after_failure_here(SequenceId sequence);

  // Two pools (page_cache_pools.cpp).
  // Plans the request in both pools, each reusing no more than the other.
  AdmissionPlan prepare_pooled(AdmissionRequest request) const;
  // Positions [0, n) of the planned prompt that need no computing.
  std::int32_t covered_prefix(const AdmissionPlan& plan) const;
  // Ends in the other pool the sequences one pool preempted.
  void settle_preemptions(AppendResult& main, AppendResult& window);

  struct Sequence {
    std::vector<PageIndex> pages;
    std::vector<TokenId> tokens;
    std::int32_t computed = 0;
    // Chain hashes of the sequence's first full pages, in order: a page's
    // successor is hashed from them even after the page itself is handed back.
    std::vector<PageHash> hashes;
    // Per slot: the page was taken from the free or evictable pages for this
    // sequence (not shared from another). Only these count against its bound.
    std::vector<bool> owned;
    int bound = 0;       // owned pages held at most at once (window + step)
    int reserved = 0;    // pages promised to it under ReserveOnAdmission
    bool whole = false;  // recomputing its whole prompt: nothing handed back yet
    // What its admission added to the counters, taken back if it is abandoned.
    struct Admitted {
      std::int64_t prompt = 0, reused = 0, copied = 0, restored = 0, host_restores = 0,
                   disk_restored = 0, disk_restores = 0, computed = 0;
    } admitted;
  };
  struct Counters {
    std::int64_t prompt_tokens = 0, reused_tokens = 0, copied_tokens = 0, restored_tokens = 0,
                 computed_tokens = 0, generated_tokens = 0, evictions = 0, host_saves = 0,
                 host_restores = 0, host_evictions = 0, dedup_switches = 0, preemptions = 0,
                 defragmentations = 0, pages_moved = 0, branches = 0, disk_saves = 0,
                 disk_restores = 0, disk_restored_tokens = 0;
  };
  struct StateCounts {
    int free = 0, referenced = 0, cached = 0, shared = 0;
  };
  struct Acquisition {
    std::vector<PageIndex> pages;    // free pages first, then victims
    std::vector<PageIndex> victims;  // the evicted subset
    std::vector<HostSave> saves;
    std::vector<DiskSave> disk_saves;
    int available = 0;  // free pages, plus eviction candidates when they were needed
  };

  PageRecord& record(PageIndex index) { return pages_[static_cast<std::size_t>(index)]; }
  Sequence& sequence(SequenceId id);
  const Sequence& sequence(SequenceId id) const;

  // Every change to a page goes through here so state counts and the free set
  // follow it.
  template <typename Change>
  void mutate(PageIndex index, Change&& change);

  // Pages for `count` new slots: free pages, then victims of the eviction
  // policy (not touching `pinned`), with host saves for evicted full pages.
  Acquisition plan_acquisition(int count, const std::set<PageIndex>& pinned,
                               std::span<const HostSlot> pinned_slots) const;
  std::vector<EvictionCandidate> eviction_candidates(const std::set<PageIndex>& pinned) const;
  // Executes the host saves and takes the pages' old identities aside.
  void take_pages(const Acquisition& acquisition, std::uint64_t now);
  // Best cached sibling to copy the leading tokens of a page from.
  std::pair<PageIndex, std::int32_t> best_copy_source(ChainLink link, const PageHash* previous,
                                                      std::span<const TokenId> tokens,
                                                      std::int32_t limit) const;
  void finish_page(Sequence& seq, std::size_t position);
  void settle_unreferenced(PageIndex index);
  void clear_identity(PageRecord& page);
  std::optional<PageIndex> indexed_page(const PageHash& hash) const;
  std::optional<PageIndex> chain_parent(const PageIdentity& identity) const;
  void preempt(SequenceId id);

  // Sliding windows (page_cache_window.cpp).
  // First page holding a key that a query at `position` or later may read.
  std::size_t first_kept_page(std::int32_t position) const;
  int owned_pages(const Sequence& seq) const;
  int untaken_slots(const Sequence& seq, std::size_t end_slot) const;
  // Hands back the pages wholly before the window of the next position.
  void drop_out_of_window(Sequence& seq);
  // Pages still promised to the sequence: what it may yet take, up to its bound.
  void update_reservation(Sequence& seq);
  // Takes pages for the untaken slots before `end_slot`, growing the table.
  AppendResult take_slots(SequenceId id, std::size_t end_slot);
  // Gives a newly taken page of slot `position` its tokens and chain links.
  void assign_slot(Sequence& seq, std::size_t position, PageIndex index);
  // Free and evictable pages outside `pinned`.
  int obtainable_pages(const std::set<PageIndex>& pinned) const;

  CacheConfig config_;
  // The windowed layers' pool, and each sequence's id there.
  std::unique_ptr<PageCache> window_pool_;
  std::map<SequenceId, SequenceId> window_sequences_;
  std::unique_ptr<EvictionPolicy> policy_;
  std::unique_ptr<Clock> clock_;
  PlaceholderSource placeholders_;
  std::vector<PageRecord> pages_;
  std::unordered_map<PageHash, PageIndex, PageHashHasher> index_;
  std::set<PageIndex> free_;
  std::map<SequenceId, Sequence> sequences_;
  SequenceId next_sequence_ = 1;
  HostTier host_;
  const DiskIndex* disk_ = nullptr;
  std::uint64_t generation_ = 0;
  std::uint64_t defrag_epoch_ = 0;
  int reserved_pages_ = 0;  // sum of the sequences' reservations
  StateCounts counts_;
  Counters counters_;
};

const char* to_string(AdmissionStatus status);

}  // namespace quire::cache
