#pragma once

#include <cstdint>

#include "quire/kernels/cpu/half.h"

namespace quire::kernels {

// The scale of one EXL2 group and column: qs^2 * q_scale_max / 256, rounded to
// FP16 as exllamav2 computes it (its converter and its kernels both do), so
// Quire's weights are exactly the ones exllamav2 runs. qs is 1..16 (the stored
// nibble plus one).
inline float exl2_scale(int qs, std::uint16_t q_scale_max) {
  const float max_scale = half_to_float(q_scale_max) * (1.0f / 256.0f);
  return half_to_float(float_to_half(static_cast<float>(qs * qs) * max_scale));
}

}  // namespace quire::kernels
