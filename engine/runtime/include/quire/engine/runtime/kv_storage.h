#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "quire/cache/cache_format.h"
#include "quire/cache/page_cache.h"
#include "quire/engine/runtime/kv_scales.h"
#include "quire/engine/runtime/mirror_slots.h"
#include "quire/kernels/backend.h"

namespace quire::engine {

class KvStreamer;

// Where one layer's page planes live. Host: in host memory
// (Backend::allocate_host); the layer's device holds only a share of a small
// staging ring, into which each step fetches the pages it reads and from
// which it writes back the pages it wrote (KvStorage::attend).
enum class PageHome : std::uint8_t { Device, Host };

// What one sequence of a step reads and writes: positions
// [first_position, end) are written, earlier ones read.
struct StepPages {
  std::span<const cache::PageIndex> pages;  // the sequence's page table
  std::int32_t first_position = 0;
  std::int32_t end = 0;
};

// The bytes of the paged KV cache: one set of page planes per attention layer,
// allocated on the device of that layer when the layer is placed (lazily), or
// in host memory for an offloaded layer, and the host-memory tier. Executes
// what the cache's bookkeeping decides.
class KvStorage {
 public:
  struct Config {
    cache::CacheFormat format = cache::CacheFormat::FP16;
    int page_size = 256;
    int num_pages = 0;
    int host_pages = 0;
    // Staging slots per device for layers whose pages live in host memory:
    // while one slot's layer computes, the next layer's pages arrive in
    // another. At least 2.
    int staging_slots = 2;
    // Mixed models (cache::CacheConfig::layer_window): per layer, whether it
    // takes its pages from the window pool, which has `window_pages` pages.
    // Such layers read the sequences' window page tables, take part in no
    // host save, restore or defragmentation, and never live in host memory.
    // Empty: every layer in the one pool.
    std::vector<bool> windowed_layers;
    int window_pages = 0;
    // The residual window: FP16 mirror slots (kernels::KvMirrors) per layer
    // whose pages live on its device, outside the window pool, for a coded
    // format; each running sequence's open page is read from one
    // (MirrorSlots). 0: none, and an FP16 cache never has them.
    int mirror_slots = 0;
  };

  KvStorage(kernels::Backend& backend, Config config, std::vector<cache::LayerShape> layers);
  ~KvStorage();
  KvStorage(const KvStorage&) = delete;
  KvStorage& operator=(const KvStorage&) = delete;

  // Calibrated FP8 scales, one entry per layer: the format's FP8 halves
  // encode with them instead of per-page scales (KvCalibratedScales). Call
  // before any layer is placed; other codings ignore them.
  void use_calibrated_scales(std::vector<LayerKvScales> scales);
  // Whether FP8 keys or values of this cache use calibrated scales.
  bool calibrated_keys() const;
  bool calibrated_values() const;
  // Whether writing a token can change the bytes of tokens written before
  // it: an FP8 half with per-page scales, which grow with the page's
  // largest value and encode its earlier tokens again. Integer and FP16
  // halves, and calibrated FP8, encode each token on its own.
  bool writes_recode_pages() const;

  // Whether the layer's pages are the window pool's (Config::windowed_layers).
  bool windowed(std::size_t layer) const;
  // The residual window's slots (Config::mirror_slots): 0 when the format is
  // FP16 or the window is off.
  int mirror_slots() const { return mirrors_.count(); }
  // Whether the layer has its mirrors now (a device layer of the main pool).
  bool mirrored(std::size_t layer) const;
  MirrorSlots& mirrors() { return mirrors_; }
  const MirrorSlots& mirrors() const { return mirrors_; }
  // Decodes the page's first `tokens` tokens into mirror `slot` of every
  // mirrored layer.
  void fill_mirror(int slot, cache::PageIndex page, int tokens);
  // Device bytes of every layer's mirrors, and of those on one device.
  std::int64_t mirror_bytes() const;
  std::int64_t mirror_bytes_on(int device) const;
  bool has_window_pool() const { return config_.window_pages > 0; }
  // Allocates the layer's pages on `device`, or in host memory with a
  // staging ring on `device` (the ring is shared by the device's host
  // layers). Throws DeviceOutOfMemory; std::invalid_argument for a window
  // pool's layer in host memory.
  void place_layer(std::size_t layer, int device, PageHome home = PageHome::Device);
  // Moves a placed layer's pages into host memory, contents kept, and frees
  // its device planes: the way out when the device runs short. Nothing
  // changes when it throws. The layer's staging slots come from
  // reserve_staging_for (before, while its planes are still there) or
  // reserve_staging (after, in their room); a step allocates what is still
  // missing before it begins.
  void move_to_host(std::size_t layer);
  // Allocates the staging slots that host layers lack (DeviceOutOfMemory).
  void reserve_staging();
  // Grows the layer's device's staging ring to hold the layer too.
  void reserve_staging_for(std::size_t layer);
  // Device bytes that moving every layer on `device` into host memory gives
  // back: their planes, less what the device's staging ring grows by. Zero
  // or less where the ring would cost as much as it frees.
  std::int64_t offload_gain(int device) const;
  bool placed(std::size_t layer) const { return devices_.at(layer) >= 0; }
  // The device that computes the layer's attention, wherever its pages live.
  int device(std::size_t layer) const { return devices_.at(layer); }
  PageHome home(std::size_t layer) const { return homes_.at(layer); }
  bool any_on_host() const;
  // The layer's planes: device memory, or host memory for a host layer (not
  // for kernels; during a step they use attend()'s view).
  const kernels::KvLayerView& view(std::size_t layer) const { return views_.at(layer); }
  // Counts changes of where the planes live (placing a layer), for work
  // recorded with their addresses. Page copies and moves keep the planes.
  std::uint64_t generation() const { return generation_; }
  std::size_t layers() const { return views_.size(); }
  const Config& config() const { return config_; }

