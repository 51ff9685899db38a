#pragma once

// Private to the EXL3 quantizer: the global scale that brings a regularized
// weight to where the trellis codes it best.

#include "exl3_regularize.h"
#include "exl3_tile_coder.h"

namespace quire::engine::formats::detail {

struct Exl3ScaleChoice {
  double scale = 1.0;
  double error = 0.0;  // the sample's squared error over its squared value
};

// As exllamav3's g_scale search: tiles sampled along a wrapped diagonal
// three wide (every tile row and column at least once: outliers tend to be
// whole inputs or outputs) plus those of the highest and lowest RMS; the
// scale that codes them best, from a coarse grid over 0.1-1.9 on a third of
// the sample, a fine one around its best on all of it, and a parabola
// through the fine grid's three best points. The error curve is flat at its
// minimum and not quite unimodal, which misleads a golden-section search.
Exl3ScaleChoice search_exl3_scale(const Exl3Regularized& regularized, Exl3TileCoder& coder);

}  // namespace quire::engine::formats::detail
