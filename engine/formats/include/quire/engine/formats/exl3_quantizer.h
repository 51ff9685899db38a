#pragma once

#include <cstdint>
#include <span>

#include "quire/engine/formats/exl3_writer.h"
#include "quire/kernels/linear_weight.h"

namespace quire::engine::formats {

// Quantizing a weight to EXL3 the way exllamav3's converter does
// (exl3_lib/quantize.py), on the CPU: for small models, where its 2^16
// states per weight take minutes rather than a GPU's seconds.
//
// The weight, transposed to [inputs, outputs] and padded to multiples of
// 128 with zeros, is regularized into the distribution the codebook covers:
// random output signs (svh), optionally times each output's RMS; the
// 128-point Hadamard over the outputs; random input signs times each input's
// RMS over the codebook's own RMS (suh); the Hadamard over the inputs; then
// one global scale, searched on a sample of tiles, folded into suh. Each
// 16x16 tile is then coded by Exl3TrellisSearch. With a Hessian from
// calibration inputs, tiles are coded 16 input rows at a time from the last
// to the first, each block's targets moved by the errors already made
// (LDLQ, the feedback of GPTQ and QuIP#); without one, tile by tile.

enum class Exl3OutScales {
  automatic,  // with a Hessian whose inputs are not dominated by a few channels
  always,
  never,
};

struct Exl3QuantizeOptions {
  int bits = 4;  // 1 to 8
  kernels::Exl3Codebook codebook = kernels::Exl3Codebook::mul1;
  std::uint64_t seed = 1;  // of the signs, through std::mt19937_64
  Exl3OutScales out_scales = Exl3OutScales::automatic;
  // Optional: the sum of x^T x over `hessian_rows` calibration inputs x of
  // the layer, [K, K] row-major. Empty: no error feedback.
  std::span<const double> hessian;
  std::int64_t hessian_rows = 0;
  // Added to the Hessian's diagonal, times its mean (exllamav3's sigma_reg).
  double damping = 0.025;
  bool search_scale = true;
  int threads = 0;  // 0: one per hardware thread
};

struct Exl3QuantizeReport {
  double global_scale = 1.0;
  bool out_scales = false;
  bool error_feedback = false;
  // Squared error over squared value of the sampled tiles at the chosen
  // scale, as the regularized weight sees it.
  double sample_error = 0.0;
  // ||W - W^||^2 / ||W||^2 over the layer's own weights (FP16 suh and svh).
  double weight_error = 0.0;
  // With a Hessian: tr((W - W^) H (W - W^)^T) / tr(W H W^T), the error in
  // the layer's outputs over the calibration inputs.
  double proxy_error = 0.0;
  std::int64_t tiles = 0;        // coded into the layer
  std::int64_t tiles_coded = 0;  // including the scale search's samples
};

// Quantizes W [N, K] (Hugging Face layout, row-major, finite). Throws
// std::invalid_argument for bits outside 1..8, a matrix of the wrong size or
// with non-finite values, or a Hessian of the wrong size.
Exl3Encoding quantize_exl3(std::span<const float> weight, std::int64_t out_features,
                           std::int64_t in_features, const Exl3QuantizeOptions& options,
                           Exl3QuantizeReport* report = nullptr);

}  // namespace quire::engine::formats
