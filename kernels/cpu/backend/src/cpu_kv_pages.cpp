// Writing K/V into pages in every cache format, and whole-page maintenance:
// partial copies, host-tier saves and restores.

#include <algorithm>
#include <cmath>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include "attention_kernel.h"
#include "kv_access.h"
#include "quire/kernels/cpu/cache_quant.h"
#include "quire/kernels/cpu/cpu_backend.h"
#include "quire/kernels/cpu/hadamard.h"
#include "quire/kernels/cpu/half.h"

namespace quire::kernels {
namespace {

using cpu_kv::Plane;

// Integer and FP16 codings: each token's head vector is encoded on its own.
void encode_head(const Plane& plane, int page, int slot, int head, const float* values) {
  std::uint8_t* data = plane.head_data(page, slot, head);
  switch (plane.coding) {
    case KvCoding::Fp16: {
      auto* target = reinterpret_cast<std::uint16_t*>(data);
      for (int i = 0; i < plane.head_dim; ++i)
        target[i] = float_to_half(values[i]);
      return;
    }
    case KvCoding::Int8:
    case KvCoding::Int4: {
      const int bits = cpu_kv::data_bits(plane.coding);
      std::uint16_t* scales = plane.head_scales(page, slot, head);
      quantize_int(std::span<const float>(values, static_cast<std::size_t>(plane.head_dim)), bits,
                   std::span<std::uint8_t>(data, plane.head_bytes()),
                   std::span<std::uint16_t>(scales, static_cast<std::size_t>(plane.head_dim / 32)));
      return;
    }
    case KvCoding::Fp8:
      break;
  }
  throw std::logic_error("FP8 heads are encoded per page");
}

void write_plane(ThreadPool& pool, const Plane& plane, const KvLayerLayout& layout,
                 const TokenBatch& batch, const float* values) {
  const std::int64_t row = std::int64_t{plane.kv_heads} * plane.head_dim;
  if (plane.coding == KvCoding::Fp8 && plane.calibrated != nullptr) {
    // Fixed scales: tokens are independent. Each page's scale slots get the
    // calibrated values (first, on this thread: tokens of one page may be
    // encoded on different threads), so attention reads the page as any FP8
    // page.
    for (int h = 0; h < plane.kv_heads; ++h) {
      if (!(plane.calibrated[h] > 0.0f) || !std::isfinite(plane.calibrated[h])) {
        throw std::invalid_argument("calibrated FP8 scales must be positive and finite");
      }
    }
    for (std::int64_t t = 0; t < batch.tokens; ++t) {
      const cpu_kv::Slot at = cpu_kv::slot_of(batch, layout.page_size, layout.num_pages, t);
      std::copy_n(plane.calibrated, plane.kv_heads, plane.page_scale(at.page, 0));
    }
    pool.parallel_for(batch.tokens, 4, [&](std::int64_t begin, std::int64_t end) {
      for (std::int64_t t = begin; t < end; ++t) {
        const cpu_kv::Slot at = cpu_kv::slot_of(batch, layout.page_size, layout.num_pages, t);
        for (int h = 0; h < plane.kv_heads; ++h) {
          fp8_write_calibrated(std::span<const float>(values + t * row + h * plane.head_dim,
                                                      static_cast<std::size_t>(plane.head_dim)),
                               plane.calibrated[h], plane.head_data(at.page, at.slot, h));
        }
      }
    });
    return;
  }
  if (plane.coding != KvCoding::Fp8) {
    pool.parallel_for(batch.tokens, 4, [&](std::int64_t begin, std::int64_t end) {
      for (std::int64_t t = begin; t < end; ++t) {
        const cpu_kv::Slot at = cpu_kv::slot_of(batch, layout.page_size, layout.num_pages, t);
        for (int h = 0; h < plane.kv_heads; ++h) {
          encode_head(plane, at.page, at.slot, h, values + t * row + h * plane.head_dim);
        }
      }
    });
    return;
  }
  // FP8: a head's scale is shared by the page's tokens, so each head walks the
  // batch in order; heads are independent.
  pool.parallel_for(plane.kv_heads, 1, [&](std::int64_t begin, std::int64_t end) {
    for (std::int64_t h = begin; h < end; ++h) {
      const int head = static_cast<int>(h);
      for (std::int64_t t = 0; t < batch.tokens; ++t) {
        const cpu_kv::Slot at = cpu_kv::slot_of(batch, layout.page_size, layout.num_pages, t);
        float* scale = plane.page_scale(at.page, head);
        if (at.slot == 0) *scale = 0.0f;  // the page starts afresh
        const Fp8HeadBlock block{plane.head_data(at.page, 0, head), static_cast<std::size_t>(row),
                                 plane.head_dim};
        fp8_write_head(block, at.slot, 1,
                       std::span<const float>(values + t * row + h * plane.head_dim,
                                              static_cast<std::size_t>(plane.head_dim)),
                       *scale);
      }
    }
  });
}

// The mirrored tokens' head vectors into their mirror slots, in FP16 and the
// plane's stored domain: integer codings' pages hold Hadamard-rotated groups,
// and attention reads a mirror exactly as it reads the pages.
void write_mirror(ThreadPool& pool, const Plane& plane, const KvLayerView& layer,
                  const TokenBatch& batch, const float* values) {
  const int page_size = layer.layout.page_size;
  const std::int64_t row = std::int64_t{plane.kv_heads} * plane.head_dim;
  const auto write_tokens = [&](std::int64_t begin, std::int64_t end) {
    std::vector<float> head(static_cast<std::size_t>(plane.head_dim));
    for (std::int64_t t = begin; t < end; ++t) {
      const std::int32_t position = batch.positions[t];
      const cpu_kv::Mirrored mirror =
          cpu_kv::mirrored_of(batch, plane.mirror_slots, batch.token_sequence[t]);
      if (mirror.index < 0 || position < 0 || position / page_size != mirror.index) continue;
      for (int h = 0; h < plane.kv_heads; ++h) {
        std::copy_n(values + t * row + h * plane.head_dim, plane.head_dim, head.data());
        if (cpu_kv::is_integer(plane.coding)) {
          for (int g = 0; g < plane.head_dim; g += 32)
            hadamard32(head.data() + g);
        }
        std::uint16_t* target = plane.mirror_head(mirror.slot, position % page_size, h);
        for (int i = 0; i < plane.head_dim; ++i)
          target[i] = float_to_half(head[std::size_t(i)]);
      }
    }
  };
  // A decode step's few tokens cost less than waking the pool's threads.
  if (batch.tokens < 32) {
    write_tokens(0, batch.tokens);
  } else {
    pool.parallel_for(batch.tokens, 8, write_tokens);
  }
}

}  // namespace

void CpuBackend::write_kv(int device, const KvLayerView& layer, const TokenBatch& batch,
                          const float* key, const float* value) {
  check_device(device);
  check_kv_layout(layer.layout);
  cpu_kv::check_mirrored(batch, layer.mirrors.slot_count);
  write_plane(pool_, cpu_kv::key_plane(layer), layer.layout, batch, key);
  write_plane(pool_, cpu_kv::value_plane(layer), layer.layout, batch, value);
  if (batch.mirrored != nullptr && layer.mirrors.slot_count > 0) {
    write_mirror(pool_, cpu_kv::key_plane(layer), layer, batch, key);
    write_mirror(pool_, cpu_kv::value_plane(layer), layer, batch, value);
  }
}

void CpuBackend::fill_mirror(int device, const KvLayerView& layer, int page, int slot, int tokens) {
  check_device(device);
  check_kv_layout(layer.layout);
  if (layer.mirrors.slot_count <= 0 || layer.mirrors.key == nullptr ||
      layer.mirrors.value == nullptr) {
    throw std::invalid_argument("fill_mirror: this cache layer has no FP16 mirrors");
  }
  if (slot < 0 || slot >= layer.mirrors.slot_count || page < 0 || page >= layer.layout.num_pages) {
    throw std::invalid_argument("fill_mirror: page " + std::to_string(page) + " or mirror slot " +
                                std::to_string(slot) + " is out of range");
  }
  tokens = std::clamp(tokens, 0, layer.layout.page_size);
  for (const Plane& plane : {cpu_kv::key_plane(layer), cpu_kv::value_plane(layer)}) {
    std::vector<float> head(static_cast<std::size_t>(plane.head_dim));
    for (int t = 0; t < tokens; ++t) {
      for (int h = 0; h < plane.kv_heads; ++h) {
        cpu_attention::decode_stored(plane, page, t, h, head.data());
        std::uint16_t* target = plane.mirror_head(slot, t, h);
        for (int i = 0; i < plane.head_dim; ++i)
          target[i] = float_to_half(head[std::size_t(i)]);
      }
    }
  }
}

void CpuBackend::copy_page_tokens(int device, const KvLayerView& layer, int source, int destination,
                                  int tokens) {
  check_device(device);
  check_kv_layout(layer.layout);
  tokens = std::clamp(tokens, 0, layer.layout.page_size);
  for (const Plane& plane : {cpu_kv::key_plane(layer), cpu_kv::value_plane(layer)}) {
    const std::size_t token_bytes = plane.head_bytes() * static_cast<std::size_t>(plane.kv_heads);
    std::memmove(plane.head_data(destination, 0, 0), plane.head_data(source, 0, 0),
                 token_bytes * static_cast<std::size_t>(tokens));
    if (cpu_kv::is_integer(plane.coding)) {
      const std::size_t scale_bytes =
          plane.head_scale_bytes() * static_cast<std::size_t>(plane.kv_heads);
      std::memmove(plane.head_scales(destination, 0, 0), plane.head_scales(source, 0, 0),
                   scale_bytes * static_cast<std::size_t>(tokens));
    } else if (plane.coding == KvCoding::Fp8) {
      std::memmove(plane.page_scale(destination, 0), plane.page_scale(source, 0),
                   static_cast<std::size_t>(plane.scale_page_bytes));
    }
  }
}

void CpuBackend::save_page(int device, const KvLayerView& layer, int page, void* host) {
  check_device(device);
  auto* out = static_cast<std::uint8_t*>(host);
  for (const Plane& plane : {cpu_kv::key_plane(layer), cpu_kv::value_plane(layer)}) {
    std::memcpy(out, plane.data + page * plane.data_page_bytes,
                static_cast<std::size_t>(plane.data_page_bytes));
    out += plane.data_page_bytes;
    if (plane.scale_page_bytes > 0) {
      std::memcpy(out, plane.scales + page * plane.scale_page_bytes,
                  static_cast<std::size_t>(plane.scale_page_bytes));
      out += plane.scale_page_bytes;
    }
  }
}

void CpuBackend::restore_page(int device, const KvLayerView& layer, int page, const void* host) {
  check_device(device);
  const auto* in = static_cast<const std::uint8_t*>(host);
  for (const Plane& plane : {cpu_kv::key_plane(layer), cpu_kv::value_plane(layer)}) {
    std::memcpy(plane.data + page * plane.data_page_bytes, in,
                static_cast<std::size_t>(plane.data_page_bytes));
    in += plane.data_page_bytes;
    if (plane.scale_page_bytes > 0) {
      std::memcpy(plane.scales + page * plane.scale_page_bytes, in,
                  static_cast<std::size_t>(plane.scale_page_bytes));
      in += plane.scale_page_bytes;
    }
  }
}

}  // namespace quire::kernels
