#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "quire/cache/cache_format.h"
#include "quire/cache/page_cache.h"
#include "quire/kernels/backend.h"

namespace quire::engine {

// The bytes of the paged KV cache: one set of page planes per attention layer,
// allocated on the device of that layer when the layer is placed (lazily), and
// the host-memory tier. Executes what the cache's bookkeeping decides.
class KvStorage {
 public:
  struct Config {
    cache::CacheFormat format = cache::CacheFormat::FP16;
    int page_size = 256;
    int num_pages = 0;
    int host_pages = 0;
  };

  KvStorage(kernels::Backend& backend, Config config, std::vector<cache::LayerShape> layers);

  // Allocates the layer's pages on `device`. Throws DeviceOutOfMemory.
  void place_layer(std::size_t layer, int device);
  bool placed(std::size_t layer) const { return devices_.at(layer) >= 0; }
  int device(std::size_t layer) const { return devices_.at(layer); }
  const kernels::KvLayerView& view(std::size_t layer) const { return views_.at(layer); }
  // Counts changes of where the planes live (placing a layer), for work
  // recorded with their addresses. Page copies and moves keep the planes.
  std::uint64_t generation() const { return generation_; }
  std::size_t layers() const { return views_.size(); }
  const Config& config() const { return config_; }

  // In the order the cache requires: saves, restores, copies.
  void execute(const cache::CacheInstructions& instructions);
  void save_to_host(std::span<const cache::HostSave> saves);
  void apply_moves(const cache::DefragPlan& plan);

  // Bytes of one page of one layer, all planes.
  std::int64_t page_bytes(std::size_t layer) const;

 private:
  struct Planes {
    kernels::DeviceBuffer key_data, key_scales, value_data, value_scales;
  };
  std::uint8_t* host_slot(cache::HostSlot slot, std::size_t layer);

  kernels::Backend& backend_;
  Config config_;
  std::vector<cache::LayerShape> shapes_;
  std::vector<int> devices_;
  std::vector<Planes> planes_;
  std::vector<kernels::KvLayerView> views_;
  std::uint64_t generation_ = 0;
  std::vector<std::int64_t> host_offsets_;  // per layer, within one host slot
  std::int64_t host_slot_bytes_ = 0;
  std::vector<std::uint8_t> host_;
};

// The page codings of a cache format.
std::pair<kernels::KvCoding, kernels::KvCoding> kv_codings(cache::CacheFormat format);

}  // namespace quire::engine
