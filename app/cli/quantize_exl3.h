#pragma once

// quire-cli quantize --format exl3: an FP16/BF16 model to EXL3 with Quire's
// own quantizer (formats/exl3_quantizer.h), optionally calibrated on a text
// that the FP16 model computes through Quire's engine.

#include <cstdint>
#include <filesystem>
#include <iosfwd>
#include <string>

#include "quantize_support.h"
#include "quire/engine/formats/exl3_quantizer.h"
#include "quire/engine/io/model_tensors.h"
#include "quire/engine/io/safetensors_writer.h"
#include "quire/engine/model/model_config.h"
#include "quire/engine/modelgen/exl3_config.h"

namespace quire::cli {

struct Exl3Settings {
  double bits = 4.0;  // average over the decoder layers' projections, 1 to 8
  int head_bits = 6;  // an untied head: 1 to 8, or 16 for FP16
  kernels::Exl3Codebook codebook = kernels::Exl3Codebook::mul1;
  std::uint64_t seed = 1;
  engine::formats::Exl3OutScales out_scales = engine::formats::Exl3OutScales::automatic;
  std::string calibration;              // a text file; empty: no calibration
  std::int64_t calibration_tokens = 0;  // 0: all of it
  int threads = 0;
};

struct Exl3Written {
  QuantizeSummary summary;
  engine::modelgen::Exl3ConfigSettings config;  // for config.json and quantization_config.json
  std::int64_t calibration_tokens = 0;
};

// Quantizes every projection of every decoder layer (widths from
// plan_exl3_bits) and an untied head into `writer`, everything else in FP16,
// one line of progress per tensor on `progress`.
Exl3Written add_exl3_tensors(const std::filesystem::path& in,
                             const engine::io::ModelTensors& tensors,
                             const engine::ModelConfig& config, const Exl3Settings& settings,
                             engine::io::SafetensorsWriter& writer, std::ostream& progress);

}  // namespace quire::cli
