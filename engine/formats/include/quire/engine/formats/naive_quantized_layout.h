#pragma once

#include <optional>
#include <string_view>

#include "quire/engine/formats/gptq_layout.h"
#include "quire/engine/formats/gptq_repacked.h"
#include "quire/engine/formats/layer_tensors.h"

namespace quire::engine::formats {

// compressed-tensors' naive-quantized integer weights: "<key>.weight" in
// int8, one signed value per weight (compressors/naive_quantized), with
// W[n, k] = (q - z) * s for the scale and zero point of k's group, per output
// row (strategy "channel"), per group of inputs ("group") or one for the
// tensor ("tensor"). Activations stay in floating point (W8A16).
struct NaiveQuantizedTensors {
  TensorView weight;        // I8 [N, K]
  TensorView weight_scale;  // F16, BF16 or F32: [N, 1] or [N]; [N, G]; [1] or []
  std::optional<TensorView> weight_zero_point;  // I8, the shape of weight_scale
  std::optional<TensorView> weight_g_idx;       // I32 [K]: group actorder
  std::optional<TensorView> bias;               // F16, BF16 or F32 [N]
};

// The weights' scheme from the config group that targets the layer.
struct NaiveQuantizedScheme {
  int bits = 8;  // 1 to 8: values in int8 either way
  bool symmetric = true;
  enum class Strategy : std::uint8_t { tensor, channel, group } strategy = Strategy::channel;
  int group_size = 0;  // strategy group
  bool group_actorder = false;
};

// Checks the tensors against each other, the scheme and `shape` (values
// within the scheme's bits, zero points exactly when asymmetric, K and N
// multiples of 8); the layout is 8-bit, one group for "tensor" and
// "channel". Throws ModelError naming the tensor and what was expected.
GptqLayout describe_naive_quantized(std::string_view key, const NaiveQuantizedTensors& tensors,
                                    const NaiveQuantizedScheme& scheme,
                                    const LinearShape& shape = {});

// GPTQ's 8-bit layout: each value offset by 128 into an unsigned byte,
// packed along K; zero points offset alike, or none when symmetric (each then
// 128); scales as [G, N], a tensor's one scale repeated for every column.
GptqRepacked repack_naive_quantized(const GptqLayout& layout, const NaiveQuantizedTensors& tensors);

}  // namespace quire::engine::formats
