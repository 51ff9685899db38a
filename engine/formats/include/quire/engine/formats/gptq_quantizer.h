#pragma once

// GPTQ (Frantar et al. 2022) for compressed-tensors' integer formats, as
// llm-compressor's GPTQModifier runs it: the columns (inputs) of W are
// rounded one at a time, each group's min-max scale computed when its first
// column comes up, from the weights as the error feedback has left them,
// and each rounding error spread over the columns not yet rounded through
// the upper Cholesky factor of H^-1, H the sum of x^T x over calibration
// inputs. That minimizes the layer's output error over those inputs rather
// than the weights' own. Inputs calibration never reached (H's diagonal 0)
// get weight 0, as there. With actorder the columns are taken by
// decreasing H[k, k] and groups formed in that order (actorder "group"):
// the file then carries weight_g_idx.

#include <cstdint>
#include <span>

#include "quire/engine/formats/compressed_tensors_writer.h"

namespace quire::engine::formats {

struct IntGptqOptions {
  IntQuantizeOptions format;        // its actorder_seed is not used
  std::span<const double> hessian;  // [K, K], row-major, symmetric
  // Added to H's diagonal, times its mean (llm-compressor's dampening_frac);
  // more is added, up to ten times over, where H is not positive definite.
  double damping = 0.01;
  bool actorder = false;
};

struct IntGptqReport {
  // tr(E H E^T) / tr(W H W^T) for E = W - W^ (the output error over the
  // calibration inputs, relative): of round-to-nearest, and of GPTQ.
  double rounded_error = 0.0;
  double gptq_error = 0.0;
};

// Throws std::invalid_argument for shapes the formats cannot hold or a
// Hessian of the wrong size, std::runtime_error where damping cannot make
// it positive definite.
IntQuantized quantize_ints_gptq(std::span<const float> weight, std::int64_t out_features,
                                std::int64_t in_features, const IntGptqOptions& options,
                                IntGptqReport* report = nullptr);

}  // namespace quire::engine::formats
