#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "quire/engine/planner/cache_residence.h"

namespace quire::engine {

// What a module is, for describing a plan to people ("embedding, layers 0-15").
enum class ModuleKind : std::uint8_t { Embedding, Layer, Head, Other };

// One unit of placement: the planner never splits a module across devices.
// Filled from safetensors headers and config.json before anything is loaded.
struct ModuleCost {
  std::string name;  // e.g. "model.layers.7"
  ModuleKind kind = ModuleKind::Layer;
  std::int64_t weight_bytes = 0;
  // Attention layers: this layer's bytes of one cache page, every plane included
  // (cache::format_info(format).page_bytes(shape, page_size).total()). Zero for
  // modules without a KV cache. The cache is lazy: these pages are allocated on
  // whichever device ends up holding the layer, or on
  // PlacementRequest::cache_device when that is set.
  std::int64_t cache_bytes_per_page = 0;
  // Scratch only this module needs, on its device (the head's logits buffer).
  std::int64_t extra_scratch_bytes = 0;
  // The layer's pages live in host memory (CacheResidence): they are priced
  // against PlacementRequest::host, and the device holds only its share of a
  // staging ring (PlacementRequest::staging_slots).
  bool cache_in_host_memory = false;
  // The layer's sliding window in tokens (0: none), which bounds the pages a
  // step of an offloaded layer copies.
  std::int64_t sliding_window = 0;
  // A mixed model's sliding layer, whose pages come from the window pool:
  // priced at PlacementRequest::window_pool_pages pages however long the
  // context (fewer when the context has fewer). Never in host memory.
  bool in_window_pool = false;
  // Cache bytes of the layer that do not grow with the pages: the residual
  // window's FP16 mirror slots. Where its pages go, with them; none for a
  // layer whose pages live in host memory.
  std::int64_t cache_fixed_bytes = 0;
};

// A vision tower that reads images on the CPU: its weights, and while it
// reads an image its activations, live in host memory. The language model
// comes first: the tower is priced against what the plan leaves there, and
// a tower that does not fit never stops the model from loading (the model
// then refuses images, with the plan's reason).
struct VisionTowerCost {
  std::string name;                // "SigLIP tower, Gemma 3 projector"
  std::int64_t weight_bytes = 0;   // as loaded into memory
  std::int64_t scratch_bytes = 0;  // the peak while it reads one image
};

// Host memory for offloaded cache pages and a vision tower.
struct PlanHost {
  std::int64_t free_bytes = 0;     // available right now
  std::int64_t reserve_bytes = 0;  // kept for the rest of the machine
};

// The same fields as kernels::DeviceInfo, repeated so the planner answers (and
// is tested) without a backend: the CLI's inspect command plans on any machine.
struct PlanDevice {
  int index = 0;  // the backend's device index
  std::string name;
  std::int64_t total_bytes = 0;
  std::int64_t free_bytes = 0;  // free right now; other processes' use counts
  // The device's memory is the machine's own (kernels::DeviceInfo::host_memory):
  // a vision tower is priced against what the plan leaves here.
  bool host_memory = false;
};

enum class PlacementMode : std::uint8_t {
  // Device 0 takes modules until the next one does not fit, then device 1, ...
  FillInOrder,
  // Modules in order, spread so that the fullest device is as empty as it can
  // be, measured as a fraction of each device's usable memory; then the same
  // among the devices after it. Fits exactly when FillInOrder fits.
  Balanced,
  // Fill in order, each device up to the user's byte limit ("GB per device").
  Manual,
};

inline constexpr std::int64_t kMiB = std::int64_t{1} << 20;
inline constexpr std::int64_t kGiB = std::int64_t{1} << 30;

struct PlacementPolicy {
  PlacementMode mode = PlacementMode::FillInOrder;
  // Kept free on every device: CUDA contexts, library workspaces and allocator
  // slack are not counted anywhere else, and a desktop needs headroom.
  std::int64_t default_reserve_bytes = 256 * kMiB;
  // Per device position in PlacementRequest::devices; overrides the default.
  // Entries past the last device are ignored.
  std::vector<std::int64_t> reserve_bytes;
  // Manual only: bytes the plan may use on each device position (weights,
  // cache and scratch together). A device without an entry, or with 0, is not
  // used. A limit above the device's free memory after its reserve is lowered
  // to it, and the plan says so.
  std::vector<std::int64_t> manual_limit_bytes;

  std::int64_t reserve_for(std::size_t position) const;
};

struct PlacementRequest {
  std::vector<ModuleCost> modules;  // in execution order
  // Needed on every device that holds at least one module: activations of the
  // largest prefill chunk. The caller computes it from the model and chunk size.
  std::int64_t device_scratch_bytes = 0;
  // Tokens of KV cache, rounded up to whole pages. 0 plans the weights alone.
  std::int64_t context_tokens = 0;
  int page_size = 256;
  // The most positions the model reads (its max_position_embeddings, which
  // already counts rope scaling); caps the largest context. 0: no cap.
  std::int64_t model_context_tokens = 0;
  // When every attention layer slides, the most pages one conversation holds
  // however long it grows (its window and one prefill step, as the page cache
  // counts them: cache::CacheConfig::pages_held_at_most); 0: no window.
  std::int64_t window_pages = 0;
  // A mixed model's window pool (ModuleCost::in_window_pool): the most pages
  // it holds, as the runtime sizes it (window_pool_page_cap); 0: no pool.
  std::int64_t window_pool_pages = 0;
  // In the order the hidden state flows through them.
  std::vector<PlanDevice> devices;
  PlacementPolicy policy;
  // Offloaded cache pages (ModuleCost::cache_in_host_memory): the residence
  // asked for, the staging slots each device that holds an offloaded layer
  // keeps (each the size of the largest offloaded layer's pages), the host
  // memory they are checked against (unchecked when empty) and the measured
  // speed of host to device copies (0: unknown), for the plan's estimate.
  CacheResidence cache_residence = CacheResidence::Device;
  int staging_slots = 2;
  std::optional<PlanHost> host;
  double host_copy_bytes_per_second = 0;
  // A position in `devices` that holds every layer's cache pages, wherever
  // the layer's weights go (the layers there run their attention beside the
  // pages); unset: each layer's pages on its layer's device. That device pays
  // the whole cache, its scratch even without a module, and, where layers
  // are offloaded, the one staging ring they all share.
  std::optional<int> cache_device;
  // The model's vision tower, when it has one it can run; priced in host
  // memory (`host`, or the device that is the machine's memory) after
  // everything else, and never part of whether the plan fits.
  std::optional<VisionTowerCost> vision_tower;

  // Throws std::invalid_argument naming the first value that is out of range
  // (negative bytes, a page size below 1, more pages than a cache can address,
  // or byte counts above 2^60, which no device has).
  void validate() const;
};

// The largest byte count the planner accepts for one input value; keeping
// inputs below it leaves int64 sums room to saturate instead of overflowing.
inline constexpr std::int64_t kMaxPlanBytes = std::int64_t{1} << 60;

// Whole pages needed for `tokens` tokens (rounded up).
std::int64_t pages_for_tokens(std::int64_t tokens, int page_size);

const char* to_string(PlacementMode mode);
const char* to_string(ModuleKind kind);

}  // namespace quire::engine
