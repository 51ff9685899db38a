#include "kv_test_support.h"

#include <span>

#include "quire/kernels/cpu/cache_quant.h"
#include "quire/kernels/cpu/fp8.h"
#include "quire/kernels/cpu/half.h"

namespace quire::test {

using namespace quire::kernels;

KvStorage::KvStorage(const KvLayerLayout& layout) {
  view.layout = layout;
  const auto bytes = [&](std::int64_t page_bytes) {
    return static_cast<std::size_t>(page_bytes * layout.num_pages);
  };
  key_data.assign(bytes(layout.key_data_page_bytes), 0x5a);
  key_scales.assign(bytes(layout.key_scale_page_bytes), 0x5a);
  value_data.assign(bytes(layout.value_data_page_bytes), 0x5a);
  value_scales.assign(bytes(layout.value_scale_page_bytes), 0x5a);
  view.planes =
      KvPlanes{key_data.data(), key_scales.data(), value_data.data(), value_scales.data()};
}

std::vector<float> decode_stored(const KvStorage& storage, bool key, int page, int slot, int head) {
  const KvLayerLayout& layout = storage.view.layout;
  const KvCoding coding = key ? layout.key_coding : layout.value_coding;
  const std::vector<std::uint8_t>& data = key ? storage.key_data : storage.value_data;
  const std::vector<std::uint8_t>& scales = key ? storage.key_scales : storage.value_scales;
  const std::int64_t data_page = key ? layout.key_data_page_bytes : layout.value_data_page_bytes;
  const std::int64_t scale_page = key ? layout.key_scale_page_bytes : layout.value_scale_page_bytes;
  const int dim = layout.head_dim;
  std::vector<float> out(static_cast<std::size_t>(dim));
  const std::size_t index = std::size_t(slot) * std::size_t(layout.kv_heads) + std::size_t(head);
  switch (coding) {
    case KvCoding::Fp16: {
      const auto* values =
          reinterpret_cast<const std::uint16_t*>(data.data() + page * data_page) + index * dim;
      for (int i = 0; i < dim; ++i)
        out[std::size_t(i)] = half_to_float(values[i]);
      break;
    }
    case KvCoding::Int8:
    case KvCoding::Int4: {
      const int bits = coding == KvCoding::Int8 ? 8 : 4;
      const std::size_t bytes = std::size_t(dim) * std::size_t(bits) / 8;
      const std::size_t groups = std::size_t(dim) / 32;
      const auto* group_scales =
          reinterpret_cast<const std::uint16_t*>(scales.data() + page * scale_page) +
          index * groups;
      dequantize_int(std::span(data.data() + page * data_page + index * bytes, bytes),
                     std::span(group_scales, groups), bits, out);
      break;
    }
    case KvCoding::Fp8: {
      const float scale = reinterpret_cast<const float*>(scales.data() + page * scale_page)[head];
      const std::uint8_t* codes = data.data() + page * data_page + index * std::size_t(dim);
      for (int i = 0; i < dim; ++i)
        out[std::size_t(i)] = e4m3_to_float(codes[i]) * scale;
      break;
    }
  }
  return out;
}

std::vector<float> decode_stored_domain(const KvStorage& storage, bool key, int page, int slot,
                                        int head) {
  const KvLayerLayout& layout = storage.view.layout;
  const KvCoding coding = key ? layout.key_coding : layout.value_coding;
  if (coding != KvCoding::Int8 && coding != KvCoding::Int4)
    return decode_stored(storage, key, page, slot, head);
  const int bits = coding == KvCoding::Int8 ? 8 : 4;
  const std::vector<std::uint8_t>& data = key ? storage.key_data : storage.value_data;
  const std::vector<std::uint8_t>& scales = key ? storage.key_scales : storage.value_scales;
  const std::int64_t data_page = key ? layout.key_data_page_bytes : layout.value_data_page_bytes;
  const std::int64_t scale_page = key ? layout.key_scale_page_bytes : layout.value_scale_page_bytes;
  const int dim = layout.head_dim;
  const std::size_t index = std::size_t(slot) * std::size_t(layout.kv_heads) + std::size_t(head);
  const std::uint8_t* bytes = data.data() + page * data_page + index * std::size_t(dim * bits / 8);
  const auto* group_scales =
      reinterpret_cast<const std::uint16_t*>(scales.data() + page * scale_page) +
      index * std::size_t(dim / 32);
  std::vector<float> out(static_cast<std::size_t>(dim));
  for (int i = 0; i < dim; ++i) {
    const int level = bits == 8 ? bytes[i] : (i % 2 == 0 ? bytes[i / 2] & 0xf : bytes[i / 2] >> 4);
    const float step = half_to_float(group_scales[i / 32]) / float(1 << (bits - 1));
    out[std::size_t(i)] = float(level - (1 << (bits - 1))) * step;
  }
  return out;
}

}  // namespace quire::test
