// Taking pages for a sequence: free pages first, then victims of the
// eviction policy, whose content is saved to the host and disk tiers on the
// way out. Admission, append and ensure_pages share it.

#include <algorithm>

#include "page_cache_mutation.h"
#include "quire/cache/page_cache.h"

namespace quire::cache {

std::vector<EvictionCandidate> PageCache::eviction_candidates(
    const std::set<PageIndex>& pinned) const {
  // Children are counted over every page with content, so a cached page that a
  // running sequence continues is never a leaf.
  std::vector<int> children(pages_.size(), 0);
  std::vector<PageIndex> parents(pages_.size(), kNoPage);
  for (PageIndex index = 0; index < config_.num_pages; ++index) {
    const PageRecord& page = this->page(index);
    if (page.state() == PageState::Free) continue;
    if (const std::optional<PageIndex> parent = chain_parent(page.identity)) {
      parents[static_cast<std::size_t>(index)] = *parent;
      ++children[static_cast<std::size_t>(*parent)];
    }
  }
  std::vector<EvictionCandidate> candidates;
  for (PageIndex index = 0; index < config_.num_pages; ++index) {
    const PageRecord& page = this->page(index);
    if (page.state() != PageState::Cached || pinned.contains(index)) continue;
    candidates.push_back(EvictionCandidate{index, page.last_access,
                                           parents[static_cast<std::size_t>(index)],
                                           children[static_cast<std::size_t>(index)]});
  }
  return candidates;
}

PageCache::Acquisition PageCache::plan_acquisition(int count, const std::set<PageIndex>& pinned,
                                                   std::span<const HostSlot> pinned_slots) const {
  Acquisition acquisition;
  if (count <= 0) return acquisition;
  for (auto it = free_.begin(); it != free_.end() && acquisition.pages.size() < std::size_t(count);
       ++it) {
    acquisition.pages.push_back(*it);
  }
  acquisition.available = static_cast<int>(free_.size());
  const std::size_t missing = static_cast<std::size_t>(count) - acquisition.pages.size();
  if (missing == 0) return acquisition;

  const std::vector<EvictionCandidate> candidates = eviction_candidates(pinned);
  acquisition.available += static_cast<int>(candidates.size());

  acquisition.victims = policy_->select(candidates, missing);
  if (acquisition.victims.size() < missing) return acquisition;  // caller sees the shortfall
  acquisition.pages.insert(acquisition.pages.end(), acquisition.victims.begin(),
                           acquisition.victims.end());

  // Every full page evicted goes to disk unless it is there already; the
  // host tier, when there is one, keeps it too, for a faster way back.
  if (disk_) {
    for (const PageIndex victim : acquisition.victims) {
      const PageIdentity& identity = page(victim).identity;
      if (!identity.hashed || identity.valid != config_.page_size) continue;
      if (disk_->holds(identity.hash)) continue;
      std::optional<PageHash> parent;
      if (identity.link == ChainLink::Known) parent = identity.previous;
      acquisition.disk_saves.push_back(DiskSave{victim, identity.hash, parent});
    }
  }
  if (host_.capacity() == 0) return acquisition;
  std::vector<HostSlot> taken(pinned_slots.begin(), pinned_slots.end());
  for (const PageIndex victim : acquisition.victims) {
    const PageIdentity& identity = page(victim).identity;
    if (!identity.hashed || identity.valid != config_.page_size) continue;
    if (host_.find(identity.hash)) continue;  // already kept there
    const std::optional<HostSlot> slot = host_.choose_slot(taken);
    if (!slot) break;
    acquisition.saves.push_back(HostSave{victim, *slot});
    taken.push_back(*slot);
  }
  return acquisition;
}

void PageCache::take_pages(const Acquisition& acquisition, std::uint64_t now) {
  for (const HostSave& save : acquisition.saves) {
    if (host_.occupied(save.slot)) ++counters_.host_evictions;
    host_.store(save.slot, page(save.page).identity, now);
    ++counters_.host_saves;
  }
  counters_.disk_saves += static_cast<std::int64_t>(acquisition.disk_saves.size());
  for (const PageIndex victim : acquisition.victims) {
    mutate(victim, [&](PageRecord& page) {
      if (page.indexed) {
        index_.erase(page.identity.hash);
        page.indexed = false;
      }
      // Kept aside: if the new owner never writes the page, it gets this back.
      page.saved = page.identity;
      page.identity.hash = placeholders_.next();
      page.identity.hashed = false;
      page.identity.link = ChainLink::Unknown;
      page.identity.filled = 0;
      page.identity.valid = 0;
      page.refs = 1;  // the caller hands the page to its sequence
      page.last_access = now;
    });
    ++counters_.evictions;
  }
  for (const PageIndex index : acquisition.pages) {
    mutate(index, [&](PageRecord& page) {
      page.refs = 1;
      page.last_access = now;
    });
  }
}

}  // namespace quire::cache
