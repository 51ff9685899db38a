#pragma once

// quire-cli quantize --calibration: a text the FP16 model computes through
// Quire's engine, summing each projection's x^T x (the Hessian the EXL3
// quantizer's LDLQ and GPTQ weigh errors by).

#include <cstdint>
#include <filesystem>
#include <iosfwd>
#include <map>
#include <memory>
#include <string>

#include "quire/engine/io/model_tensors.h"
#include "quire/engine/runtime/linear_input_hessians.h"

namespace quire::cli {

struct CalibrationText {
  std::string path;         // a text file
  std::int64_t tokens = 0;  // use only its first N tokens; 0: all of it
};

struct Calibration {
  // By module ("model.layers.0.self_attn.q_proj"); projections that read the
  // same input share one sum.
  std::map<std::string, std::shared_ptr<const engine::LinearInputHessian>> hessians;
  int rows = 0;     // rows of text computed
  int columns = 0;  // tokens per row at most
  std::int64_t tokens = 0;
};

// Runs the text through the model in `in` in rows of 2048 tokens (fewer
// where the model was trained on fewer positions), one line of progress per
// row on `progress`. Throws UsageError for a text of fewer than 16 tokens.
Calibration calibrate(const std::filesystem::path& in, const engine::io::ModelTensors& tensors,
                      const CalibrationText& text, std::ostream& progress);

}  // namespace quire::cli
