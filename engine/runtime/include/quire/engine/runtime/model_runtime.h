#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <vector>

#include "quire/cache/cache_config.h"
#include "quire/cache/page_cache.h"
#include "quire/engine/planner/planner.h"
#include "quire/engine/runtime/device_reserves.h"
#include "quire/engine/runtime/disk_tier.h"
#include "quire/engine/runtime/forward_pass.h"
#include "quire/engine/runtime/kv_storage.h"
#include "quire/engine/runtime/loaded_model.h"
#include "quire/engine/runtime/model_description.h"
#include "quire/kernels/backend.h"

namespace quire::engine {

// Mirror slots of the residual window unless asked otherwise: 4, which
// covers the chats a desktop runs at once (a server's further sequences read
// their open pages coded). On the trained demo model, token by token on pages
// of 32 (bench/results/2026-11-28-perplexity-kv-window.md), the window cut
// the KL divergence from the FP16 cache 4-6 times for every coding with a
// 4-bit or FP8 half (Q4 0.0076 -> 0.0015 nats) and a little for Q8; its
// decode cost on the CPU was not measurable, and each slot costs one FP16
// page per layer, which the plan prices. An FP16 cache has none.
inline constexpr int kDefaultResidualWindow = 4;

struct RuntimeOptions {
  cache::CacheFormat cache_format = cache::CacheFormat::FP16;
  // Tokens of KV cache (rounded up to whole pages); 0: the model's
  // max_position_embeddings.
  std::int64_t cache_tokens = 0;
  int page_size = 256;
  int max_chunk_tokens = 256;  // prefill chunk, and tokens per step
  int max_sequences = 16;
  // The residual window: up to this many running sequences read their open
  // page (the newest tokens, the most attended) from an FP16 mirror instead
  // of its coding (KvStorage::Config::mirror_slots); each slot costs one
  // FP16 page per layer, priced by the plan. 0, or an FP16 cache: none;
  // more than max_sequences: max_sequences.
  int residual_window = kDefaultResidualWindow;
  int host_pages = 0;
  cache::ReservationPolicy reservation = cache::ReservationPolicy::ReserveOnAdmission;
  // Placement mode and manual limits; the policy's reserves are replaced by
  // `reserve_bytes` (one figure, one per device, or the backend's advice).
  PlacementPolicy placement;
  DeviceReserves reserve_bytes;
  // Decode steps recorded and replayed as a whole where the backend can
  // (CUDA graphs; ForwardPass). The environment variable QUIRE_STEP_GRAPHS=0
  // turns them off too, for debugging without rebuilding a front end.
  bool step_graphs = true;
  // Where the cache's pages live (CacheResidence). Offloaded layers keep
  // their pages in host memory, checked against what the host has free
  // beyond `host_reserve_bytes`, and stream them through `staging_slots`
  // slots per device. `host_copy_bytes_per_second` feeds the plan's estimate
  // of what streaming costs; ModelRuntime measures it when it is 0.
  CacheResidence cache_residence = CacheResidence::Device;
  int staging_slots = 2;
  std::int64_t host_reserve_bytes = kGiB;
  double host_copy_bytes_per_second = 0;
  // FP8 cache halves encode with the checkpoint's calibrated K/V scales
  // (ModelDescription::kv_scales) where it has them; false: with per-page
  // scales, as for any other model.
  bool calibrated_kv_scales = true;
  // Every attention layer's pages on one device, a position among the
  // backend's devices (PlacementRequest::cache_device), wherever the layers'
  // weights go: a layer computed elsewhere sends its q, k and v there and
  // gets its attention back (ForwardPass). Offloaded layers stream through
  // one staging ring there. Unset: each layer's pages on its own device.
  std::optional<int> cache_device;
};

// Whether layer `layer`'s pages go to host memory under `residence`.
bool cache_layer_offloaded(const ModelDescription& model, std::size_t layer,
                           CacheResidence residence);

// The residual window's mirror slots these options give: none for an FP16
// cache, and at most max_sequences.
int residual_window_slots(const RuntimeOptions& options);

// Where the cache's pages should live on `devices`: as asked, except where
// every device is the machine's own memory (DeviceInfo::host_memory), so that
// the cache is in host memory already; offloading it would copy its pages
// from host memory to host memory and count them twice. The application
// applies it to the user's choice; the runtime itself does as it is told, so
// the offload path stays testable on a CPU device.
CacheResidence effective_residence(CacheResidence asked,
                                   std::span<const kernels::DeviceInfo> devices);

// What a placement request for this model with these options looks like.
PlacementRequest placement_request(const ModelDescription& model,
                                   std::span<const kernels::DeviceInfo> devices,
                                   const RuntimeOptions& options);

// A model ready to run: planned against the backend's devices (and refused
// with the planner's verdict before any weight is read if it does not fit),
// loaded, with its paged cache's bookkeeping and storage.
class ModelRuntime {
 public:
  ModelRuntime(std::shared_ptr<const ModelDescription> model, kernels::Backend& backend,
               const RuntimeOptions& options, const LoadOptions& load = {});
  ~ModelRuntime();

