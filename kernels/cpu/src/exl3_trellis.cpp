#include "quire/kernels/cpu/exl3_trellis.h"

#include <array>
#include <cmath>
#include <memory>

#include "quire/kernels/cpu/half.h"

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define QUIRE_HAVE_AVX2_HADAMARD 1
#endif

namespace quire::kernels {
namespace {

// MUL1's affine map in FP16: 0x1eee = 0.006771 (1 / 147.7) and 0xc931 =
// -10.38 = (-1024 - 510) / 147.7.
constexpr std::uint16_t kMul1ScaleHalf = 0x1eee;
constexpr std::uint16_t kMul1BiasHalf = 0xc931;

// The mask-and-xor both 3INST and MCG apply to the hashed state (lop3 with
// lookup table 0x6a: (x & 0x8fff8fff) ^ 0x3b603b60). It keeps each half's
// sign, two exponent bits and the mantissa, and sets the rest of the exponent
// so that both halves lie between 1/8 and 2 in magnitude.
std::uint16_t sum_of_halves(std::uint32_t x) {
  x = (x & 0x8fff8fffu) ^ 0x3b603b60u;
  const float low = half_to_float(static_cast<std::uint16_t>(x & 0xffffu));
  const float high = half_to_float(static_cast<std::uint16_t>(x >> 16));
  return float_to_half(low + high);
}

std::unique_ptr<const std::array<float, 65536>> build_table(Exl3Codebook codebook) {
  auto table = std::make_unique<std::array<float, 65536>>();
  for (std::uint32_t state = 0; state < 65536; ++state)
    (*table)[state] = half_to_float(exl3_codebook_half(state, codebook));
  return table;
}

template <typename T>
void hadamard128_of(T* values) {
  for (int distance = 1; distance < kExl3RotationSize; distance *= 2) {
    for (int base = 0; base < kExl3RotationSize; base += 2 * distance) {
      for (int i = base; i < base + distance; ++i) {
        const T a = values[i];
        const T b = values[i + distance];
        values[i] = a + b;
        values[i + distance] = a - b;
      }
    }
  }
  const T scale = static_cast<T>(1.0 / std::sqrt(static_cast<double>(kExl3RotationSize)));
  for (int i = 0; i < kExl3RotationSize; ++i)
    values[i] *= scale;
}

#ifdef QUIRE_HAVE_AVX2_HADAMARD
// The same butterflies in the same order, so the same floats, with 16
// registers of 8: distances 1, 2 and 4 within each register (the partner
// lane's value, plus or minus this lane's: one permute and one FMA with a
// vector of signs, exact as the a + b and a - b it stands for), then 8 to 64
// between registers.
__attribute__((target("avx2,fma"))) void hadamard128_avx2(float* values) {
  __m256 v[16];
  for (int r = 0; r < 16; ++r)
    v[r] = _mm256_loadu_ps(values + 8 * r);
  const __m256 signs1 = _mm256_setr_ps(1, -1, 1, -1, 1, -1, 1, -1);
  const __m256 signs2 = _mm256_setr_ps(1, 1, -1, -1, 1, 1, -1, -1);
  const __m256 signs4 = _mm256_setr_ps(1, 1, 1, 1, -1, -1, -1, -1);
  for (int r = 0; r < 16; ++r) {
    // Lane i holds v[i ^ d] + sign * v[i]: a + b in the lower lane of each
    // pair, a - b in the upper.
    v[r] = _mm256_fmadd_ps(v[r], signs1, _mm256_permute_ps(v[r], 0xb1));
    v[r] = _mm256_fmadd_ps(v[r], signs2, _mm256_permute_ps(v[r], 0x4e));
    v[r] = _mm256_fmadd_ps(v[r], signs4, _mm256_permute2f128_ps(v[r], v[r], 0x01));
  }
  for (int distance = 1; distance < 16; distance *= 2) {
    for (int base = 0; base < 16; base += 2 * distance) {
      for (int r = base; r < base + distance; ++r) {
        const __m256 a = v[r];
        const __m256 b = v[r + distance];
        v[r] = _mm256_add_ps(a, b);
        v[r + distance] = _mm256_sub_ps(a, b);
      }
    }
  }
  const __m256 scale = _mm256_set1_ps(static_cast<float>(1.0 / std::sqrt(128.0)));
  for (int r = 0; r < 16; ++r)
    _mm256_storeu_ps(values + 8 * r, _mm256_mul_ps(v[r], scale));
}
#endif

using Hadamard = void (*)(float*);

Hadamard choose_hadamard() {
#ifdef QUIRE_HAVE_AVX2_HADAMARD
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return hadamard128_avx2;
#endif
  return hadamard128_of<float>;
}

}  // namespace

std::uint16_t exl3_codebook_half(std::uint32_t state, Exl3Codebook codebook) {
  state &= 0xffffu;
  switch (codebook) {
    case Exl3Codebook::three_inst:
      return sum_of_halves(state * 89226354u + 64248484u);
    case Exl3Codebook::mcg:
      return sum_of_halves(state * kExl3McgMultiplier);
    case Exl3Codebook::mul1:
      break;
  }
  // 0x6400 + s is the FP16 value 1024 + s for s < 1024; the product with the
  // scale has at most 22 significant bits and the bias lies within the same
  // binade, so the float sum is exact and float_to_half rounds once.
  const auto s = static_cast<float>(1024 + exl3_mul1_byte_sum(state));
  return float_to_half(s * half_to_float(kMul1ScaleHalf) + half_to_float(kMul1BiasHalf));
}

float exl3_codebook_value(std::uint32_t state, Exl3Codebook codebook) {
  return half_to_float(exl3_codebook_half(state, codebook));
}

const float* exl3_codebook_table(Exl3Codebook codebook) {
  // Built on first use; C++ makes the initialization of each static safe
  // against concurrent first calls.
  static const auto three_inst = build_table(Exl3Codebook::three_inst);
  static const auto mcg = build_table(Exl3Codebook::mcg);
  static const auto mul1 = build_table(Exl3Codebook::mul1);
  switch (codebook) {
    case Exl3Codebook::three_inst:
      return three_inst->data();
    case Exl3Codebook::mcg:
      return mcg->data();
    case Exl3Codebook::mul1:
      break;
  }
  return mul1->data();
}

float exl3_mul1_scale() {
  return half_to_float(kMul1ScaleHalf);
}

float exl3_mul1_offset() {
  return 1024.0f * half_to_float(kMul1ScaleHalf) + half_to_float(kMul1BiasHalf);
}

void exl3_hadamard128(float* values) {
  static const Hadamard hadamard = choose_hadamard();
  hadamard(values);
}

void exl3_hadamard128(double* values) {
  hadamard128_of(values);
}

}  // namespace quire::kernels
