#pragma once

#include <optional>
#include <string_view>

#include "quire/engine/formats/gptq_layout.h"
#include "quire/engine/formats/gptq_repacked.h"
#include "quire/engine/formats/layer_tensors.h"

namespace quire::engine::formats {

// AutoAWQ's GEMM layout ("version": "gemm"), 4 bits: "<key>.qweight" etc.
// (K inputs, N outputs, G groups of K / G inputs in order). Both packed
// tensors run along N, eight values to a word in the interleaved order of
// awq/utils/packing_utils.py: slot i (bits 4i) of a word holds column
// kAwqOrder[i] of its eight. Zero points are stored exactly.
struct AwqTensors {
  TensorView qweight;              // I32 [K, N / 8]
  TensorView qzeros;               // I32 [G, N / 8]
  TensorView scales;               // F16 [G, N]
  std::optional<TensorView> bias;  // F16, BF16 or F32 [N]
};

inline constexpr int kAwqOrder[8] = {0, 2, 4, 6, 1, 3, 5, 7};

// From the model's quantization_config.
struct AwqOptions {
  int bits = 4;        // "bits"; AutoAWQ's GEMM layout is 4-bit only
  int group_size = 0;  // "group_size"; 0 or -1: one group (K inputs), or as the tensors say
};

// Checks dtypes, ranks and shapes against each other, the config's group
// size and `shape` (K a multiple of 8, G dividing K); a layout of exact zero
// points (symmetric false) and FP16 scales. Throws ModelError naming `key`.
GptqLayout describe_awq(std::string_view key, const AwqTensors& tensors, const AwqOptions& options,
                        const LinearShape& shape = {});

// The tensors in GPTQ's layout: values moved to run along K in natural
// order, zero points in natural order, the scales as they are.
GptqRepacked repack_awq(const GptqLayout& layout, const AwqTensors& tensors);

}  // namespace quire::engine::formats