  const ModelDescription& model() const { return *model_; }
  const PlacementPlan& plan() const { return plan_; }
  const RuntimeOptions& options() const { return options_; }
  kernels::Backend& backend() { return backend_; }
  cache::PageCache& cache() { return *cache_; }
  const cache::PageCache& cache() const { return *cache_; }
  KvStorage& storage() { return *storage_; }
  ForwardPass& forward() { return *forward_; }
  const LoadedModel& loaded() const { return loaded_; }

  // The disk tier (DiskTier) of this model's cache: opened under
  // options.root, replacing any before, and attached to the cache's
  // bookkeeping. Throws what DiskTier throws; then the cache goes on without
  // one. The identity counts the engine settings that change K/V bytes.
  DiskTier& open_disk_tier(DiskTierOptions options);
  // Detaches and closes the disk tier (queued pages are written first).
  void close_disk_tier();
  DiskTier* disk_tier() { return disk_.get(); }
  const DiskTier* disk_tier() const { return disk_.get(); }
  // Writes what the device cache holds to the disk tier (DiskTier::archive):
  // for a quit or an unload. Nothing without a disk tier.
  ArchiveResult archive_cache();

  // Executes an admission's instructions: saves to the host tier and to
  // disk, restores from both, copies. False when a page could not be read
  // from disk: then the caller abandons the admission (PageCache::abandon)
  // and prepares it again, which no longer counts on that page.
  [[nodiscard]] bool execute(const cache::CacheInstructions& instructions);
  // Saves pages about to be reused (an AppendResult's saves) to the host
  // tier and to disk.
  void save_evicted(std::span<const cache::HostSave> saves,
                    std::span<const cache::DiskSave> disk_saves);

  // Runs `tokens` as one new sequence through the cache: shared and cached
  // pages are reused, the rest is computed in page-aligned chunks. Returns the
  // logits of the last position, or of every position when `all` (then every
  // position is computed). The sequence is released; its pages stay cached.
  // A model with M-RoPE may be given each token's three rotary ids
  // (ForwardPass::Sequence::rope_positions; 3 x tokens.size()); pages are
  // still shared by token ids alone, so ids that stand for an image must
  // depend on its content (docs/vision.md).
  std::vector<std::vector<float>> prefill(std::span<const cache::TokenId> tokens, bool all,
                                          std::span<const std::int32_t> rope_positions = {});

  // Moves every attention layer's pages that live on a device into host
  // memory, contents kept, so that the device memory they held is free:
  // the cache's pages then stream through a staging ring per device, as if
  // the model had been loaded with CacheResidence::Offloaded. At any step
  // boundary, a failed step's included. Throws DeviceOutOfMemory when the
  // host cannot hold the pages (what moved so far stays moved, every layer
  // whole), or a device not even its ring (then everything moved and each
  // step asks for the ring again before it begins).
  void offload_cache();

 private:
  std::shared_ptr<const ModelDescription> model_;
  kernels::Backend& backend_;
  RuntimeOptions options_;
  PlacementPlan plan_;
  LoadedModel loaded_;
  std::unique_ptr<cache::PageCache> cache_;
  std::unique_ptr<KvStorage> storage_;
  std::unique_ptr<ForwardPass> forward_;
  std::unique_ptr<DiskTier> disk_;
};

// Chunks of [begin, end) no longer than `max_tokens`, ending on page
// boundaries where possible (a write at slot 0 starts a page afresh).
std::vector<cache::TokenRange> page_aligned_chunks(cache::TokenRange range, int max_tokens,
                                                   int page_size);

}  // namespace quire::engine
