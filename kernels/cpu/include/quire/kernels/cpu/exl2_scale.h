#pragma once

#include <cstdint>

#include "quire/kernels/cpu/half.h"
#include "quire/kernels/cpu/simd.h"

namespace quire::kernels {

// The scale of one EXL2 group and column, exactly as exllamav2 computes it in
// FP16: at load it divides q_scale_max by 256 in place (an FP16 tensor, so the
// quotient is rounded, into the subnormal range for small scales), and its
// kernels multiply by qs^2 in FP16. Quire's weights are therefore exactly the
// ones exllamav2 runs. qs is 1..16 (the stored nibble plus one).
inline float exl2_scale(int qs, std::uint16_t q_scale_max) {
  const float max_scale =
      half_to_float(float_to_half(half_to_float(q_scale_max) * (1.0f / 256.0f)));
  return half_to_float(float_to_half(static_cast<float>(qs * qs) * max_scale));
}

// table[code] = exl2_scale(code + 1, q_scale_max) for the 16 codes of a group:
// the same roundings, with the processor's FP16 conversion where it has one.
inline void exl2_scale_table(std::uint16_t q_scale_max, float* table) {
  const float max_scale =
      half_to_float(float_to_half(half_to_float(q_scale_max) * (1.0f / 256.0f)));
  for (int code = 0; code < 16; ++code)
    table[code] = static_cast<float>((code + 1) * (code + 1)) * max_scale;
  round_through_halves(table, 16);
}

}  // namespace quire::kernels
