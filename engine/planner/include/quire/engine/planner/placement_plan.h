#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "quire/engine/planner/placement_request.h"

namespace quire::engine {

// What one device would hold. All byte counts are exact.
struct DevicePlacement {
  int index = 0;  // the backend's device index
  std::string name;
  std::int64_t total_bytes = 0;
  std::int64_t free_before = 0;
  std::int64_t reserve = 0;
  // Bytes the plan may use here: free memory after the reserve, lowered to the
  // manual limit in Manual mode; never negative.
  std::int64_t usable = 0;
  bool limited_by_manual = false;  // the manual limit, not free memory, set `usable`

  std::int64_t weights = 0;
  // The pages of the attention layers placed here; of every attention layer
  // on the device that holds the cache for all (fixed_cache).
  std::int64_t cache = 0;
  bool fixed_cache = false;  // PlacementRequest::cache_device names this device
  // The staging ring of the offloaded layers placed here (their pages are in
  // PlacementPlan::host_cache).
  std::int64_t staging = 0;
  std::int64_t scratch = 0;  // device scratch (if any module is here) + modules' extra scratch
  std::int64_t planned = 0;  // weights + cache + staging + scratch
  // free_before - planned. When the plan fits, at least `reserve` on every
  // device that holds a module; on the device that overflows when it does not,
  // below the reserve or negative.
  std::int64_t free_after = 0;

  int first_module = -1;  // modules [first_module, first_module + module_count)
  int module_count = 0;

  // Whether the plan puts anything here: a module, or the fixed cache.
  bool used() const { return module_count > 0 || fixed_cache; }
};

// Offloaded cache pages in host memory, and what streaming them costs.
struct HostCachePlacement {
  std::int64_t bytes = 0;  // the pages of every offloaded layer
  std::int64_t free_before = 0;
  std::int64_t reserve = 0;
  std::int64_t usable = 0;  // free_before - reserve, never negative
  // Bytes copied between host and devices by one decode step of one
  // conversation at the planned context, both ways, and the time that takes
  // at the measured speed (0 when the speed is unknown).
  std::int64_t copy_bytes_per_step = 0;
  double copy_bytes_per_second = 0;
  double seconds_per_step = 0;
};

// The vision tower in host memory (PlacementRequest::vision_tower): what it
// takes and whether what the plan leaves there holds it.
struct VisionTowerPlacement {
  std::string name;
  std::int64_t weight_bytes = 0;
  std::int64_t scratch_bytes = 0;  // while it reads one image
  std::int64_t bytes = 0;          // weight_bytes + scratch_bytes
  // Host memory free after the reserve and after what the plan puts there
  // (a host-memory device's modules, cache and scratch; offloaded pages);
  // never negative. -1: not checked, the request gave no host memory.
  std::int64_t usable = -1;
  std::int64_t reserve = 0;  // the reserve taken off `usable`
  bool fits = true;
  // When it does not fit: why, and that the model loads without it and
  // refuses images ("images cannot be read: ...").
  std::string problem;
};

struct ModulePlacement {
  std::string name;  // copied from the request, so a plan describes itself
  ModuleKind kind = ModuleKind::Layer;
  int slot = -1;    // position in PlacementPlan::devices; -1 when unplaced
  int device = -1;  // the backend's device index; -1 when unplaced
  std::int64_t weight_bytes = 0;
  // The layer's pages: on its own device, on PlacementPlan::cache_slot's when
  // that is set, or in host memory.
  std::int64_t cache_bytes = 0;
  bool cache_in_host_memory = false;  // cache_bytes are in host memory
};

struct ContextLimit {
  std::int64_t pages = 0;
  // pages * page_size, or the model's limit when that is lower. With a window
  // that the pages hold, the model's limit (a conversation's pages behind its
  // window go back to the cache).
  std::int64_t tokens = 0;
  // The model's limit, not memory, decided it: more memory would not help.
  bool model_limit = false;
  // The sliding window bounds what a conversation holds, not the cache size.
  bool window_bounded = false;
};

// Why a plan does not fit, in numbers (PlacementPlan::problem says it in words).
struct Shortfall {
  enum class Kind : std::uint8_t {
    NoDevices,       // the request lists no device
    NoRoomAnywhere,  // no device can hold even one module
    Overflow,        // modules in order overflow device `slot`
    HostMemory,      // the devices hold their part; host memory not the offloaded pages
    // The device fixed to hold the whole cache (PlacementRequest::cache_device)
    // cannot hold it and its scratch, before any weight.
    CacheDevice,
  };
  Kind kind = Kind::Overflow;
  int slot = -1;  // the device concerned; -1 for NoDevices
  // Overflow: what device `slot` would need to hold every module the earlier
  // devices could not. NoRoomAnywhere: the smallest module with device scratch,
  // against the device with the most usable memory.
  std::int64_t needed = 0;
  std::int64_t usable = 0;
  // The weights alone do not fit, so the numbers above are for no cache at
  // all (PlacementPlan::devices still show the requested context).
  bool without_context = false;
  // NoRoomAnywhere: the smallest module. Overflow: the largest module if it
  // alone (with device scratch) needs more than any device offers, else empty.
  std::string module;
  std::int64_t module_needed = 0;  // that module's bytes with device scratch
};

struct PlacementPlan {
  bool fits = false;
  PlacementMode mode = PlacementMode::FillInOrder;
  int page_size = 0;
  std::int64_t pages = 0;
  std::int64_t context_tokens = 0;        // pages * page_size: the request rounded up
  std::int64_t model_context_tokens = 0;  // the request's, copied: 0 when it gave none
  // Pages of the window pool of a mixed model's sliding layers: the
  // request's window_pool_pages, or `pages` where that is fewer; 0: no pool.
  std::int64_t window_pool_pages = 0;

  // One per requested device, in the request's order, used or not. When the
  // plan does not fit these show the overflow: earlier devices filled in order
  // and the last device that can hold a module taking every remaining one.
  std::vector<DevicePlacement> devices;
  std::vector<ModulePlacement> modules;  // one per requested module
  CacheResidence cache_residence = CacheResidence::Device;
  std::optional<HostCachePlacement> host_cache;  // when any layer is offloaded
  // When the request has a vision tower. Its `fits` is its own: `fits` above
  // is the language model's, which loads either way.
  std::optional<VisionTowerPlacement> vision_tower;
  // The position in `devices` of the device holding every layer's cache
  // (PlacementRequest::cache_device); -1: each layer's on its own device.
  int cache_slot = -1;

  // The most whole pages that fit with the same devices, reserves and mode;
  // empty when not even the weights fit. A model without cache bytes is capped
  // at the largest page count a cache can address (INT_MAX pages). Never
  // above the request's model_context_tokens.
  std::optional<ContextLimit> largest_context;

  std::optional<Shortfall> shortfall;  // set exactly when !fits
  std::string problem;                 // "does not fit: ..." when !fits, else empty
  // Things worth knowing even when it fits: devices left out and why, manual
  // limits that were lowered to free memory.
  std::vector<std::string> notes;
};

}  // namespace quire::engine
