#pragma once

// What an EXL3 model directory says of its quantization, as exllamav3's
// converter writes it: config.json's quantization_config
// (conversion/compile.py) and quantization_config.json beside it
// (conversion/quant_config.py). make-model and quire-cli quantize share it.

#include <optional>
#include <span>
#include <string>

#include "quire/engine/io/safetensors_writer.h"
#include "quire/kernels/linear_weight.h"

namespace quire::engine::modelgen {

struct Exl3ConfigSettings {
  double bits = 4.0;  // the average over the quantized decoder layers
  int head_bits = 6;  // 16: the head in FP16
  kernels::Exl3Codebook codebook = kernels::Exl3Codebook::mul1;
  // Rows of calibration text and tokens per row; none without calibration.
  struct Calibration {
    int rows = 0;
    int columns = 0;
  };
  std::optional<Calibration> calibration;
  std::string out_scales = "auto";  // or "always", "never"
};

// The quantization_config object, as JSON text.
std::string exl3_quantization_config(const Exl3ConfigSettings& settings);

// quantization_config.json: the same object plus "tensor_storage", each
// module's stored tensors (shape, bytes, torch dtype) and, for quantized
// ones, the format, bits and codebook multiplier; modules in the order their
// first tensor was written, each named by its tensors' names without their
// last part.
std::string exl3_quantization_config_file(const Exl3ConfigSettings& settings,
                                          std::span<const io::SafetensorsWriter::Listing> tensors);

}  // namespace quire::engine::modelgen
