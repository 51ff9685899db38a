#include "quire/engine/runtime/mirror_slots.h"

#include <algorithm>
#include <stdexcept>

namespace quire::engine {

MirrorSlots::MirrorSlots(int count) {
  if (count < 0) throw std::invalid_argument("mirror slots must not be negative");
  slots_.resize(static_cast<std::size_t>(count));
}

std::vector<MirrorSlots::Assignment> MirrorSlots::assign(std::span<const Want> wants,
                                                         int page_size) {
  ++step_;
  std::vector<Assignment> out(wants.size());
  std::vector<std::size_t> missing;
  // First the wants whose page a slot already holds far enough: they keep it.
  for (std::size_t w = 0; w < wants.size(); ++w) {
    const Want& want = wants[w];
    if (want.page < 0) continue;
    for (std::size_t s = 0; s < slots_.size(); ++s) {
      Slot& slot = slots_[s];
      if (slot.page != want.page || slot.used == step_ || slot.tokens < want.before) continue;
      slot.used = step_;
      out[w].slot = static_cast<int>(s);
      break;
    }
    if (out[w].slot < 0) missing.push_back(w);
  }
  // Then the rest, each taking the least recently used slot that this step
  // does not use; one holding the same page (too few of its tokens) counts.
  for (const std::size_t w : missing) {
    auto oldest = slots_.end();
    for (auto it = slots_.begin(); it != slots_.end(); ++it) {
      if (it->used == step_) continue;
      if (it->page == wants[w].page) {
        oldest = it;
        break;
      }
      if (oldest == slots_.end() || it->used < oldest->used) oldest = it;
    }
    if (oldest == slots_.end()) continue;  // more sequences than slots
    oldest->page = wants[w].page;
    oldest->used = step_;
    out[w] = Assignment{static_cast<int>(oldest - slots_.begin()), wants[w].before};
  }
  for (std::size_t w = 0; w < wants.size(); ++w) {
    if (out[w].slot < 0) continue;
    Slot& slot = slots_[static_cast<std::size_t>(out[w].slot)];
    slot.tokens = wants[w].after;
    // A page the step fills is sealed: its mirror is read this step only.
    if (wants[w].after >= page_size) slot.page = -1;
  }
  return out;
}

void MirrorSlots::forget(cache::PageIndex page) {
  for (Slot& slot : slots_) {
    if (slot.page == page) slot = Slot{};
  }
}

void MirrorSlots::forget_all() {
  for (Slot& slot : slots_)
    slot = Slot{};
}

int MirrorSlots::in_use() const {
  return static_cast<int>(
      std::count_if(slots_.begin(), slots_.end(), [](const Slot& s) { return s.page >= 0; }));
}

}  // namespace quire::engine
