#pragma once

// Private: the scale and zero point compressed-tensors' min-max observer
// gives a group of weights (compressed_tensors_writer.h says how), shared by
// round-to-nearest and GPTQ, which computes them over weights its error
// feedback has already moved.

#include <algorithm>
#include <cmath>

#include "quire/engine/formats/compressed_tensors_writer.h"
#include "quire/kernels/cpu/half.h"

namespace quire::engine::formats::detail {

struct IntGroupScale {
  float scale = 1.0f;  // as stored in the scales' dtype
  int zero = 0;
  int low = 0;   // -2^(b-1)
  int high = 0;  // 2^(b-1) - 1

  // The nearest representable integer to `weight`.
  int quantize(double weight) const {
    const double value = std::nearbyint(weight / double(scale) + zero);
    return static_cast<int>(std::clamp(value, double(low), double(high)));
  }
  double dequantize(int value) const { return double(value - zero) * double(scale); }
};

inline float stored_scale(double scale, kernels::DType dtype) {
  const auto value = static_cast<float>(scale);
  switch (dtype) {
    case kernels::DType::BF16:
      return kernels::bf16_to_float(kernels::float_to_bf16(value));
    case kernels::DType::F16:
      return kernels::half_to_float(kernels::float_to_half(value));
    default:
      return value;
  }
}

// `min` and `max`: the group's extremes, each taken with 0 (the observer's
// range always holds 0).
inline IntGroupScale int_group_scale(double min, double max, const IntQuantizeOptions& options) {
  IntGroupScale group;
  group.low = -(1 << (options.bits - 1));
  group.high = (1 << (options.bits - 1)) - 1;
  const double range = double(group.high - group.low);
  double scale = options.symmetric ? std::max(-min, max) / (range / 2.0) : (max - min) / range;
  scale = std::max(scale, 1.1920928955078125e-07);  // torch.finfo(float32).eps
  group.scale = stored_scale(scale, options.scale_dtype);
  if (!options.symmetric) {
    group.zero = static_cast<int>(std::clamp(std::nearbyint(group.low - min / group.scale),
                                             double(group.low), double(group.high)));
  }
  return group;
}

// Throws std::invalid_argument unless the formats can hold the layer.
void check_int_layer(std::int64_t out_features, std::int64_t in_features,
                     const IntQuantizeOptions& options);

}  // namespace quire::engine::formats::detail
