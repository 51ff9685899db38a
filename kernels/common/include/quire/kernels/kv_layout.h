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
//          that has seen only zeros has scale 0. With calibrated scales
//          (KvCalibratedScales) every page's scales are those, so reading a
//          page is the same either way.
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

// Calibrated FP8 scales (llm-compressor's static k_scale / v_scale): kv_heads
// FP32 values per half, in the memory of the device that writes the layer's
// pages. A half with them encodes value / scale[head] as E4M3 (saturating),
// with no per-page absmax; null: the page's own scale (dynamic). Only FP8
// halves read them.
struct KvCalibratedScales {
  const float* key = nullptr;
  const float* value = nullptr;
};

// The residual window (the FP16 tail of transformers' QuantizedCache): a
// running sequence's open page is kept in FP16 beside its coded page, in one
// of `slot_count` mirror pages per half, [slot_count][page_size][kv_heads][head_dim],
// in the half's stored domain (integer codings: their Hadamard-rotated
// groups, so attention's arithmetic is the same for both). write_kv writes
// the coded page always and, for the tokens of the page a TokenBatch names
// as mirrored, the mirror too; attention reads a mirrored page from its
// mirror. So the newest tokens, the most attended, are exact, while the
// pages themselves stay coded, shared and hashed as before. Null / 0: none.
struct KvMirrors {
  void* key = nullptr;
  void* value = nullptr;
  int slot_count = 0;
};

// Bytes of one mirror page of one half.
constexpr std::int64_t kv_mirror_page_bytes(int page_size, int kv_heads, int head_dim) {
  return std::int64_t{page_size} * kv_heads * head_dim * 2;
}

struct KvLayerView {
  KvLayerLayout layout;
  KvPlanes planes;
  KvCalibratedScales calibrated = {};
  KvMirrors mirrors = {};
};

// Bytes of one page of one plane for a coding (data, or scales).
constexpr std::int64_t kv_data_page_bytes(KvCoding coding, int page_size, int kv_heads,
                                          int head_dim) {
  const std::int64_t elements = std::int64_t{page_size} * kv_heads * head_dim;
  switch (coding) {
    case KvCoding::Fp16:
      return elements * 2;
    case KvCoding::Int8:
    case KvCoding::Fp8:
      return elements;
    case KvCoding::Int4:
      return elements / 2;
  }
  return 0;
}

constexpr std::int64_t kv_scale_page_bytes(KvCoding coding, int page_size, int kv_heads,
                                           int head_dim) {
  switch (coding) {
    case KvCoding::Fp16:
      return 0;
    case KvCoding::Int8:
    case KvCoding::Int4:
      return std::int64_t{page_size} * kv_heads * (head_dim / 32) * 2;
    case KvCoding::Fp8:
      return std::int64_t{kv_heads} * 4;
  }
  return 0;
}

constexpr KvLayerLayout make_kv_layout(KvCoding key, KvCoding value, int page_size, int kv_heads,
                                       int head_dim, int num_pages) {
  return KvLayerLayout{key,
                       value,
                       page_size,
                       kv_heads,
                       head_dim,
                       num_pages,
                       kv_data_page_bytes(key, page_size, kv_heads, head_dim),
                       kv_scale_page_bytes(key, page_size, kv_heads, head_dim),
                       kv_data_page_bytes(value, page_size, kv_heads, head_dim),
                       kv_scale_page_bytes(value, page_size, kv_heads, head_dim)};
}

// Throws std::invalid_argument, naming the field, when a layout's sizes are
// not positive, its page byte counts are not what the codings need
// (make_kv_layout's), or integer codings meet a head_dim not divisible by 32.
// Every backend checks the layouts it is given with this.
void check_kv_layout(const KvLayerLayout& layout);

}  // namespace quire::kernels
