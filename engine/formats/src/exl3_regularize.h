#pragma once

// Private to the EXL3 quantizer: the weight moved into the domain the trellis
// codes (exl3_quantizer.h says which steps), and back.

#include <cstdint>
#include <span>
#include <vector>

#include "quire/engine/formats/exl3_quantizer.h"

namespace quire::engine::formats::detail {

struct Exl3Regularized {
  std::int64_t padded_in = 0;   // Kp, rows
  std::int64_t padded_out = 0;  // Np, columns
  // [Kp, Np] row-major: H (diag(1/su) (W^T diag(1/sv)) H), the rotations
  // over blocks of 128 rows and columns.
  std::vector<float> weight;
  std::vector<double> su;  // [Kp]
  std::vector<double> sv;  // [Np]; 0 for outputs whose weights are all 0
  bool out_scales = false;
};

// W [N, K] to the trellis's domain, with its rows at the codebook's RMS.
// `input_power`: the Hessian's damped diagonal [Kp] (padded inputs hold the
// damping alone), which decides Exl3OutScales::automatic; empty without one.
Exl3Regularized regularize_exl3(std::span<const float> weight, std::int64_t out_features,
                                std::int64_t in_features, const Exl3QuantizeOptions& options,
                                std::span<const double> input_power);

// Multiplies the regularized weight by `scale` and divides su by it, which
// leaves the layer unchanged.
void rescale_exl3(Exl3Regularized& regularized, double scale);

// The 128-point Hadamard over each block of 128 rows (down the columns) or
// of 128 columns (along the rows) of a [rows, columns] matrix, in place.
void hadamard_rows(std::span<double> matrix, std::int64_t rows, std::int64_t columns);
void hadamard_columns(std::span<double> matrix, std::int64_t rows, std::int64_t columns);

// W^ [N, K] from the coded weight [Kp, Np] and the stored FP16 suh and svh:
// diag(suh) H coded H diag(svh), transposed back and cut to N x K.
std::vector<double> reconstruct_exl3(std::span<const float> coded, const Exl3Encoding& encoding);

}  // namespace quire::engine::formats::detail
