#pragma once

// quire-cli quantize --format w4a16 / w4a16-asym / w8a16: an FP16/BF16 model
// to compressed-tensors' pack-quantized integers in llm-compressor's layout,
// by round to nearest or, given a calibration text, by GPTQ
// (formats/gptq_quantizer.h).

#include <cstdint>
#include <filesystem>
#include <iosfwd>
#include <string>

#include "quantize_calibration.h"
#include "quantize_support.h"
#include "quire/engine/io/model_tensors.h"
#include "quire/engine/io/safetensors_writer.h"
#include "quire/engine/model/model_config.h"

namespace quire::cli {

struct IntegerSettings {
  int bits = 4;  // 4 or 8
  bool symmetric = true;
  int group_size = 128;  // 0: one scale per output row
  bool actorder = false;
  CalibrationText calibration;  // no path: round to nearest
};

struct IntegerWritten {
  QuantizeSummary summary;
  std::string quantization_config;  // JSON text
  std::int64_t calibration_tokens = 0;
};

// Quantizes every projection of every decoder layer into `writer`;
// everything else stays FP16 and the layers' other linear modules (routers,
// experts, fused projections) are listed in the config's "ignore", as is
// the head.
IntegerWritten add_integer_tensors(const std::filesystem::path& in,
                                   const engine::io::ModelTensors& tensors,
                                   const IntegerSettings& settings,
                                   engine::io::SafetensorsWriter& writer, std::ostream& progress);

}  // namespace quire::cli