  // In the order the cache requires: saves, restores, copies (the window
  // pool's layers take only the window copies).
  void execute(const cache::CacheInstructions& instructions);
  void save_to_host(std::span<const cache::HostSave> saves);
  void apply_moves(const cache::DefragPlan& plan);

  // Bytes of one page of one layer, all planes.
  std::int64_t page_bytes(std::size_t layer) const;

  // One page of every placed main-pool layer as one block, for the disk
  // tier: layer after layer, each layer's planes in save order (key data,
  // key scales, value data, value scales; absent planes take no room), as a
  // page file's payload is laid out. read_page copies the page out (waiting
  // for copies to host layers); write_page puts such a block back and drops
  // the page's residual-window mirror. Both throw std::invalid_argument for
  // a block of another size.
  std::int64_t block_bytes() const;
  void read_page(cache::PageIndex page, std::span<std::byte> block);
  void write_page(cache::PageIndex page, std::span<const std::byte> block);
  // Device bytes of the staging rings, and host bytes of the host layers' planes.
  std::int64_t staging_bytes() const;
  std::int64_t host_layer_bytes() const;
  // Host bytes of the host-memory tier's page slots (Config::host_pages).
  std::int64_t host_tier_bytes() const { return host_slot_bytes_ * config_.host_pages; }

  // One step's traffic for host layers (kv_streamer.cpp). begin_step names
  // what the step's sequences read and write and, per layer, the sliding
  // window (0: none) that bounds how far back attention reads. attend(layer)
  // gives the view write_kv and paged_attention use: the layer's own for a
  // device layer; for a host layer its staging slot, the pages it reads
  // fetched (the device's work waits for them, the host does not).
  // attended(layer), after the layer's attention, queues the written pages
  // back to host memory. Between steps, nothing is required; every host-side
  // use of host pages waits for the copies still running (settle()).
  void begin_step(std::span<const StepPages> sequences, std::span<const int> windows);
  const kernels::KvLayerView& attend(std::size_t layer);
  void attended(std::size_t layer);
  // The host waits until no copy to or from host layers is running.
  void settle();
  // Bytes the latest step copied between host layers and staging, both ways.
  std::int64_t step_copy_bytes() const;

 private:
  struct Planes {
    kernels::DeviceBuffer key_data, key_scales, value_data, value_scales;
    kernels::DeviceBuffer key_mirror, value_mirror;  // residual window; none on the host
    std::int64_t mirror_bytes() const {
      return static_cast<std::int64_t>(key_mirror.bytes() + value_mirror.bytes());
    }
  };
  std::uint8_t* host_slot(cache::HostSlot slot, std::size_t layer);
  Planes allocate_planes(std::size_t layer, int device, PageHome home);
  void set_planes(std::size_t layer, Planes planes);
  // Page operations that work wherever the layer's planes live.
  void save_page(std::size_t layer, cache::PageIndex page, void* host);
  void restore_page(std::size_t layer, cache::PageIndex page, const void* host);
  void copy_page_tokens(std::size_t layer, cache::PageIndex source, cache::PageIndex destination,
                        int tokens);

  kernels::Backend& backend_;
  Config config_;
  std::vector<cache::LayerShape> shapes_;
  std::vector<int> devices_;
  std::vector<PageHome> homes_;
  std::vector<Planes> planes_;
  std::vector<LayerKvScales> calibrated_scales_;  // empty: dynamic FP8 scales
  // Per placed layer with calibrated scales: key scales then value scales,
  // on the device that writes its pages.
  std::vector<kernels::DeviceBuffer> calibrated_buffers_;
  std::vector<kernels::KvLayerView> views_;
  std::uint64_t generation_ = 0;
  std::vector<std::int64_t> host_offsets_;  // per layer, within one host slot
  std::int64_t host_slot_bytes_ = 0;
  std::unique_ptr<std::uint8_t[]> host_;  // host_pages slots
  std::unique_ptr<KvStreamer> streamer_;
  MirrorSlots mirrors_;
};

// The page codings of a cache format.
std::pair<kernels::KvCoding, kernels::KvCoding> kv_codings(cache::CacheFormat format);

}  // namespace quire::engine
