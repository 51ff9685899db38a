#include "quire/kernels/fp8.h"

#include <array>

namespace quire::kernels {
namespace {

// The 127 non-negative finite codes in increasing order of value: for E4M3
// the order of the codes is the order of the values.
const std::array<float, 127>& positive_values() {
  static const std::array<float, 127> values = [] {
    std::array<float, 127> table{};
    for (int code = 0; code < 127; ++code)
      table[static_cast<std::size_t>(code)] = e4m3_to_float(static_cast<std::uint8_t>(code));
    return table;
  }();
  return values;
}

}  // namespace

std::uint8_t float_to_e4m3(float value) {
  if (std::isnan(value)) return 0x7F;
  const std::uint8_t sign = std::signbit(value) ? 0x80 : 0x00;
  const float magnitude = std::fabs(value);
  if (magnitude >= kE4m3Max) return sign | 0x7E;
  const std::array<float, 127>& values = positive_values();
  // The first code not below the magnitude, then the nearer of it and the
  // one before; a tie goes to the even code (an even mantissa).
  int high = 0;
  int count = 127;
  while (count > 0) {
    const int step = count / 2;
    if (values[static_cast<std::size_t>(high + step)] < magnitude) {
      high += step + 1;
      count -= step + 1;
    } else {
      count = step;
    }
  }
  if (high == 0) return sign;
  const int low = high - 1;
  const float below = magnitude - values[static_cast<std::size_t>(low)];
  const float above = values[static_cast<std::size_t>(high)] - magnitude;
  const int code = below < above ? low : above < below ? high : (low % 2 == 0 ? low : high);
  return static_cast<std::uint8_t>(sign | code);
}

}  // namespace quire::kernels
