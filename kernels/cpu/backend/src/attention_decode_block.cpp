// Decoding of K/V pages into float scratch for CPU attention
// (attention_kernel.h): every coding's head vectors, in the stored domain
// (integer pages stay rotated), the residual window's page from its FP16
// mirror.

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>

#include "attention_kernel.h"
#include "quire/kernels/cpu/fp8.h"
#include "quire/kernels/cpu/half.h"
#include "quire/kernels/cpu/simd.h"

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#endif

namespace quire::kernels::cpu_attention {
namespace {

using cpu_kv::Plane;

const std::array<float, 256>& e4m3_table() {
  static const std::array<float, 256> table = [] {
    std::array<float, 256> values{};
    for (int code = 0; code < 256; ++code)
      values[std::size_t(code)] = e4m3_to_float(std::uint8_t(code));
    return values;
  }();
  return table;
}

[[noreturn]] __attribute__((noinline)) void bad_page(std::int32_t page) {
  throw std::out_of_range("page table entry " + std::to_string(page) + " is not a page");
}

#if defined(__x86_64__) && defined(__GNUC__)
// 32 levels of a Q4 group (16 bytes, element 2i in the low nibble of byte
// i, 2i + 1 in the high one) as (level - 8) * step, in AVX2. The portable
// loop's interleaved stores kept GCC from vectorizing it, and unpacking Q4
// pages took most of a Q4-cache decode step at long context.
__attribute__((target("avx2,fma"))) void decode_int4_group_avx2(const std::uint8_t* bytes,
                                                                float step, float* out) {
  const __m128i packed = _mm_loadu_si128(reinterpret_cast<const __m128i*>(bytes));
  const __m128i nibble = _mm_set1_epi8(0x0f);
  const __m128i low = _mm_and_si128(packed, nibble);
  const __m128i high = _mm_and_si128(_mm_srli_epi16(packed, 4), nibble);
  const __m128i first = _mm_unpacklo_epi8(low, high);   // elements 0-15
  const __m128i second = _mm_unpackhi_epi8(low, high);  // elements 16-31
  const __m256 scale = _mm256_set1_ps(step);
  const __m256 offset = _mm256_set1_ps(-8.0f * step);
  const __m128i halves[4] = {first, _mm_srli_si128(first, 8), second, _mm_srli_si128(second, 8)};
  for (int i = 0; i < 4; ++i) {
    const __m256 levels = _mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(halves[i]));
    _mm256_storeu_ps(out + 8 * i, _mm256_fmadd_ps(levels, scale, offset));
  }
}

bool processor_has_avx2_fma() {
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
}
#endif

// One token's head vector, integer codings in the rotated domain.
template <KvCoding Coding>
QUIRE_CPU_INLINE void decode_head(const Plane& plane, int page, int slot, int head,
                                  float* __restrict out) {
  const std::uint8_t* data = plane.head_data(page, slot, head);
  const int dim = plane.head_dim;
  if constexpr (Coding == KvCoding::Fp16) {
    widen_halves(reinterpret_cast<const std::uint16_t*>(data), dim, out);
  } else if constexpr (Coding == KvCoding::Fp8) {
    const std::array<float, 256>& table = e4m3_table();
    const float scale = *plane.page_scale(page, head);
    for (int i = 0; i < dim; ++i)
      out[i] = table[data[i]] * scale;
  } else {
    const std::uint16_t* scales = plane.head_scales(page, slot, head);
    for (int g = 0; g < dim / 32; ++g) {
      float* __restrict target = out + g * 32;
      if constexpr (Coding == KvCoding::Int4) {
        const float step = half_to_float(scales[g]) / 8.0f;
        const std::uint8_t* bytes = data + g * 16;
#if defined(__x86_64__) && defined(__GNUC__)
        static const bool avx2 = processor_has_avx2_fma();
        if (avx2) {
          decode_int4_group_avx2(bytes, step, target);
          continue;
        }
#endif
        for (int i = 0; i < 16; ++i) {
          target[2 * i] = (static_cast<float>(bytes[i] & 0xf) - 8.0f) * step;
          target[2 * i + 1] = (static_cast<float>(bytes[i] >> 4) - 8.0f) * step;
        }
      } else {
        const float step = half_to_float(scales[g]) / 128.0f;
        const std::uint8_t* bytes = data + g * 32;
        for (int i = 0; i < 32; ++i)
          target[i] = (static_cast<float>(bytes[i]) - 128.0f) * step;
      }
    }
  }
}

template <KvCoding Coding>
QUIRE_CPU_INLINE void decode_range(const Plane& plane, const std::int32_t* table, int page_size,
                                   int num_pages, int head, std::int32_t first, int count,
                                   float* out) {
  for (int j = 0; j < count; ++j) {
    const std::int32_t position = first + j;
    const std::int32_t page = table[position / page_size];
    if (page < 0 || page >= num_pages) bad_page(page);
    decode_head<Coding>(plane, page, position % page_size, head, out + j * plane.head_dim);
  }
}

#if defined(__x86_64__) && defined(__GNUC__)
// The FP16 head vectors of `count` consecutive slots of one page, `stride`
// halves apart, widened with F16C eight at a time (where
// fp16_decode_supported()). Widening each position
// through widen_halves (a call, its dispatch and a loop of eight
// conversions per 64-element head) took a fifth of prefill attention's time
// at 8,192 tokens.
__attribute__((target("avx2,f16c"))) void widen_heads_f16c(const std::uint16_t* first,
                                                           std::size_t stride, int count, int dim,
                                                           float* out) {
  for (int j = 0; j < count; ++j) {
    const std::uint16_t* source = first + std::size_t(j) * stride;
    float* target = out + std::ptrdiff_t{j} * dim;
    int i = 0;
    for (; i + 8 <= dim; i += 8) {
      _mm256_storeu_ps(
          target + i,
          _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(source + i))));
    }
    for (; i < dim; ++i)
      target[i] = _cvtsh_ss(source[i]);
  }
}

