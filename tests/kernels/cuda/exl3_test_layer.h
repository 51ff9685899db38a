#pragma once

// A random EXL3 layer for the CUDA linear tests: random trellis words (any
// words are a valid code), and random signs and scales in suh and svh,
// padded as exllamav3's converter pads. The tensors live in this object.

#include <cstdint>
#include <random>
#include <vector>

#include "quire/kernels/linear_weight.h"

namespace quire::test {

struct Exl3TestLayer {
  std::int64_t in_features = 0;
  std::int64_t out_features = 0;
  int bits = 4;
  kernels::Exl3Codebook codebook = kernels::Exl3Codebook::mul1;
  std::vector<std::uint16_t> trellis;  // [Kp / 16, Np / 16, 16 * bits]
  std::vector<std::uint16_t> suh;      // FP16 [Kp]
  std::vector<std::uint16_t> svh;      // FP16 [Np]

  std::int64_t padded_in() const { return (in_features + 127) / 128 * 128; }
  std::int64_t padded_out() const { return (out_features + 127) / 128 * 128; }
  // Points into this object's tensors (host memory).
  kernels::LinearWeight weight() const;
};

// suh's magnitudes lie around 1 / sqrt(K), so that the products of inputs
// of order one stay of order one, as a converter's scales make them.
Exl3TestLayer random_exl3_layer(std::mt19937& rng, std::int64_t in_features,
                                std::int64_t out_features, int bits,
                                kernels::Exl3Codebook codebook);

}  // namespace quire::test
