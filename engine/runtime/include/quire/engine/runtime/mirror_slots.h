#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "quire/cache/types.h"

namespace quire::engine {

// Which page each FP16 mirror slot of the residual window holds
// (kernels::KvMirrors), and through which token it holds it. A step asks for
// each sequence's open page (the page of its last position); a slot that
// already mirrors that page through the step's first token keeps serving it,
// otherwise the least recently used slot not needed by the step takes it
// and is filled from the page's coded tokens first. Since write_kv writes the
// coded page as well, a slot can be dropped or reassigned at any time; only
// what changes a page outside write_kv (copies, restores, moves) must be
// reported, so that no slot serves stale tokens.
class MirrorSlots {
 public:
  explicit MirrorSlots(int count);

  // One sequence of a step: its page-table index and page that the step's
  // last position falls in, how many of that page's tokens come before the
  // step (already written), and how many it holds after it.
  struct Want {
    int index = 0;
    cache::PageIndex page = -1;
    int before = 0;
    int after = 0;
  };
  // Per want: the slot that mirrors it (-1: none free, the sequence reads its
  // coded page), and how many of the page's first tokens must be decoded
  // into the slot before the step (KvStorage::fill_mirror).
  struct Assignment {
    int slot = -1;
    int fill = 0;
  };
  // `page_size`: a page that the step fills is sealed, and its slot freed
  // afterwards for the next page.
  std::vector<Assignment> assign(std::span<const Want> wants, int page_size);

  // The page's bytes changed outside write_kv: no slot may keep it.
  void forget(cache::PageIndex page);
  void forget_all();

  int count() const { return static_cast<int>(slots_.size()); }
  // How many slots mirror a page now.
  int in_use() const;

 private:
  struct Slot {
    cache::PageIndex page = -1;
    int tokens = 0;          // the page's first `tokens` tokens are mirrored
    std::uint64_t used = 0;  // the step that last used it
  };
  std::vector<Slot> slots_;
  std::uint64_t step_ = 0;
};

}  // namespace quire::engine
