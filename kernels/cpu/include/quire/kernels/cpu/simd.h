#pragma once

// Support for the CPU kernels' hot loops, which are plain C++ that the
// compiler vectorizes: per-processor clones of a function and number
// conversions written without branches.

#include <bit>
#include <cstdint>

// On x86-64 a function marked QUIRE_CPU_CLONES is compiled twice, for the
// baseline (SSE2, 4 floats a vector) and for x86-64-v3 (AVX2 with FMA and
// F16C, 8 floats a vector), and the loader picks the clone the processor runs
// (GNU indirect functions). Everything such a function calls is forced inline
// (QUIRE_CPU_INLINE) so that it, too, is compiled for the chosen clone. The
// clones differ in rounding only: the v3 clone fuses a * b + c into one FMA.
// Defining QUIRE_CPU_CLONES empty builds the baseline only, as Clang builds
// do (the fuzz build): Clang cannot clone function templates.
#ifndef QUIRE_CPU_CLONES
#if defined(__x86_64__) && defined(__ELF__) && defined(__GNUC__) && !defined(__clang__)
#define QUIRE_CPU_CLONES __attribute__((target_clones("arch=x86-64-v3", "default")))
#else
#define QUIRE_CPU_CLONES
#endif
#endif
#ifndef QUIRE_CPU_INLINE
#define QUIRE_CPU_INLINE inline __attribute__((always_inline))
#endif

namespace quire::kernels {

// FP16 to FP32 without branches, so a loop converting an array vectorizes;
// exact for every input, like half_to_float. Subnormals are produced by a
// subtraction of two normal numbers rather than by a multiplication, which some
// processors execute slowly when an operand is subnormal.
QUIRE_CPU_INLINE float widen_half(std::uint16_t h) {
  const std::uint32_t shifted = (static_cast<std::uint32_t>(h) & 0x7fffu) << 13;
  const std::uint32_t exponent = shifted & 0x0f800000u;
  // All-ones masks instead of conditionals keep the loop free of branches.
  const std::uint32_t is_special = 0u - static_cast<std::uint32_t>(exponent == 0x0f800000u);
  const std::uint32_t is_small = 0u - static_cast<std::uint32_t>(exponent == 0);
  // Rebias the exponent from 15 to 127; infinities and NaNs get all ones.
  const std::uint32_t normal = shifted + 0x38000000u + (is_special & 0x38000000u);
  // 2^-14 * (1 + m/1024) - 2^-14 = m * 2^-24, also right for zero.
  const std::uint32_t small =
      std::bit_cast<std::uint32_t>(std::bit_cast<float>(shifted + 0x38800000u) - 0x1p-14f);
  const std::uint32_t bits = (normal & ~is_small) | (small & is_small);
  return std::bit_cast<float>(bits | ((static_cast<std::uint32_t>(h) & 0x8000u) << 16));
}

QUIRE_CPU_INLINE float widen_bf16(std::uint16_t b) {
  return std::bit_cast<float>(static_cast<std::uint32_t>(b) << 16);
}

// Whether kernels written for 512-bit registers may run: the processor has
// AVX-512 F, BW, DQ and VL, and QUIRE_CPU_VECTOR_BITS (read once; 256 or 128
// keeps the 256-bit kernels, for comparisons and for processors that slow
// their clock in 512-bit code) does not cap the width below 512.
bool wide_vectors_allowed();
// Whether 512-bit AVX-512 VNNI code may run: wide_vectors_allowed(), the
// processor has VNNI, and QUIRE_CPU_VNNI is not 0 (which runs the AVX-512BW
// kernels VNNI replaces, so that a processor with VNNI tests them too).
bool wide_vnni_allowed();

// Whether the processor converts halves with F16C (and the OS saves AVX
// registers), read from CPUID because Clang 14 cannot name F16C in
// __builtin_cpu_supports.
bool processor_has_f16c();

// Which clone of the QUIRE_CPU_CLONES functions the loader picked here, for a
// benchmark's report: "vectorized loops (x86-64-v3 clone)" or "(baseline)".
const char* vectorized_clone_name();

// out[i] = widen_half(in[i]) for i < count, with the processor's F16C
// conversion (8 values an instruction) where it has one. Exact like
// half_to_float; NaNs stay NaNs (F16C sets their quiet bit).
void widen_halves(const std::uint16_t* in, std::int64_t count, float* out);

// values[i] = half_to_float(float_to_half(values[i])): rounds to the nearest
// FP16 value (ties to even), with F16C where the processor has it.
void round_through_halves(float* values, std::int64_t count);

}  // namespace quire::kernels
