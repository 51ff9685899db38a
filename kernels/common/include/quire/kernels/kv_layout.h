#pragma once

#include <cstdint>

namespace quire::kernels {

// How one layer's K/V pages are stored. Every plane is one buffer of
// num_pages equal slices; page p of a plane starts at p * <plane>_page_bytes.
// Within a page the data planes are token-major: [page_size][kv_heads][head_dim].
//   FP16:  K and V as FP16 values, no scales.
//   Q8/Q4: levels packed as in cache_quant.h, one FP16 scale per 32 elements
//          ([page_size][kv_heads][head_dim / 32]); Q6 is 8-bit K with 4-bit V.
//   FP8:   E4M3 codes, one FP32 scale per head ([kv_heads]) per page; a page
//          that has seen only zeros has scale 0.
enum class KvCoding : std::uint8_t { Fp16, Int8, Int4, Fp8 };

struct KvPlanes {
  void* key_data = nullptr;
  void* key_scales = nullptr;
  void* value_data = nullptr;
  void* value_scales = nullptr;
};

struct KvLayerLayout {
  KvCoding key_coding = KvCoding::Fp16;
  KvCoding value_coding = KvCoding::Fp16;
  int page_size = 0;
  int kv_heads = 0;
  int head_dim = 0;
  int num_pages = 0;
  std::int64_t key_data_page_bytes = 0;
  std::int64_t key_scale_page_bytes = 0;
  std::int64_t value_data_page_bytes = 0;
  std::int64_t value_scale_page_bytes = 0;
};

struct KvLayerView {
  KvLayerLayout layout;
  KvPlanes planes;
};

}  // namespace quire::kernels
