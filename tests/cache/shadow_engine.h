#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "quire/cache/page_cache.h"

namespace quire::test {

// A stand-in for the engine's K/V buffers. Each token slot of a page holds a
// fingerprint of the whole token prefix that produced it (as a real K/V vector
// depends on every earlier token), so reading a slot tells exactly whether the
// cache's bookkeeping put the right content there. Unwritten slots hold junk.
// A cache with a window pool has a second set of pages for it: each computed
// position is written in both, as the engine's windowed and global layers do.
// It also plays the disk tier (attach_disk): page contents by hash, which
// outlive the cache, as files outlive a process.
class ShadowEngine : public cache::DiskIndex {
 public:
  using Disk =
      std::unordered_map<cache::PageHash, std::vector<std::uint64_t>, cache::PageHashHasher>;

  explicit ShadowEngine(cache::PageCache& cache);
  ~ShadowEngine() override;

  // Serves as the cache's disk tier, starting with `disk`'s pages (another
  // engine's disk(), to play a restart).
  void attach_disk(Disk disk = {});
  const Disk& disk() const { return disk_; }
  Disk& disk() { return disk_; }
  bool holds(const cache::PageHash& hash) const override { return disk_.contains(hash); }
  // Disk restores whose page was not on disk when executed (their device
  // page is left with junk, as a failed read leaves it).
  const std::vector<cache::DiskRestore>& failed_restores() const { return failed_restores_; }

  // Fingerprint of tokens [0, i] for every i.
  static std::vector<std::uint64_t> fingerprints(std::span<const cache::TokenId> tokens);

  void execute(const cache::CacheInstructions& instructions);
  void execute_saves(std::span<const cache::HostSave> saves,
                     std::span<const cache::DiskSave> disk_saves = {});
  // Takes the range's pages, writes its K/V and reports it computed (in steps
  // of the cache's max_step_tokens when it has a window). Returns what taking
  // the pages did: any status but Appended stops the computation there.
  cache::AppendResult compute(cache::SequenceId sequence, cache::TokenRange range);
  // Executes an admission's instructions and every compute range.
  void prefill(const cache::Admission& admission);
  // Appends one token, computes it, and returns the cache's answer.
  cache::AppendResult decode(cache::SequenceId sequence, cache::TokenId token);
  // A speculative step: appends `tokens` (a token and its drafts), writes
  // the K/V of every one of them as a forward pass would, then keeps the
  // first `keep` (PageCache::truncate) and reports those computed.
  cache::AppendResult speculate(cache::SequenceId sequence, std::span<const cache::TokenId> tokens,
                                std::int32_t keep);
  void apply(const cache::DefragPlan& plan);

  // Empty when every computed position of the sequence holds the right K/V.
  std::string verify_sequence(cache::SequenceId sequence);
  // Empty when every cached page under a hash holds that hash's content.
  std::string verify_cached_pages() const;

  std::uint64_t slot(cache::PageIndex page, int position) const {
    return device_[static_cast<std::size_t>(page)][static_cast<std::size_t>(position)];
  }

 private:
  using Pages = std::vector<std::vector<std::uint64_t>>;
  using ByHash =
      std::unordered_map<cache::PageHash, std::vector<std::uint64_t>, cache::PageHashHasher>;

  std::uint64_t junk();
  Pages junk_pages(int count);
  // One pool's side of verify_sequence and verify_cached_pages.
  std::string verify_table(const cache::PageCache& pool, const Pages& pages,
                           std::span<const cache::PageIndex> table, cache::SequenceId sequence,
                           std::int32_t window, ByHash& by_hash);
  static std::string verify_pool(const cache::PageCache& pool, const Pages& pages,
                                 const ByHash& by_hash);

  cache::PageCache& cache_;
  int page_size_;
  Pages window_device_;  // the window pool's pages
  ByHash window_by_hash_;
  std::vector<std::vector<std::uint64_t>> device_;
  std::vector<std::vector<std::uint64_t>> host_;
  std::vector<std::uint64_t> buffer_;
  std::unordered_map<cache::PageHash, std::vector<std::uint64_t>, cache::PageHashHasher> by_hash_;
  std::uint64_t junk_state_ = 0x5eed;
  bool disk_attached_ = false;
  Disk disk_;
  std::vector<cache::DiskRestore> failed_restores_;
};

}  // namespace quire::test
