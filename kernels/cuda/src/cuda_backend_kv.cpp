// CudaBackend's paged K/V ops: argument checks on the host, as the CPU backend
// makes them (kernels/cpu/backend/src/cpu_kv_pages.cpp, cpu_attention.cpp),
// then the kernels of kv_write.cu and attention_*.cu on the device's stream;
// partial-page copies and host-tier saves and restores are plain copies.
//
// Positions and page tables live in device memory. The CPU backend throws
// for a position beyond its page table or an entry that is not a page; here
// that would need a copy to the host and a wait on every layer, so the
// kernels skip such tokens instead (write_kv writes nothing for them,
// attention counts no key there).

#include <cuda_runtime_api.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <mutex>
#include <stdexcept>
#include <string>
#include <utility>

#include "capture_guard.h"
#include "cuda_backend.h"
#include "kv_ops.h"
#include "quire/kernels/cuda/cuda_error.h"

namespace quire::kernels::cuda {
namespace {

constexpr std::size_t kScratchStep = std::size_t{1} << 20;  // bytes

// The shared memory a block may ask for on `gpu`. QUIRE_CUDA_ATTENTION_SHARED_BYTES
// lowers it, so that the GPU tests run the kernels smaller GPUs take (the
// small prefill tile of Turing and of sm_86/89/120) on any GPU.
std::size_t block_shared_limit(int gpu) {
  int bytes = 0;
  check(cudaDeviceGetAttribute(&bytes, cudaDevAttrMaxSharedMemoryPerBlockOptin, gpu),
        "read the GPU's shared memory per block");
  std::size_t limit = static_cast<std::size_t>(std::max(bytes, 0));
  const char* lowered = std::getenv("QUIRE_CUDA_ATTENTION_SHARED_BYTES");
  if (lowered != nullptr && *lowered != '\0') {
    limit = std::min<std::size_t>(limit, std::strtoull(lowered, nullptr, 10));
  }
  return limit;
}

cudaStream_t as_stream(void* stream) {
  return static_cast<cudaStream_t>(stream);
}

bool is_integer(KvCoding coding) {
  return coding == KvCoding::Int8 || coding == KvCoding::Int4;
}

void check_page(const KvLayerLayout& layout, int page, const char* what) {
  if (page < 0 || page >= layout.num_pages) {
    throw std::out_of_range(std::string(what) + " page " + std::to_string(page) +
                            " is not one of the layer's " + std::to_string(layout.num_pages) +
                            " pages");
  }
}

KvPagesArgs pages_of(const KvLayerView& layer) {
  const KvLayerLayout& l = layer.layout;
  KvPagesArgs pages;
  pages.key = KvPlaneArgs{static_cast<std::uint8_t*>(layer.planes.key_data),
                          static_cast<std::uint8_t*>(layer.planes.key_scales),
                          l.key_data_page_bytes,
                          l.key_scale_page_bytes,
                          l.key_coding,
                          layer.calibrated.key};
  pages.value = KvPlaneArgs{static_cast<std::uint8_t*>(layer.planes.value_data),
                            static_cast<std::uint8_t*>(layer.planes.value_scales),
                            l.value_data_page_bytes,
                            l.value_scale_page_bytes,
                            l.value_coding,
                            layer.calibrated.value};
  pages.page_size = l.page_size;
  pages.kv_heads = l.kv_heads;
  pages.head_dim = l.head_dim;
  pages.num_pages = l.num_pages;
  if (layer.mirrors.slot_count > 0 && layer.mirrors.key != nullptr &&
      layer.mirrors.value != nullptr) {
    const std::int64_t mirror_bytes = kv_mirror_page_bytes(l.page_size, l.kv_heads, l.head_dim);
    pages.key.mirror = static_cast<std::uint8_t*>(layer.mirrors.key);
    pages.value.mirror = static_cast<std::uint8_t*>(layer.mirrors.value);
    pages.key.mirror_page_bytes = mirror_bytes;
    pages.value.mirror_page_bytes = mirror_bytes;
    pages.mirror_slots = layer.mirrors.slot_count;
  }
  return pages;
}

BatchArgs batch_of(const TokenBatch& batch) {
  return BatchArgs{batch.token_sequence, batch.positions,      batch.block_tables,
                   batch.tokens,         batch.max_pages,      batch.mirrored,
                   batch.visible_from,   batch.visible_through};
}

// The attention kernels read head vectors 16 bytes at a time.
void check_aligned(const KvLayerView& layer) {
  for (const void* plane : {layer.planes.key_data, layer.planes.value_data}) {
    if (reinterpret_cast<std::uintptr_t>(plane) % 16 != 0) {
      throw std::invalid_argument("K/V data planes must start at a 16-byte boundary");
    }
  }
}

// The planes of a layer as (data, data bytes per page, scales, scale bytes per
// page), key first, as save_page lays them out.
struct PlaneBytes {
  std::uint8_t* data;
  std::int64_t data_page_bytes;
  std::uint8_t* scales;
  std::int64_t scale_page_bytes;
  KvCoding coding;
};

std::array<PlaneBytes, 2> planes_of(const KvLayerView& layer) {
  const KvLayerLayout& l = layer.layout;
  return {PlaneBytes{static_cast<std::uint8_t*>(layer.planes.key_data), l.key_data_page_bytes,
                     static_cast<std::uint8_t*>(layer.planes.key_scales), l.key_scale_page_bytes,
                     l.key_coding},
          PlaneBytes{static_cast<std::uint8_t*>(layer.planes.value_data), l.value_data_page_bytes,
                     static_cast<std::uint8_t*>(layer.planes.value_scales),
                     l.value_scale_page_bytes, l.value_coding}};
}

}  // namespace

float* CudaBackend::attention_scratch(int device, std::size_t floats) {
  DeviceBuffer& buffer = attention_scratch_[static_cast<std::size_t>(device)];
  const std::size_t bytes = floats * sizeof(float);
  if (buffer.bytes() < bytes) {
    refuse_while_capturing("paged_attention: growing its scratch");
    // Freeing waits for the queued work that may still use the old buffer.
    buffer.reset();
    ++workspace_generation_;
    buffer = allocate(device, (bytes + kScratchStep - 1) / kScratchStep * kScratchStep,
                      "attention scratch");
  }
  return buffer.as<float>();
}

void CudaBackend::write_kv(int device, const KvLayerView& layer, const TokenBatch& batch,
                           const float* key, const float* value) {
  activate(device);
  check_kv_layout(layer.layout);
  if (batch.tokens <= 0) return;
  const KvPagesArgs pages = pages_of(layer);
  launch_write_kv(pages, batch_of(batch), key, value, stream(device));
  launch_write_mirrors(pages, batch_of(batch), key, value, stream(device));
}

void CudaBackend::fill_mirror(int device, const KvLayerView& layer, int page, int slot,
                              int tokens) {
  activate(device);
  check_kv_layout(layer.layout);
  const KvPagesArgs pages = pages_of(layer);
  if (pages.mirror_slots <= 0) {
    throw std::invalid_argument("fill_mirror: this cache layer has no FP16 mirrors");
  }
  check_page(layer.layout, page, "mirrored");
  if (slot < 0 || slot >= pages.mirror_slots) {
    throw std::invalid_argument("fill_mirror: mirror slot " + std::to_string(slot) +
                                " is out of range");
  }
  launch_fill_mirror(pages, page, slot, std::clamp(tokens, 0, layer.layout.page_size),
                     stream(device));
}

void CudaBackend::paged_attention(int device, const KvLayerView& layer, const TokenBatch& batch,
                                  const float* query, const AttentionParams& params, float* out) {
  activate(device);
  const KvLayerLayout& layout = layer.layout;
  check_kv_layout(layout);
  if (params.heads <= 0 || params.heads % layout.kv_heads != 0) {
    throw std::invalid_argument("query heads must be a multiple of the K/V heads");
  }
  if (!(params.softcap >= 0.0f && std::isfinite(params.softcap))) {
    throw std::invalid_argument("attention soft-capping must be 0 (none) or a positive cap, not " +
                                std::to_string(params.softcap));
  }
  if (!attention_head_dim_supported(layout.head_dim)) {
    throw std::invalid_argument(
        "the CUDA backend's attention needs head_dim a multiple of 16 up "
        "to " +
        std::to_string(kAttentionMaxHeadDim) + ", not " + std::to_string(layout.head_dim));
  }
  check_aligned(layer);
  if (batch.tokens <= 0) return;

  const std::int64_t max_keys = std::int64_t{batch.max_pages} * layout.page_size;
  const std::size_t shared_limit = block_shared_limit(gpu(device));
  const bool prefill = batch.tokens > kDecodeTokens;
  if (attention_rows_within(prefill, layout.head_dim, shared_limit) == 0) {
    const Gpu& card = gpus_[static_cast<std::size_t>(gpu(device))];
    const int rows = prefill && attention_has_small_prefill(layout.head_dim)
                         ? kAttentionSmallPrefillRows
                         : attention_rows(prefill, layout.head_dim);
    throw std::invalid_argument(
        "GPU " + std::to_string(gpu(device)) + " (" + card.name + ", " + card.architecture +
        ") gives a thread block " + std::to_string(shared_limit / 1024) +
        " KiB of shared memory; the CUDA backend's attention at head_dim " +
        std::to_string(layout.head_dim) + " needs " +
        std::to_string(attention_tile_bytes(layout.head_dim, rows) / 1024) +
        " KiB, so this model cannot run on this GPU's CUDA backend; use --devices cpu");
  }
  const AttentionShape shape =
      plan_attention_shape(batch.tokens, params.heads, layout.kv_heads, layout.head_dim, max_keys,
                           multiprocessors(device), shared_limit);
  AttentionArgs args{query,          out,
                     params.heads,   params.heads / layout.kv_heads,
                     params.scale,   params.sliding_window,
                     params.softcap, nullptr};
  // The scratch stays locked until the kernels are queued; later calls on
  // this device's stream run after them, so it can be reused at once.
  std::lock_guard lock(attention_mutex_);
  const std::size_t floats =
      attention_scratch_floats(shape, batch.tokens, params.heads, layout.head_dim);
  if (floats > 0) args.scratch = attention_scratch(device, floats);
  launch_paged_attention(pages_of(layer), batch_of(batch), args, shape, stream(device));
}

void CudaBackend::copy_page_tokens(int device, const KvLayerView& layer, int source,
                                   int destination, int tokens) {
  activate(device);
  const KvLayerLayout& layout = layer.layout;
  check_kv_layout(layout);
  check_page(layout, source, "source");
  check_page(layout, destination, "destination");
  tokens = std::clamp(tokens, 0, layout.page_size);
  if (tokens == 0 || source == destination) return;
  const cudaStream_t queue = as_stream(stream(device));
  auto copy_bytes = [&](std::uint8_t* base, std::int64_t page_bytes, std::int64_t bytes) {
    check(cudaMemcpyAsync(base + destination * page_bytes, base + source * page_bytes,
                          static_cast<std::size_t>(bytes), cudaMemcpyDeviceToDevice, queue),
          "copy_page_tokens");
  };
  for (const PlaneBytes& plane : planes_of(layer)) {
    // Pages are token-major: the first `tokens` slots are the page's first bytes.
    copy_bytes(plane.data, plane.data_page_bytes,
               plane.data_page_bytes / layout.page_size * tokens);
    if (is_integer(plane.coding)) {
      copy_bytes(plane.scales, plane.scale_page_bytes,
                 plane.scale_page_bytes / layout.page_size * tokens);
    } else if (plane.coding == KvCoding::Fp8) {
      // The page's scale per head comes along whole, as on the CPU: the
      // copied codes are meaningful only under the scale they were written
      // with.
      copy_bytes(plane.scales, plane.scale_page_bytes, plane.scale_page_bytes);
    }
  }
}

void CudaBackend::save_page(int device, const KvLayerView& layer, int page, void* host) {
  activate(device);
  refuse_while_capturing("save_page");
  check_page(layer.layout, page, "saved");
  const cudaStream_t queue = as_stream(stream(device));
  auto* out = static_cast<std::uint8_t*>(host);
  for (const PlaneBytes& plane : planes_of(layer)) {
    for (const auto& [base, page_bytes] : {std::pair{plane.data, plane.data_page_bytes},
                                           std::pair{plane.scales, plane.scale_page_bytes}}) {
      if (page_bytes <= 0) continue;
      check(cudaMemcpyAsync(out, base + page * page_bytes, static_cast<std::size_t>(page_bytes),
                            cudaMemcpyDeviceToHost, queue),
            "save_page");
      out += page_bytes;
    }
  }
  // The host holds the page when the call returns, as with the CPU backend.
  check(cudaStreamSynchronize(queue), "save_page");
}

void CudaBackend::restore_page(int device, const KvLayerView& layer, int page, const void* host) {
  activate(device);
  refuse_while_capturing("restore_page");
  check_page(layer.layout, page, "restored");
  const cudaStream_t queue = as_stream(stream(device));
  const auto* in = static_cast<const std::uint8_t*>(host);
  for (const PlaneBytes& plane : planes_of(layer)) {
    for (const auto& [base, page_bytes] : {std::pair{plane.data, plane.data_page_bytes},
                                           std::pair{plane.scales, plane.scale_page_bytes}}) {
      if (page_bytes <= 0) continue;
      check(cudaMemcpyAsync(base + page * page_bytes, in, static_cast<std::size_t>(page_bytes),
                            cudaMemcpyHostToDevice, queue),
            "restore_page");
      in += page_bytes;
    }
  }
  // From pinned memory the copies read the host buffer asynchronously; the
  // caller may reuse it once the call returns, as with the CPU backend.
  check(cudaStreamSynchronize(queue), "restore_page");
}

}  // namespace quire::kernels::cuda
