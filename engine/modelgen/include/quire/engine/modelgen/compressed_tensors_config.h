#pragma once

// config.json's quantization_config for compressed-tensors' integer weight
// formats as llm-compressor writes it (its W4A16, W4A16_ASYM and W8A16
// presets, pack-quantized; int8 naive-quantized): make-model and
// quire-cli quantize share it.

#include <string>
#include <vector>

namespace quire::engine::modelgen {

struct IntegerSchemeSettings {
  int bits = 4;
  bool symmetric = true;
  int group_size = 128;   // 0: one scale per output row (strategy "channel")
  bool actorder = false;  // actorder "group": the weights carry weight_g_idx
  bool naive = false;     // naive-quantized (int8 as is) rather than pack-quantized
  std::vector<std::string> ignore = {"lm_head"};  // modules left in 16 bits
};

// The quantization_config object, as JSON text.
std::string compressed_tensors_quantization_config(const IntegerSchemeSettings& settings);

}  // namespace quire::engine::modelgen
