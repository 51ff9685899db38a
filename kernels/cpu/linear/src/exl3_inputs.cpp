// The inputs of an EXL3 product: each row times suh and rotated (the
// 128-point Hadamard transform per block), once per call, and for the
// integer kernels rounded to 8 bits per block of 128.

#include <algorithm>
#include <cmath>

#include "exl3_kernels.h"
#include "quire/kernels/cpu/exl3_trellis.h"
#include "quire/kernels/cpu/half.h"

namespace quire::kernels::linear_detail {

void exl3_prepare_inputs(ThreadPool& pool, const Product& product, const Exl3Weight& weight,
                         bool integers, Exl3Inputs& inputs) {
  const std::int64_t in = product.in_features;
  const std::int64_t padded = weight.padded_in;
  const std::int64_t blocks = padded / kExl3InputBlock;
  inputs.rows = static_cast<int>(product.rows);
  inputs.decode = product.kind == ProductRows::decode;
  inputs.padded_in = padded;
  grow_to(inputs.rotated, std::size_t(product.rows * padded));
  grow_to(inputs.row_sums, std::size_t(product.rows));
  if (integers) {
    grow_to(inputs.integers, std::size_t(product.rows * padded));
    grow_to(inputs.block_scales, std::size_t(product.rows * blocks));
  }
  pool.parallel_for(product.rows, 4, [&](std::int64_t begin, std::int64_t end) {
    for (std::int64_t r = begin; r < end; ++r) {
      float* row = inputs.rotated.data() + r * padded;
      const float* x = product.x + r * in;
      for (std::int64_t k = 0; k < in; ++k)
        row[k] = x[k] * half_to_float(weight.suh[k]);
      std::fill(row + in, row + padded, 0.0f);
      for (std::int64_t k = 0; k < padded; k += kExl3RotationSize)
        exl3_hadamard128(row + k);
      double sum = 0.0;
      for (std::int64_t k = 0; k < padded; ++k)
        sum += row[k];
      inputs.row_sums[std::size_t(r)] = static_cast<float>(sum);
      if (!integers) continue;
      // The integer kernels' offset term takes the sum of the rounded inputs:
      // their rounding errors then cancel between it and the byte sums
      // (whose mean times the scale is about minus the offset) rather than
      // shifting every output of the row alike.
      std::int8_t* q = inputs.integers.data() + r * padded;
      double rounded_sum = 0.0;
      for (std::int64_t b = 0; b < blocks; ++b) {
        const float* values = row + b * kExl3InputBlock;
        float largest = 0.0f;
        for (int i = 0; i < kExl3InputBlock; ++i)
          largest = std::max(largest, std::fabs(values[i]));
        const float scale = largest / 127.0f;
        const float inverse = largest > 0.0f ? 127.0f / largest : 0.0f;
        inputs.block_scales[std::size_t(r * blocks + b)] = scale;
        std::int64_t block_sum = 0;
        for (int i = 0; i < kExl3InputBlock; ++i) {
          const auto value = static_cast<std::int8_t>(std::lrintf(values[i] * inverse));
          q[b * kExl3InputBlock + i] = value;
          block_sum += value;
        }
        rounded_sum += double(scale) * double(block_sum);
      }
      inputs.row_sums[std::size_t(r)] = static_cast<float>(rounded_sum);
    }
  });
}

}  // namespace quire::kernels::linear_detail
