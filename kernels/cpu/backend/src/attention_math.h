#pragma once

// Private to the CPU backend: the exponential of the attention softmax and
// the tanh of score soft-capping, shared by the general kernel (scalar code
// the compiler vectorizes) and the AVX2 decode kernel
// (attention_decode_rows.cpp), which must compute the same functions.

#include <bit>
#include <cstdint>

#include "quire/kernels/cpu/simd.h"

namespace quire::kernels::cpu_attention {

// condition ? a : b on the bits: GCC at -O2 vectorizes no loop with a branch,
// and a conditional on floats stays one unless NaNs are ruled out.
QUIRE_CPU_INLINE float choose(bool condition, float a, float b) {
  const std::uint32_t mask = 0u - static_cast<std::uint32_t>(condition);
  return std::bit_cast<float>((std::bit_cast<std::uint32_t>(a) & mask) |
                              (std::bit_cast<std::uint32_t>(b) & ~mask));
}

// exp(x) for x <= 0 in vectorizable arithmetic (std::exp is a call): x = n ln2
// + r with |r| <= ln2 / 2, ln2 split in two so that r is exact (Cody and
// Waite), e^r by Cephes' expf polynomial (about 1 ulp), 2^n added to the
// exponent. x is clamped to [-86, 0]: exp(-86) = 4e-38 stays normal and is
// nothing beside the row's largest weight, which is 1.
namespace exp_constants {
inline constexpr float kLowest = -86.0f;
inline constexpr float kLog2e = 1.44269504088896341f;
inline constexpr float kRound = 12582912.0f;  // 1.5 * 2^23
inline constexpr float kLn2High = 0.693359375f;
inline constexpr float kLn2Low = -2.12194440e-4f;
inline constexpr float kPolynomial[6] = {1.9875691500e-4f, 1.3981999507e-3f, 8.3334519073e-3f,
                                         4.1665795894e-2f, 1.6666665459e-1f, 5.0000001201e-1f};
}  // namespace exp_constants

QUIRE_CPU_INLINE float exp_nonpositive(float x) {
  using namespace exp_constants;
  x = choose(x < kLowest, kLowest, x);
  x = choose(x > 0.0f, 0.0f, x);
  // Adding and subtracting 1.5 * 2^23 rounds to the nearest integer.
  const float n = (x * kLog2e + kRound) - kRound;
  const float r = (x - n * kLn2High) - n * kLn2Low;
  float p = kPolynomial[0];
  p = p * r + kPolynomial[1];
  p = p * r + kPolynomial[2];
  p = p * r + kPolynomial[3];
  p = p * r + kPolynomial[4];
  p = p * r + kPolynomial[5];
  p = p * (r * r) + r + 1.0f;
  const auto shift = static_cast<std::uint32_t>(static_cast<std::int32_t>(n)) << 23;
  return std::bit_cast<float>(std::bit_cast<std::uint32_t>(p) + shift);
}

// tanh(x) in vectorizable arithmetic (std::tanh is a call, dearer than the
// dot product that made the score), as Cephes' tanhf: below |x| = 0.625 an
// odd polynomial, above it 1 - 2 / (e^2|x| + 1) = (1 - e^-2|x|) / (1 +
// e^-2|x|), which cancels nothing there; within a few units in the last
// place. Both are computed and one chosen, so no branch stops the vectorizer.
namespace tanh_constants {
inline constexpr float kPolynomialBelow = 0.625f;
inline constexpr float kPolynomial[5] = {-5.70498872745e-3f, 2.06390887954e-2f, -5.37397155531e-2f,
                                         1.33314422036e-1f, -3.33332819422e-1f};
}  // namespace tanh_constants

QUIRE_CPU_INLINE float tanh_vectorizable(float x) {
  using namespace tanh_constants;
  const std::uint32_t sign = std::bit_cast<std::uint32_t>(x) & 0x80000000u;
  const float magnitude = std::bit_cast<float>(std::bit_cast<std::uint32_t>(x) ^ sign);
  // e^-2|x| is clamped at e^-86, where the quotient is 1 in FP32.
  const float e = exp_nonpositive(-2.0f * magnitude);
  const float far = (1.0f - e) / (1.0f + e);
  const float z = magnitude * magnitude;
  float p = kPolynomial[0];
  p = p * z + kPolynomial[1];
  p = p * z + kPolynomial[2];
  p = p * z + kPolynomial[3];
  p = p * z + kPolynomial[4];
  const float near = p * z * magnitude + magnitude;
  const float result = choose(magnitude < kPolynomialBelow, near, far);
  return std::bit_cast<float>(std::bit_cast<std::uint32_t>(result) | sign);
}

// Attention soft-capping of one score (AttentionParams::softcap > 0).
QUIRE_CPU_INLINE float soft_cap_score(float score, float cap) {
  return cap * tanh_vectorizable(score / cap);
}

}  // namespace quire::kernels::cpu_attention
