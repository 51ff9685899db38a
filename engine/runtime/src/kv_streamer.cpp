#include "kv_streamer.h"

#include <algorithm>
#include <stdexcept>

namespace quire::engine {
namespace {

using kernels::Queue;

// Page-table entries for positions [begin, end) of a sequence, appended.
void add_pages(const StepPages& sequence, std::int32_t begin, std::int32_t end, int page_size,
               std::vector<cache::PageIndex>& out) {
  if (begin >= end) return;
  const auto first = static_cast<std::size_t>(begin / page_size);
  const auto last = static_cast<std::size_t>((end - 1) / page_size);
  for (std::size_t i = first; i <= last && i < sequence.pages.size(); ++i) {
    // Entries behind a sliding window may have gone back to the cache.
    if (sequence.pages[i] >= 0) out.push_back(sequence.pages[i]);
  }
}

void sort_distinct(std::vector<cache::PageIndex>& pages) {
  std::sort(pages.begin(), pages.end());
  pages.erase(std::unique(pages.begin(), pages.end()), pages.end());
}

}  // namespace

KvStreamer::KvStreamer(kernels::Backend& backend, int page_size, int slots)
    : backend_(backend), page_size_(page_size), slot_count_(slots) {
  if (slots < 2) throw std::invalid_argument("a staging ring needs at least 2 slots");
}

KvStreamer::~KvStreamer() {
  // The slots and host planes must outlive the copies that use them.
  try {
    settle();
  } catch (...) {
    // A failed wait already reported its error to the step that caused it.
  }
}

bool KvStreamer::SlotBytes::holds(const SlotBytes& other) const {
  return key_data >= other.key_data && key_scales >= other.key_scales &&
         value_data >= other.value_data && value_scales >= other.value_scales;
}

KvStreamer::SlotBytes KvStreamer::SlotBytes::at_least(const kernels::KvLayerLayout& layout) const {
  const std::int64_t pages = layout.num_pages;
  return SlotBytes{std::max(key_data, layout.key_data_page_bytes * pages),
                   std::max(key_scales, layout.key_scale_page_bytes * pages),
                   std::max(value_data, layout.value_data_page_bytes * pages),
                   std::max(value_scales, layout.value_scale_page_bytes * pages)};
}

KvStreamer::Ring& KvStreamer::ring_of(int device) {
  auto found = std::find_if(rings_.begin(), rings_.end(),
                            [&](const Ring& ring) { return ring.device == device; });
  if (found != rings_.end()) return *found;
  Ring ring;
  ring.device = device;
  ring.slots.resize(static_cast<std::size_t>(slot_count_));
  for (Slot& slot : ring.slots) {
    slot.uploaded = backend_.create_event(device);
    slot.computed = backend_.create_event(device);
    slot.downloaded = backend_.create_event(device);
  }
  ring.downloads_done = backend_.create_event(device);
  ring.uploads_done = backend_.create_event(device);
  rings_.push_back(std::move(ring));
  return rings_.back();
}

void KvStreamer::add_layer(std::size_t layer, int device, const kernels::KvLayerView& host) {
  if (where_.contains(layer)) throw std::logic_error("a host cache layer added twice");
  Ring& ring = ring_of(device);
  ring.needed = ring.needed.at_least(host.layout);
  ring.layers.insert(std::upper_bound(ring.layers.begin(), ring.layers.end(), layer), layer);
  where_[layer].host = host;
  // Positions in a ring shift when a layer joins it; a step that began
  // before (and failed) fetched by the old ones, and the next begin_step
  // starts counting afresh.
  for (std::size_t r = 0; r < rings_.size(); ++r) {
    for (std::size_t p = 0; p < rings_[r].layers.size(); ++p) {
      Where& where = where_[rings_[r].layers[p]];
      where.ring = static_cast<int>(r);
      where.position = p;
    }
  }
}

void KvStreamer::grow(Ring& ring, const SlotBytes& bytes) {
  // Copies may still use the old slots (those of a step that failed midway too).
  settle();
  const auto allocate = [&](std::int64_t size) {
    if (size == 0) return kernels::DeviceBuffer();
    return backend_.allocate(ring.device, static_cast<std::size_t>(size), "KV cache staging");
  };
  // Freed before the larger ones are made, so that growing needs no room for
  // both; until every slot is made the ring counts as holding nothing, so a
  // failure here is made good by the next reserve().
  ring.held = SlotBytes{};
  for (Slot& slot : ring.slots) {
    slot.key_data = {};
    slot.key_scales = {};
    slot.value_data = {};
    slot.value_scales = {};
  }
  for (Slot& slot : ring.slots) {
    slot.key_data = allocate(bytes.key_data);
    slot.key_scales = allocate(bytes.key_scales);
    slot.value_data = allocate(bytes.value_data);
    slot.value_scales = allocate(bytes.value_scales);
  }
  ring.held = bytes;
}

void KvStreamer::reserve(int device, const kernels::KvLayerLayout* extra) {
  if (extra != nullptr) {
    Ring& ring = ring_of(device);
    const SlotBytes wanted = ring.needed.at_least(*extra);
    if (!ring.held.holds(wanted)) grow(ring, wanted);
  }
  for (Ring& ring : rings_) {
    if (!ring.held.holds(ring.needed)) grow(ring, ring.needed);
  }
}

std::int64_t KvStreamer::staging_bytes() const {
  std::int64_t bytes = 0;
  for (const Ring& ring : rings_)
    bytes += static_cast<std::int64_t>(ring.slots.size()) * ring.held.total();
  return bytes;
}

std::int64_t KvStreamer::staging_bytes_needed(int device,
                                              std::span<const kernels::KvLayerLayout> extra) const {
  SlotBytes needed;
  for (const Ring& ring : rings_) {
    if (ring.device == device) needed = ring.needed;
  }
  for (const kernels::KvLayerLayout& layout : extra)
    needed = needed.at_least(layout);
  return static_cast<std::int64_t>(slot_count_) * needed.total();
}

void KvStreamer::begin_step(std::span<const StepPages> sequences, std::span<const int> windows) {
  reserve();
  sequences_.assign(sequences.begin(), sequences.end());
  windows_.assign(windows.begin(), windows.end());
  written_.clear();
  read_.clear();
  staged_.clear();
  step_copy_bytes_ = 0;
  for (const StepPages& sequence : sequences_)
    add_pages(sequence, sequence.first_position, sequence.end, page_size_, written_);
  sort_distinct(written_);
  for (Ring& ring : rings_) {
    ring.fetched = 0;
    ring.waited_previous = false;
  }
}

const std::vector<cache::PageIndex>& KvStreamer::pages_read(int window) {
  auto found = read_.find(window);
  if (found != read_.end()) return found->second;
  std::vector<cache::PageIndex> pages;
  for (const StepPages& sequence : sequences_) {
    // Attention reads every earlier position, or the window's; a page the
    // step writes from its first slot on starts afresh and needs nothing.
    const std::int32_t begin =
        window > 0 ? std::max<std::int32_t>(0, sequence.first_position - window) : 0;
    add_pages(sequence, begin, sequence.first_position, page_size_, pages);
  }
  sort_distinct(pages);
  return read_.emplace(window, std::move(pages)).first->second;
}

kernels::KvLayerView KvStreamer::slot_view(const Slot& slot, const kernels::KvLayerLayout& layout) {
  return kernels::KvLayerView{layout,
                              kernels::KvPlanes{slot.key_data.data(), slot.key_scales.data(),
                                                slot.value_data.data(), slot.value_scales.data()}};
}

void KvStreamer::copy_pages(Queue queue, int device, const kernels::KvLayerView& to,
                            const kernels::KvLayerView& from,
                            std::span<const cache::PageIndex> pages) {
  const kernels::KvLayerLayout& layout = to.layout;
  const std::pair<std::int64_t, std::pair<void*, void*>> planes[] = {
      {layout.key_data_page_bytes, {to.planes.key_data, from.planes.key_data}},
      {layout.key_scale_page_bytes, {to.planes.key_scales, from.planes.key_scales}},
      {layout.value_data_page_bytes, {to.planes.value_data, from.planes.value_data}},
      {layout.value_scale_page_bytes, {to.planes.value_scales, from.planes.value_scales}}};
  std::size_t i = 0;
  while (i < pages.size()) {
    std::size_t run = 1;
    while (i + run < pages.size() && pages[i + run] == pages[i] + static_cast<int>(run))
      ++run;
    for (const auto& [page_bytes, pointers] : planes) {
      if (page_bytes == 0) continue;
      const std::int64_t offset = pages[i] * page_bytes;
      const auto bytes = static_cast<std::size_t>(page_bytes * static_cast<std::int64_t>(run));
      backend_.copy_async(queue, device, static_cast<std::uint8_t*>(pointers.first) + offset,
                          static_cast<const std::uint8_t*>(pointers.second) + offset, bytes);
      step_copy_bytes_ += static_cast<std::int64_t>(bytes);
    }
    i += run;
  }
}

void KvStreamer::fetch(Ring& ring, std::size_t position) {
  const int device = ring.device;
  Slot& slot = ring.slots[position % ring.slots.size()];
  if (!ring.waited_previous) {
    // Host pages that the previous step wrote back must be there before
    // they are read again.
    if (ring.downloads_pending) {
      backend_.record_event(*ring.downloads_done, device, Queue::Download);
      backend_.wait_event(*ring.downloads_done, device, Queue::Upload);
    }
    ring.waited_previous = true;
  }
  if (slot.used) {
    // The slot's previous layer must be done computing on it and writing it back.
    backend_.wait_event(*slot.computed, device, Queue::Upload);
    backend_.wait_event(*slot.downloaded, device, Queue::Upload);
  }
  const std::size_t layer = ring.layers[position];
  const kernels::KvLayerView& host = where_.at(layer).host;
  const kernels::KvLayerView staging = slot_view(slot, host.layout);
  const int window = layer < windows_.size() ? windows_[layer] : 0;
  copy_pages(Queue::Upload, device, staging, host, pages_read(window));
  backend_.record_event(*slot.uploaded, device, Queue::Upload);
  ring.uploads_pending = true;
}

const kernels::KvLayerView& KvStreamer::attend(std::size_t layer) {
  const Where& where = where_.at(layer);
  Ring& ring = rings_[static_cast<std::size_t>(where.ring)];
  if (ring.fetched < where.position) {
    throw std::logic_error("host cache layers attended out of order");
  }
  // Ahead as far as the ring allows: a slot is free again once its previous
  // layer has been attended (its copies wait for that on the device).
  const std::size_t ahead = std::min(ring.layers.size(), where.position + ring.slots.size());
  for (; ring.fetched < ahead; ++ring.fetched)
    fetch(ring, ring.fetched);
  Slot& slot = ring.slots[where.position % ring.slots.size()];
  backend_.wait_event(*slot.uploaded, ring.device, Queue::Compute);
  staged_[layer] = slot_view(slot, where.host.layout);
  // Calibrated scales live on the layer's device, not among its pages.
  staged_[layer].calibrated = where.host.calibrated;
  return staged_[layer];
}

void KvStreamer::attended(std::size_t layer) {
  const Where& where = where_.at(layer);
  Ring& ring = rings_[static_cast<std::size_t>(where.ring)];
  const int device = ring.device;
  Slot& slot = ring.slots[where.position % ring.slots.size()];
  backend_.record_event(*slot.computed, device, Queue::Compute);
  backend_.wait_event(*slot.computed, device, Queue::Download);
  copy_pages(Queue::Download, device, where.host, staged_.at(layer), written_);
  backend_.record_event(*slot.downloaded, device, Queue::Download);
  slot.used = true;
  ring.downloads_pending = true;
}

void KvStreamer::settle() {
  for (Ring& ring : rings_) {
    if (ring.uploads_pending) {
      backend_.record_event(*ring.uploads_done, ring.device, Queue::Upload);
      backend_.synchronize_event(*ring.uploads_done, ring.device);
      ring.uploads_pending = false;
    }
    if (!ring.downloads_pending) continue;
    backend_.record_event(*ring.downloads_done, ring.device, Queue::Download);
    backend_.synchronize_event(*ring.downloads_done, ring.device);
    ring.downloads_pending = false;
  }
}

}  // namespace quire::engine
