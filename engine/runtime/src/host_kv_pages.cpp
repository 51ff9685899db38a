#include "host_kv_pages.h"

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>

namespace quire::engine::detail {
namespace {

using kernels::KvCoding;

struct HostPlane {
  std::uint8_t* base = nullptr;
  std::int64_t page_bytes = 0;
  // Per-token scales (integer codings) are token-major like the data; an
  // FP8 plane's scales belong to the whole page.
  bool per_token = true;
};

// In the order save_page writes them.
std::array<HostPlane, 4> planes_of(const kernels::KvLayerView& layer) {
  const kernels::KvLayerLayout& l = layer.layout;
  const auto bytes = [](void* data) { return static_cast<std::uint8_t*>(data); };
  return {HostPlane{bytes(layer.planes.key_data), l.key_data_page_bytes, true},
          HostPlane{bytes(layer.planes.key_scales), l.key_scale_page_bytes,
                    l.key_coding != KvCoding::Fp8},
          HostPlane{bytes(layer.planes.value_data), l.value_data_page_bytes, true},
          HostPlane{bytes(layer.planes.value_scales), l.value_scale_page_bytes,
                    l.value_coding != KvCoding::Fp8}};
}

}  // namespace

void host_save_page(const kernels::KvLayerView& layer, int page, void* out) {
  auto* to = static_cast<std::uint8_t*>(out);
  for (const HostPlane& plane : planes_of(layer)) {
    if (plane.page_bytes == 0) continue;
    std::memcpy(to, plane.base + page * plane.page_bytes,
                static_cast<std::size_t>(plane.page_bytes));
    to += plane.page_bytes;
  }
}

void host_restore_page(const kernels::KvLayerView& layer, int page, const void* in) {
  const auto* from = static_cast<const std::uint8_t*>(in);
  for (const HostPlane& plane : planes_of(layer)) {
    if (plane.page_bytes == 0) continue;
    std::memcpy(plane.base + page * plane.page_bytes, from,
                static_cast<std::size_t>(plane.page_bytes));
    from += plane.page_bytes;
  }
}

void host_copy_page_tokens(const kernels::KvLayerView& layer, int source, int destination,
                           int tokens) {
  const int page_size = layer.layout.page_size;
  tokens = std::clamp(tokens, 0, page_size);
  for (const HostPlane& plane : planes_of(layer)) {
    if (plane.page_bytes == 0) continue;
    const std::int64_t bytes =
        plane.per_token ? plane.page_bytes / page_size * tokens : plane.page_bytes;
    std::memmove(plane.base + destination * plane.page_bytes,
                 plane.base + source * plane.page_bytes, static_cast<std::size_t>(bytes));
  }
}

}  // namespace quire::engine::detail
