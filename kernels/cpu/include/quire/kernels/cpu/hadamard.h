#pragma once

namespace quire::kernels {

// In-place orthonormal 32-point Walsh-Hadamard transform: butterflies of
// distance 1, 2, 4, 8, 16 (lower partner a + b, upper a - b), then 1/sqrt(32).
// The transform is its own inverse. Rotating a group before quantizing spreads
// an outlier channel's energy over the whole group, so one large value no
// longer sets a coarse scale for its 31 neighbours.
inline constexpr float kInvSqrt32 = 0.17677669529663687f;

inline void hadamard32(float* values) {
  for (int distance = 1; distance < 32; distance *= 2) {
    for (int base = 0; base < 32; base += 2 * distance) {
      for (int i = base; i < base + distance; ++i) {
        const float a = values[i];
        const float b = values[i + distance];
        values[i] = a + b;
        values[i + distance] = a - b;
      }
    }
  }
  for (int i = 0; i < 32; ++i)
    values[i] *= kInvSqrt32;
}

}  // namespace quire::kernels
