#pragma once

#include <cstdint>

#include "quire/kernels/cpu/half.h"

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

}  // namespace quire::kernels
