// Admission of a new sequence: planning (prepare) and applying (commit), plus
// the page acquisition that append() shares.

#include <algorithm>
#include <stdexcept>

#include "page_cache_mutation.h"
#include "quire/cache/page_cache.h"

namespace quire::cache {
namespace {

std::int32_t common_prefix(std::span<const TokenId> a, std::span<const TokenId> b) {
  const std::size_t limit = std::min(a.size(), b.size());
  std::size_t n = 0;
  while (n < limit && a[n] == b[n])
    ++n;
  return static_cast<std::int32_t>(n);
}

std::string tokens_text(std::int64_t tokens) {
  return std::to_string(tokens) + " tokens";
}

}  // namespace

std::pair<PageIndex, std::int32_t> PageCache::best_copy_source(ChainLink link,
                                                               const PageHash* previous,
                                                               std::span<const TokenId> tokens,
                                                               std::int32_t limit) const {
  PageIndex best = kNoPage;
  std::int32_t best_tokens = 0;
  for (PageIndex index = 0; index < config_.num_pages; ++index) {
    const PageRecord& page = this->page(index);
    const PageIdentity& identity = page.identity;
    if (identity.valid == 0 || identity.link != link) continue;
    if (link == ChainLink::Known && identity.previous != *previous) continue;
    const std::int32_t usable = std::min(limit, identity.valid);
    const std::int32_t shared = common_prefix(
        tokens.first(static_cast<std::size_t>(usable)),
        std::span<const TokenId>(identity.tokens.data(), static_cast<std::size_t>(usable)));
    if (shared > best_tokens) {
      best = index;
      best_tokens = shared;
    }
  }
  return {best, best_tokens};
}

AdmissionPlan PageCache::prepare_here(AdmissionRequest request) const {
  AdmissionPlan plan;
  plan.generation_ = generation_;
  const std::int64_t size = config_.page_size;
  const std::int64_t prompt = static_cast<std::int64_t>(request.tokens.size());
  if (request.max_new_tokens < 0) throw std::invalid_argument("max_new_tokens is negative");
  if (prompt == 0) {
    plan.reason_ = "the prompt is empty";
    plan.request_ = std::move(request);
    return plan;
  }
  const std::int64_t total = prompt + request.max_new_tokens;
  const std::int64_t total_pages = (total + size - 1) / size;
  const std::int64_t bound = config_.pages_held_at_most(total);
  if (bound > config_.num_pages) {
    plan.reason_ = "the request needs " + tokens_text(total) + " (prompt " +
                   std::to_string(prompt) + " + up to " + std::to_string(request.max_new_tokens) +
                   " new) but the cache holds " + tokens_text(size * config_.num_pages) +
                   "; enlarge the cache or shorten the conversation";
    plan.pages_needed_ = static_cast<int>(bound);
    plan.pages_available_ = config_.num_pages;
    plan.request_ = std::move(request);
    return plan;
  }

  const std::int64_t prompt_pages = (prompt + size - 1) / size;
  const std::int64_t table_pages =
      config_.reservation == ReservationPolicy::ReserveOnAdmission ? total_pages : prompt_pages;
  // The last prompt token is always computed (its logits start generation), so
  // only the pages before the one that holds it are looked up by hash.
  const std::int64_t context_pages = (prompt - 1) / size;
  const std::span<const TokenId> tokens(request.tokens);
  plan.hashes_ = hash_full_pages(tokens.first(static_cast<std::size_t>(context_pages * size)),
                                 config_.page_size);
  plan.slots_.resize(static_cast<std::size_t>(table_pages));

  std::set<PageIndex> pinned;
  std::vector<HostSlot> pinned_slots;
  std::set<PageIndex> copy_sources;  // pinned only to be copied from
  std::set<PageIndex> shared_pins;   // pinned because the request takes them
  for (std::size_t i = 0; i < plan.hashes_.size(); ++i) {
    if (request.reuse_limit >= 0 && std::int64_t(i + 1) * size > request.reuse_limit) break;
    AdmissionPlan::Slot& slot = plan.slots_[i];
    // A page another sequence is still computing is not shared: the rest of
    // it would be computed into a page two sequences hold. This one computes
    // its own, which becomes a duplicate to swap once both are written.
    const std::optional<PageIndex> found = indexed_page(plan.hashes_[i]);
    if (found && page(*found).identity.valid == config_.page_size) {
      slot.page = *found;
      slot.source =
          page(*found).refs > 0 ? AdmissionPlan::Source::Share : AdmissionPlan::Source::Revive;
      pinned.insert(*found);
      shared_pins.insert(*found);
    } else if (const std::optional<HostSlot> host =
                   found ? std::nullopt : host_.find(plan.hashes_[i])) {
      slot.source = AdmissionPlan::Source::Restore;
      slot.host = *host;
      pinned_slots.push_back(*host);
    } else if (!found && disk_ && disk_->holds(plan.hashes_[i])) {
      slot.source = AdmissionPlan::Source::Disk;
    }
  }

  // With a sliding window, the cached prefix ends at the last page boundary
  // whose window is wholly present; pages before that window are skipped, and
  // found pages after the prefix are computed again (their windows are not).
  const bool windowed = config_.window > 0 && !request.every_page;
  std::size_t prefix_pages = 0;
  if (windowed) {
    for (std::size_t k = plan.hashes_.size(); k > 0 && prefix_pages == 0; --k) {
      // A page another sequence is still computing does not count: the rest
      // of it would be computed here without the window before it.
      bool present = true;
      for (std::size_t i = first_kept_page(static_cast<std::int32_t>(k * size)); i < k; ++i) {
        const AdmissionPlan::Slot& slot = plan.slots_[i];
        present = present && (slot.source == AdmissionPlan::Source::Restore ||
                              slot.source == AdmissionPlan::Source::Disk ||
                              (slot.source != AdmissionPlan::Source::Fresh &&
                               page(slot.page).identity.valid == config_.page_size));
      }
      if (present) prefix_pages = k;
    }
    const std::size_t first = first_kept_page(static_cast<std::int32_t>(prefix_pages * size));
    for (std::size_t i = 0; i < plan.hashes_.size(); ++i) {
      if (i >= first && i < prefix_pages) continue;
      AdmissionPlan::Slot& slot = plan.slots_[i];
      if (slot.source == AdmissionPlan::Source::Share ||
          slot.source == AdmissionPlan::Source::Revive) {
        pinned.erase(slot.page);
        shared_pins.erase(slot.page);
      } else if (slot.source == AdmissionPlan::Source::Restore) {
        pinned_slots.erase(std::find(pinned_slots.begin(), pinned_slots.end(), slot.host));
      }
      slot = AdmissionPlan::Slot{};
      slot.source = i < first ? AdmissionPlan::Source::Skip : AdmissionPlan::Source::Fresh;
    }
  }

  // Pages still to compute may start with tokens a cached sibling already holds.
  for (std::size_t i = 0; i < static_cast<std::size_t>(prompt_pages); ++i) {
    AdmissionPlan::Slot& slot = plan.slots_[i];
    if (slot.source != AdmissionPlan::Source::Fresh) continue;
    // A window's prefix is computed from its end on: only its first page may copy.
    if (windowed && i != prefix_pages) continue;
    const std::size_t begin = i * static_cast<std::size_t>(size);
    const std::size_t count = std::min<std::size_t>(size, request.tokens.size() - begin);
    const bool holds_last = i + 1 == static_cast<std::size_t>(prompt_pages);
    std::int32_t limit = static_cast<std::int32_t>(count) - (holds_last ? 1 : 0);
    if (request.reuse_limit >= 0) {
      limit = std::min<std::int32_t>(limit, request.reuse_limit - static_cast<std::int32_t>(begin));
    }
    if (limit < config_.min_copy_tokens) continue;
    const ChainLink link = i == 0 ? ChainLink::Root : ChainLink::Known;
    const PageHash* previous = i == 0 ? nullptr : &plan.hashes_[i - 1];
    const auto [source, shared] =
        best_copy_source(link, previous, tokens.subspan(begin, count), limit);
    if (source != kNoPage && shared >= config_.min_copy_tokens) {
      slot.copy_source = source;
      slot.copy_tokens = shared;
      pinned.insert(source);
      copy_sources.insert(source);
    }
  }

  // With a window, fresh pages beyond the sequence's bound are taken later, as
  // the prefill reaches them; under ReserveOnAdmission they are promised now.
  plan.bound_ = static_cast<int>(bound);
  int held = 0;
  int later = 0;
  for (AdmissionPlan::Slot& slot : plan.slots_) {
    if (slot.source == AdmissionPlan::Source::Skip) continue;
    const bool decode_slot = &slot - plan.slots_.data() >= prompt_pages;
    if (windowed && slot.source == AdmissionPlan::Source::Fresh && (held >= bound || decode_slot)) {
      slot = AdmissionPlan::Slot{};
      slot.source = AdmissionPlan::Source::Later;
      ++later;
      continue;
    }
    ++held;
  }
  // Shared pages are not counted: once they fall behind the window the
  // sequence takes its own in their place.
  if (config_.reservation == ReservationPolicy::ReserveOnAdmission) {
    int own = 0;
    for (const AdmissionPlan::Slot& slot : plan.slots_)
      own += AdmissionPlan::takes_page(slot.source);
    plan.reservation_ = std::min(later, std::max(0, static_cast<int>(bound) - own));
  }

  int needed = 0;
  for (const AdmissionPlan::Slot& slot : plan.slots_)
    needed += AdmissionPlan::takes_page(slot.source);
  Acquisition acquisition = plan_acquisition(needed, pinned, pinned_slots);
  if (static_cast<int>(acquisition.pages.size()) < needed && !copy_sources.empty()) {
    // Copying K/V from a cached sibling only saves compute; it must never keep
    // a request out. Without the copies their source pages may be reused.
    for (AdmissionPlan::Slot& slot : plan.slots_) {
      slot.copy_source = kNoPage;
      slot.copy_tokens = 0;
    }
    for (const PageIndex source : copy_sources) {
      if (!shared_pins.contains(source)) pinned.erase(source);
    }
    acquisition = plan_acquisition(needed, pinned, pinned_slots);
  }
  plan.pages_needed_ = needed;
  plan.pages_available_ = acquisition.available;
  // Pages promised to running sequences (and to this one) must stay obtainable.
  const int promised = reserved_pages_ + plan.reservation_;
  if (promised > 0 && static_cast<int>(acquisition.pages.size()) == needed) {
    const int spare = obtainable_pages(pinned) - needed;
    if (spare < promised) {
      plan.pages_needed_ = needed + plan.reservation_;
      plan.pages_available_ = std::max(0, obtainable_pages(pinned) - reserved_pages_);
      plan.status_ = AdmissionStatus::WaitForPages;
      plan.reason_ = "the request needs " + std::to_string(plan.pages_needed_) +
                     " pages but only " + std::to_string(plan.pages_available_) +
                     " can be had while the running jobs hold or are promised theirs";
      plan.request_ = std::move(request);
      return plan;
    }
  }
  if (static_cast<int>(acquisition.pages.size()) < needed) {
    plan.status_ = AdmissionStatus::WaitForPages;
    plan.reason_ = "the request needs " + std::to_string(needed) + " free pages but only " +
                   std::to_string(acquisition.available) +
                   " can be had while the running jobs hold theirs";
    plan.request_ = std::move(request);
    return plan;
  }

  std::size_t next = 0;
  for (AdmissionPlan::Slot& slot : plan.slots_) {
    if (AdmissionPlan::takes_page(slot.source)) slot.page = acquisition.pages[next++];
  }
  plan.victims_ = acquisition.victims;
  plan.saves_ = acquisition.saves;
  plan.disk_saves_ = acquisition.disk_saves;

  std::int32_t cached = 0;
  for (std::size_t i = 0; i < static_cast<std::size_t>(prompt_pages); ++i) {
    const AdmissionPlan::Slot& slot = plan.slots_[i];
    switch (slot.source) {
      case AdmissionPlan::Source::Share:
      case AdmissionPlan::Source::Revive:
        cached += page(slot.page).identity.valid;
        break;
      case AdmissionPlan::Source::Restore:
        cached += config_.page_size;
        break;
      case AdmissionPlan::Source::Disk:
        cached += config_.page_size;
        plan.disk_tokens_ += config_.page_size;
        break;
      case AdmissionPlan::Source::Fresh:
        cached += slot.copy_tokens;
        break;
      case AdmissionPlan::Source::Skip:
        cached += config_.page_size;
        break;
      case AdmissionPlan::Source::Later:
        break;
    }
  }
  plan.cached_tokens_ = cached;
  plan.status_ = AdmissionStatus::Fits;
  plan.request_ = std::move(request);
  return plan;
}

Admission PageCache::commit_here(AdmissionPlan plan) {
  if (!plan.fits()) throw std::logic_error("commit of an admission plan that does not fit");
  if (plan.generation_ != generation_) {
    throw std::logic_error("stale admission plan: the cache changed after it was prepared");
  }
  ++generation_;
  const std::uint64_t now = clock_->now();
  const std::int32_t size = config_.page_size;
  const std::vector<TokenId>& tokens = plan.request_.tokens;
  const bool every_page = plan.request_.every_page;
  const std::size_t prompt = tokens.size();

  Acquisition acquisition;
  acquisition.victims = plan.victims_;
  acquisition.saves = plan.saves_;
  acquisition.disk_saves = plan.disk_saves_;
  for (const AdmissionPlan::Slot& slot : plan.slots_) {
    if (AdmissionPlan::takes_page(slot.source)) acquisition.pages.push_back(slot.page);
  }
  take_pages(acquisition, now);

  Admission admission;
  admission.sequence = next_sequence_++;
  admission.instructions.saves = plan.saves_;
  admission.instructions.disk_saves = plan.disk_saves_;
  const std::int64_t reused_before = counters_.reused_tokens;
  const std::int64_t copied_before = counters_.copied_tokens;
  admission.evicted_pages = static_cast<int>(plan.victims_.size());
  Sequence seq;
  seq.pages.reserve(plan.slots_.size());

  std::int32_t position_start = 0;
  bool prefix_intact = true;
  for (std::size_t i = 0; i < plan.slots_.size(); ++i, position_start += size) {
    const AdmissionPlan::Slot& slot = plan.slots_[i];
    const std::size_t begin = std::min(prompt, i * static_cast<std::size_t>(size));
    const std::size_t count = std::min<std::size_t>(size, prompt - begin);
    std::int32_t covered = 0;

    switch (slot.source) {
      case AdmissionPlan::Source::Share:
      case AdmissionPlan::Source::Revive:
        mutate(slot.page, [&](PageRecord& page) {
          ++page.refs;
          page.last_access = now;
        });
        covered = page(slot.page).identity.valid;
        counters_.reused_tokens += covered;
        break;
      case AdmissionPlan::Source::Restore:
        mutate(slot.page, [&](PageRecord& page) {
          page.identity = host_.identity(slot.host);
          page.identity.valid = size;
          page.saved.reset();
          page.indexed = true;
        });
        index_.emplace(plan.hashes_[i], slot.page);
        host_.touch(slot.host, now);
        admission.instructions.restores.push_back(HostRestore{slot.host, slot.page});
        ++counters_.host_restores;
        counters_.restored_tokens += size;
        covered = size;
        break;
      case AdmissionPlan::Source::Disk:
        // Every page of the chain before this one is known, so the whole
        // identity follows from the request (page_size tokens, all written).
        mutate(slot.page, [&](PageRecord& page) {
          PageIdentity& identity = page.identity;
          std::copy_n(tokens.begin() + static_cast<std::ptrdiff_t>(begin), size,
                      identity.tokens.begin());
          identity.filled = size;
          identity.valid = size;
          identity.link = i == 0 ? ChainLink::Root : ChainLink::Known;
          if (i > 0) identity.previous = plan.hashes_[i - 1];
          identity.hash = plan.hashes_[i];
          identity.hashed = true;
          page.saved.reset();
          page.indexed = true;
          page.from_disk = true;
        });
        index_.emplace(plan.hashes_[i], slot.page);
        admission.instructions.disk_restores.push_back(DiskRestore{plan.hashes_[i], slot.page});
        ++counters_.disk_restores;
        counters_.disk_restored_tokens += size;
        admission.disk_tokens += size;
        covered = size;
        break;
      case AdmissionPlan::Source::Skip:
        covered = size;
        counters_.reused_tokens += size;
        break;
      case AdmissionPlan::Source::Later:
        break;
      case AdmissionPlan::Source::Fresh: {
        // A window may compute a page again whose hash another page holds:
        // this one stays an unindexed duplicate until one is released.
        const bool indexable = i < plan.hashes_.size() && !index_.contains(plan.hashes_[i]);
        mutate(slot.page, [&](PageRecord& page) {
          PageIdentity& identity = page.identity;
          std::copy_n(tokens.begin() + static_cast<std::ptrdiff_t>(begin), count,
                      identity.tokens.begin());
          identity.filled = static_cast<std::int32_t>(count);
          identity.link = i == 0
                              ? ChainLink::Root
                              : (i <= plan.hashes_.size() ? ChainLink::Known : ChainLink::Unknown);
          if (identity.link == ChainLink::Known) identity.previous = plan.hashes_[i - 1];
          if (i < plan.hashes_.size()) {
            identity.hash = plan.hashes_[i];
            identity.hashed = true;
            page.indexed = indexable;
          }
          if (slot.copy_tokens > 0) {
            identity.valid = slot.copy_tokens;
            page.saved.reset();
          }
        });
        if (indexable) index_.emplace(plan.hashes_[i], slot.page);
        if (slot.copy_tokens > 0) {
          admission.instructions.copies.push_back(
              PageCopy{slot.copy_source, slot.page, slot.copy_tokens});
          counters_.copied_tokens += slot.copy_tokens;
          covered = slot.copy_tokens;
        }
        break;
      }
    }
    seq.pages.push_back(slot.page);
    seq.owned.push_back(AdmissionPlan::takes_page(slot.source));

    if (count == 0) continue;  // reserved for decode
    covered = std::min<std::int32_t>(covered, static_cast<std::int32_t>(count));
    admission.cached_tokens += covered;
    if (prefix_intact) seq.computed = position_start + covered;
    prefix_intact = prefix_intact && covered == static_cast<std::int32_t>(count);
    const TokenRange missing{position_start + covered,
                             position_start + static_cast<std::int32_t>(count)};
    if (missing.begin == missing.end) continue;
    if (!admission.compute.empty() && admission.compute.back().end == missing.begin) {
      admission.compute.back().end = missing.end;
    } else {
      admission.compute.push_back(missing);
    }
  }

  seq.admitted.prompt = static_cast<std::int64_t>(prompt);
  seq.admitted.computed = static_cast<std::int64_t>(prompt) - admission.cached_tokens;
  seq.admitted.disk_restored = admission.disk_tokens;
  seq.admitted.disk_restores =
      static_cast<std::int64_t>(admission.instructions.disk_restores.size());
  seq.admitted.host_restores = static_cast<std::int64_t>(admission.instructions.restores.size());
  seq.admitted.restored = seq.admitted.host_restores * size;
  seq.admitted.reused = counters_.reused_tokens - reused_before;
  seq.admitted.copied = counters_.copied_tokens - copied_before;
  seq.tokens = std::move(plan.request_.tokens);
  seq.hashes = plan.hashes_;
  seq.bound = plan.bound_;
  seq.reserved = plan.reservation_;
  reserved_pages_ += plan.reservation_;
  counters_.prompt_tokens += static_cast<std::int64_t>(prompt);
  counters_.computed_tokens += static_cast<std::int64_t>(prompt) - admission.cached_tokens;
  // A whole prompt recomputed holds every page until its prefill passes them.
  seq.bound = std::max(seq.bound, owned_pages(seq));
  Sequence& admitted = sequences_.emplace(admission.sequence, std::move(seq)).first->second;
  // A partial copy can move the window past the prefix's first page.
  admitted.whole = every_page;
  if (!every_page) drop_out_of_window(admitted);
  return admission;
}

std::optional<Admission> PageCache::admit(AdmissionRequest request, AdmissionPlan* refused) {
  AdmissionPlan plan = prepare(std::move(request));
  if (!plan.fits()) {
    if (refused) *refused = std::move(plan);
    return std::nullopt;
  }
  return commit(std::move(plan));
}

}  // namespace quire::cache
