// Sliding windows: a sequence holds only the pages its next queries can read.
// Pages that fall wholly before the window go back to the cache under their
// hash (reusable by a later turn, evictable like any cached page), and pages
// after it are taken as the sequence reaches them. Under ReserveOnAdmission
// the pages a sequence may still take, up to its bound, are promised to it, so
// nothing it needs can be taken by a later admission.

#include <algorithm>
#include <stdexcept>

#include "page_cache_mutation.h"
#include "quire/cache/page_cache.h"

namespace quire::cache {

std::size_t PageCache::first_kept_page(std::int32_t position) const {
  if (config_.window == 0) return 0;
  const std::int32_t first_key = std::max(0, position - config_.window + 1);
  return static_cast<std::size_t>(first_key / config_.page_size);
}

int PageCache::owned_pages(const Sequence& seq) const {
  int count = 0;
  for (std::size_t slot = 0; slot < seq.pages.size(); ++slot)
    count += seq.pages[slot] != kNoPage && seq.owned[slot];
  return count;
}

int PageCache::untaken_slots(const Sequence& seq, std::size_t end_slot) const {
  int missing = 0;
  for (std::size_t slot = first_kept_page(seq.computed); slot < end_slot; ++slot) {
    if (slot >= seq.pages.size() || seq.pages[slot] == kNoPage) ++missing;
  }
  return missing;
}

int PageCache::obtainable_pages(const std::set<PageIndex>& pinned) const {
  return static_cast<int>(free_.size() + eviction_candidates(pinned).size());
}

void PageCache::update_reservation(Sequence& seq) {
  int wanted = 0;
  if (config_.window > 0 && config_.reservation == ReservationPolicy::ReserveOnAdmission) {
    const int room = std::max(0, seq.bound - owned_pages(seq));
    wanted = std::min(room, untaken_slots(seq, seq.pages.size()));
    // A promise grows only from pages nobody else is promised: handing back a
    // page that another sequence still reads frees nothing.
    if (wanted > seq.reserved) {
      const int spare = std::max(0, obtainable_pages({}) - reserved_pages_);
      wanted = std::min(wanted, seq.reserved + spare);
    }
  }
  reserved_pages_ += wanted - seq.reserved;
  seq.reserved = wanted;
}

void PageCache::drop_out_of_window(Sequence& seq) {
  if (config_.window == 0) return;
  seq.whole = false;
  const std::size_t keep = std::min(first_kept_page(seq.computed), seq.pages.size());
  const std::uint64_t now = clock_->now();
  for (std::size_t slot = 0; slot < keep; ++slot) {
    const PageIndex index = seq.pages[slot];
    if (index == kNoPage) continue;
    seq.pages[slot] = kNoPage;
    seq.owned[slot] = false;
    mutate(index, [&](PageRecord& page) {
      --page.refs;
      page.last_access = now;
    });
    if (record(index).refs == 0) settle_unreferenced(index);
  }
  update_reservation(seq);
}

void PageCache::assign_slot(Sequence& seq, std::size_t position, PageIndex index) {
  const std::size_t size = static_cast<std::size_t>(config_.page_size);
  const std::size_t begin = position * size;
  const std::size_t count =
      seq.tokens.size() > begin ? std::min(size, seq.tokens.size() - begin) : 0;
  const bool hashed = position < seq.hashes.size();
  const bool indexable = hashed && !index_.contains(seq.hashes[position]);
  mutate(index, [&](PageRecord& page) {
    PageIdentity& identity = page.identity;
    std::copy_n(seq.tokens.begin() + static_cast<std::ptrdiff_t>(begin), count,
                identity.tokens.begin());
    identity.filled = static_cast<std::int32_t>(count);
    if (position == 0) {
      identity.link = ChainLink::Root;
    } else if (position - 1 < seq.hashes.size()) {
      identity.link = ChainLink::Known;
      identity.previous = seq.hashes[position - 1];
    } else {
      identity.link = ChainLink::Unknown;
    }
    if (hashed) {
      identity.hash = seq.hashes[position];
      identity.hashed = true;
      page.indexed = indexable;
    }
  });
  if (indexable) index_.emplace(seq.hashes[position], index);
  seq.pages[position] = index;
  seq.owned[position] = true;
}

AppendResult PageCache::take_slots(SequenceId id, std::size_t end_slot) {
  AppendResult result;
  Acquisition acquisition;
  // Find room, preempting the youngest sequences if the policy allows it.
  for (;;) {
    const Sequence& seq = sequence(id);
    const int missing = untaken_slots(seq, end_slot);
    if (missing == 0) return result;
    acquisition = plan_acquisition(missing, {}, {});
    bool enough = static_cast<int>(acquisition.pages.size()) == missing;
    // Pages promised to other sequences are not for the taking.
    const int promised = reserved_pages_ - seq.reserved;
    if (enough && promised > 0) enough = obtainable_pages({}) - missing >= promised;
    if (enough) break;
    if (config_.reservation != ReservationPolicy::OnDemand) {
      result.status = AppendStatus::NoSpace;
      return result;
    }
    const SequenceId youngest = sequences_.rbegin()->first;
    preempt(youngest);
    result.preempted.push_back(youngest);
    if (youngest == id) {
      result.status = AppendStatus::Preempted;
      return result;
    }
  }

  ++generation_;
  take_pages(acquisition, clock_->now());
  result.saves = acquisition.saves;
  result.disk_saves = acquisition.disk_saves;
  Sequence& seq = sequence(id);
  if (seq.pages.size() < end_slot) {
    seq.pages.resize(end_slot, kNoPage);
    seq.owned.resize(end_slot, false);
  }
  std::size_t next = 0;
  for (std::size_t slot = first_kept_page(seq.computed); slot < end_slot; ++slot) {
    if (seq.pages[slot] == kNoPage) assign_slot(seq, slot, acquisition.pages[next++]);
  }
  update_reservation(seq);
  return result;
}

AppendResult PageCache::ensure_pages_here(SequenceId id, std::int32_t end) {
  const Sequence& seq = sequence(id);
  if (end < 0 || static_cast<std::size_t>(end) > seq.tokens.size()) {
    throw std::out_of_range("ensure_pages past the sequence's " +
                            std::to_string(seq.tokens.size()) + " tokens");
  }
  const std::size_t size = static_cast<std::size_t>(config_.page_size);
  return take_slots(id, (static_cast<std::size_t>(end) + size - 1) / size);
}

}  // namespace quire::cache