#else
void widen_heads_f16c(const std::uint16_t*, std::size_t, int, int, float*) {
  throw std::logic_error("F16C widening needs an x86-64 build with GCC or Clang");
}
#endif

// decode_range<KvCoding::Fp16> a page's run of positions at a time.
void decode_fp16_runs(const Plane& plane, const std::int32_t* table, int page_size, int num_pages,
                      int head, std::int32_t first, int count, float* out) {
  const std::size_t stride = std::size_t(plane.kv_heads) * std::size_t(plane.head_dim);
  int done = 0;
  while (done < count) {
    const std::int32_t position = first + done;
    const int index = position / page_size;
    const int run = std::min(count - done, (index + 1) * page_size - position);
    const std::int32_t page = table[index];
    if (page < 0 || page >= num_pages) bad_page(page);
    widen_heads_f16c(
        reinterpret_cast<const std::uint16_t*>(plane.head_data(page, position % page_size, head)),
        stride, run, plane.head_dim, out + std::ptrdiff_t{done} * plane.head_dim);
    done += run;
  }
}

QUIRE_CPU_INLINE void decode_coded(const Plane& plane, const std::int32_t* table, int page_size,
                                   int num_pages, int head, std::int32_t first, int count,
                                   float* out) {
  switch (plane.coding) {
    case KvCoding::Fp16:
      if (fp16_decode_supported()) {
        decode_fp16_runs(plane, table, page_size, num_pages, head, first, count, out);
      } else {
        decode_range<KvCoding::Fp16>(plane, table, page_size, num_pages, head, first, count, out);
      }
      return;
    case KvCoding::Fp8:
      decode_range<KvCoding::Fp8>(plane, table, page_size, num_pages, head, first, count, out);
      return;
    case KvCoding::Int8:
      decode_range<KvCoding::Int8>(plane, table, page_size, num_pages, head, first, count, out);
      return;
    case KvCoding::Int4:
      decode_range<KvCoding::Int4>(plane, table, page_size, num_pages, head, first, count, out);
      return;
  }
}

}  // namespace

QUIRE_CPU_CLONES void decode_positions(const Plane& plane, cpu_kv::Mirrored mirror,
                                       const std::int32_t* table, int page_size, int num_pages,
                                       int head, std::int32_t first, int count, float* out) {
  if (mirror.index < 0) {
    decode_coded(plane, table, page_size, num_pages, head, first, count, out);
    return;
  }
  int done = 0;
  while (done < count) {
    const std::int32_t position = first + done;
    const int index = position / page_size;
    const int run = std::min(count - done, (index + 1) * page_size - position);
    float* target = out + std::ptrdiff_t{done} * plane.head_dim;
    if (index == mirror.index) {
      for (int j = 0; j < run; ++j) {
        widen_halves(plane.mirror_head(mirror.slot, position % page_size + j, head), plane.head_dim,
                     target + std::ptrdiff_t{j} * plane.head_dim);
      }
    } else {
      decode_coded(plane, table, page_size, num_pages, head, position, run, target);
    }
    done += run;
  }
}

void decode_stored(const Plane& plane, int page, int slot, int head, float* out) {
  switch (plane.coding) {
    case KvCoding::Fp16:
      decode_head<KvCoding::Fp16>(plane, page, slot, head, out);
      return;
    case KvCoding::Fp8:
      decode_head<KvCoding::Fp8>(plane, page, slot, head, out);
      return;
    case KvCoding::Int8:
      decode_head<KvCoding::Int8>(plane, page, slot, head, out);
      return;
    case KvCoding::Int4:
      decode_head<KvCoding::Int4>(plane, page, slot, head, out);
      return;
  }
}

}  // namespace quire::kernels::cpu_attention
