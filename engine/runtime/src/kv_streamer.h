#pragma once

// The per-step traffic of layers whose KV pages live in host memory: a ring
// of staging slots per device, each with the layout and page count of one
// layer, reused by the device's host layers in turn. Page p of a layer sits
// at page p of its slot, so page tables need no rewriting. A step fetches
// into a slot only the pages its sequences read, and writes back only the
// pages it wrote; the fetch of the next layers runs on the Upload queue while
// the current one computes, and write-backs on the Download queue.

#include <cstdint>
#include <map>
#include <memory>
#include <span>
#include <vector>

#include "quire/engine/runtime/kv_storage.h"
#include "quire/kernels/backend.h"

namespace quire::engine {

class KvStreamer {
 public:
  KvStreamer(kernels::Backend& backend, int page_size, int slots);
  ~KvStreamer();
  KvStreamer(const KvStreamer&) = delete;
  KvStreamer& operator=(const KvStreamer&) = delete;

  // A layer whose planes, `host`, live in host memory (and stay where they
  // are) and whose attention runs on `device`. Only bookkeeping: the slots
  // that hold its layout are allocated by reserve(), so that a shortage of
  // device memory never leaves a layer half added.
  void add_layer(std::size_t layer, int device, const kernels::KvLayerView& host);
  // Grows each ring whose slots are smaller than its layers need, and the
  // ring of `device` to hold `extra` too (for layers about to be added).
  // Throws DeviceOutOfMemory; a ring that could not grow holds no slots until
  // a later call (every step's begin_step makes one) succeeds.
  void reserve(int device = -1, const kernels::KvLayerLayout* extra = nullptr);

  // Allocates missing slots first (DeviceOutOfMemory), then starts the step.
  void begin_step(std::span<const StepPages> sequences, std::span<const int> windows);
  // For the device's next host layer in order: fetches its pages, and those
  // of the layers after it that have a free slot, and returns its slot.
  const kernels::KvLayerView& attend(std::size_t layer);
  void attended(std::size_t layer);
  void settle();

  std::int64_t staging_bytes() const;
  // Device bytes the ring of `device` needs, and would need with layers of
  // the `extra` layouts added.
  std::int64_t staging_bytes_needed(int device,
                                    std::span<const kernels::KvLayerLayout> extra = {}) const;
  std::int64_t step_copy_bytes() const { return step_copy_bytes_; }

 private:
  struct Slot {
    kernels::DeviceBuffer key_data, key_scales, value_data, value_scales;
    std::unique_ptr<kernels::QueueEvent> uploaded, computed, downloaded;
    bool used = false;  // computed and downloaded have been recorded
  };
  // Bytes of each plane of one slot.
  struct SlotBytes {
    std::int64_t key_data = 0, key_scales = 0, value_data = 0, value_scales = 0;
    std::int64_t total() const { return key_data + key_scales + value_data + value_scales; }
    bool holds(const SlotBytes& other) const;
    SlotBytes at_least(const kernels::KvLayerLayout& layout) const;
  };
  struct Ring {
    int device = 0;
    std::vector<std::size_t> layers;  // in the order steps run them
    std::vector<Slot> slots;
    // The largest any of its layers needs, and what each slot holds now.
    SlotBytes needed, held;
    std::unique_ptr<kernels::QueueEvent> downloads_done, uploads_done;
    bool downloads_pending = false;  // write-backs issued since the last settle
    // Fetches issued since the last settle: a step that failed midway may
    // leave some running, still reading host pages.
    bool uploads_pending = false;
    // This step: positions in `layers` fetched so far, and whether the
    // Upload queue has waited for the previous step's write-backs.
    std::size_t fetched = 0;
    bool waited_previous = false;
  };
  struct Where {
    int ring = -1;
    std::size_t position = 0;  // in the ring's layers
    kernels::KvLayerView host;
  };

  Ring& ring_of(int device);
  void grow(Ring& ring, const SlotBytes& bytes);
  void fetch(Ring& ring, std::size_t position);
  // The pages that the step reads within `window` (0: all), sorted and distinct.
  const std::vector<cache::PageIndex>& pages_read(int window);
  static kernels::KvLayerView slot_view(const Slot& slot, const kernels::KvLayerLayout& layout);
  // Copies the pages' slices of every plane, contiguous pages in one copy.
  void copy_pages(kernels::Queue queue, int device, const kernels::KvLayerView& to,
                  const kernels::KvLayerView& from, std::span<const cache::PageIndex> pages);

  kernels::Backend& backend_;
  int page_size_;
  int slot_count_;
  std::vector<Ring> rings_;
  std::map<std::size_t, Where> where_;
  // This step.
  std::vector<StepPages> sequences_;
  std::vector<int> windows_;
  std::vector<cache::PageIndex> written_;
  std::map<int, std::vector<cache::PageIndex>> read_;   // by window
  std::map<std::size_t, kernels::KvLayerView> staged_;  // by layer, this step's slot views
  std::int64_t step_copy_bytes_ = 0;
};

}  // namespace quire::engine
