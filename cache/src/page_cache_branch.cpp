// Branching: a new sequence that continues a prefix of a live one. Full pages
// whose K/V the source has written are shared, as prefix reuse shares pages
// found by hash; the open page is the branch's own, with the written part
// copied into it. So both sequences append only into pages they alone hold,
// which append() checks.

#include <algorithm>
#include <set>
#include <stdexcept>

#include "page_cache_mutation.h"
#include "quire/cache/page_cache.h"

namespace quire::cache {
namespace {

enum class Take : std::uint8_t {
  Skip,   // wholly before the window of the branch's next position: no page
  Share,  // the source's full, written page
  Own,    // a page of the branch's own, taken now
  Later,  // a page taken when the sequence reaches it (sliding window)
};

}  // namespace

std::optional<Admission> PageCache::branch_here(const BranchRequest& request,
                                                AdmissionPlan* refused) {
  const Sequence& source = sequence(request.source);
  const auto source_length = static_cast<std::int32_t>(source.tokens.size());
  const std::int32_t length = request.length < 0 ? source_length : request.length;
  if (length == 0 || length > source_length) {
    throw std::out_of_range("a branch of " + std::to_string(length) + " tokens from sequence " +
                            std::to_string(request.source) + ", which holds " +
                            std::to_string(source_length));
  }
  if (request.max_new_tokens < 0) throw std::invalid_argument("max_new_tokens is negative");

  const auto refuse = [&](AdmissionStatus status, std::string reason, int needed,
                          int available) -> std::optional<Admission> {
    if (refused) {
      *refused = AdmissionPlan{};
      refused->status_ = status;
      refused->reason_ = std::move(reason);
      refused->pages_needed_ = needed;
      refused->pages_available_ = available;
    }
    return std::nullopt;
  };

  const std::int32_t size = config_.page_size;
  const std::int64_t total = std::int64_t{length} + request.max_new_tokens;
  const std::int64_t bound = config_.pages_held_at_most(total);
  if (bound > config_.num_pages) {
    return refuse(AdmissionStatus::NeverFits,
                  "the branch needs " + std::to_string(total) + " tokens but the cache holds " +
                      std::to_string(std::int64_t{size} * config_.num_pages),
                  static_cast<int>(bound), config_.num_pages);
  }

  // The branch finds written what the source has written of its prefix.
  const std::int32_t computed = std::min(length, source.computed);
  const auto prompt_pages = static_cast<std::size_t>((length + size - 1) / size);
  const auto total_pages = static_cast<std::size_t>((total + size - 1) / size);
  const bool reserve = config_.reservation == ReservationPolicy::ReserveOnAdmission;
  const std::size_t table_pages = reserve ? total_pages : prompt_pages;
  const std::size_t keep = first_kept_page(computed);

  std::vector<Take> takes(table_pages, Take::Own);
  std::set<PageIndex> pinned;
  PageCopy copy;
  std::size_t copy_slot = table_pages;
  int needed = 0;
  int later = 0;
  for (std::size_t slot = 0; slot < table_pages; ++slot) {
    if (slot < keep) {
      takes[slot] = Take::Skip;
      continue;
    }
    if (slot >= prompt_pages) {
      // Decode pages: all of them now under ReserveOnAdmission, or promised
      // and taken as reached where a window bounds what the branch holds.
      if (config_.window > 0) {
        takes[slot] = Take::Later;
        ++later;
      } else {
        ++needed;
      }
      continue;
    }
    const auto begin = static_cast<std::int32_t>(slot) * size;
    const std::int32_t written = std::clamp(computed - begin, 0, size);
    const PageIndex page = slot < source.pages.size() ? source.pages[slot] : kNoPage;
    if (written > 0 && page == kNoPage) {
      return refuse(AdmissionStatus::NeverFits,
                    "sequence " + std::to_string(request.source) +
                        " has handed back the pages at position " + std::to_string(begin) +
                        "; admit the branch's tokens instead",
                    0, 0);
    }
    if (written == size) {
      takes[slot] = Take::Share;
      pinned.insert(page);
      continue;
    }
    if (written > 0) {
      copy = PageCopy{page, kNoPage, written};
      copy_slot = slot;
      pinned.insert(page);
    }
    ++needed;
  }

  const int reservation =
      reserve ? std::min(later, std::max(0, static_cast<int>(bound) - needed)) : 0;
  const Acquisition acquisition = plan_acquisition(needed, pinned, {});
  if (static_cast<int>(acquisition.pages.size()) < needed) {
    return refuse(AdmissionStatus::WaitForPages,
                  "the branch needs " + std::to_string(needed) + " pages of its own but only " +
                      std::to_string(acquisition.available) + " can be had now",
                  needed, acquisition.available);
  }
  const int promised = reserved_pages_ + reservation;
  if (promised > 0 && obtainable_pages(pinned) - needed < promised) {
    const int available = std::max(0, obtainable_pages(pinned) - reserved_pages_);
    return refuse(AdmissionStatus::WaitForPages,
                  "the branch needs " + std::to_string(needed + reservation) + " pages but only " +
                      std::to_string(available) +
                      " can be had while the running jobs are promised theirs",
                  needed + reservation, available);
  }

  ++generation_;
  const std::uint64_t now = clock_->now();
  take_pages(acquisition, now);

  Admission admission;
  admission.sequence = next_sequence_++;
  admission.instructions.saves = acquisition.saves;
  admission.instructions.disk_saves = acquisition.disk_saves;
  admission.evicted_pages = static_cast<int>(acquisition.victims.size());
  Sequence seq;
  seq.tokens.assign(source.tokens.begin(), source.tokens.begin() + length);
  const std::size_t full_pages = static_cast<std::size_t>(length / size);
  seq.hashes.assign(source.hashes.begin(),
                    source.hashes.begin() +
                        static_cast<std::ptrdiff_t>(std::min(source.hashes.size(), full_pages)));
  seq.pages.assign(table_pages, kNoPage);
  seq.owned.assign(table_pages, false);
  seq.computed = computed;

  std::size_t next = 0;
  std::int64_t reused = 0;
  for (std::size_t slot = 0; slot < table_pages; ++slot) {
    switch (takes[slot]) {
      case Take::Skip:
        reused += size;
        break;
      case Take::Later:
        break;
      case Take::Share: {
        const PageIndex page = source.pages[slot];
        mutate(page, [&](PageRecord& record) {
          ++record.refs;
          record.last_access = now;
        });
        seq.pages[slot] = page;
        reused += size;
        break;
      }
      case Take::Own: {
        const PageIndex page = acquisition.pages[next++];
        assign_slot(seq, slot, page);
        if (slot == copy_slot) {
          mutate(page, [&](PageRecord& record) {
            record.identity.valid = copy.tokens;
            record.saved.reset();  // overwritten by the copy
          });
          copy.destination = page;
          admission.instructions.copies.push_back(copy);
        }
        break;
      }
    }
  }

  admission.cached_tokens = computed;
  if (computed < length) admission.compute.push_back(TokenRange{computed, length});
  counters_.prompt_tokens += length;
  counters_.reused_tokens += reused;
  counters_.copied_tokens += copy_slot < table_pages ? copy.tokens : 0;
  counters_.computed_tokens += length - computed;
  ++counters_.branches;

  seq.reserved = reservation;
  reserved_pages_ += reservation;
  seq.bound = std::max(static_cast<int>(bound), owned_pages(seq));
  Sequence& made = sequences_.emplace(admission.sequence, std::move(seq)).first->second;
  drop_out_of_window(made);
  return admission;
}

}  // namespace quire::cache
