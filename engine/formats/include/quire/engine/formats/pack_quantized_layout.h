#pragma once

#include <optional>
#include <string_view>

#include "quire/engine/formats/gptq_layout.h"
#include "quire/engine/formats/gptq_repacked.h"
#include "quire/engine/formats/layer_tensors.h"

namespace quire::engine::formats {

// compressed-tensors' pack-quantized weights (llm-compressor's W4A16 and
// W8A16 schemes, vLLM's CompressedTensorsWNA16): "<key>.weight_packed" etc.
// for K inputs, N outputs, G groups and P = 32 / bits values per word. Signed
// b-bit values q are stored as q + 2^(b-1), packed low bits first along K
// (compressors/pack_quantized/helpers.py); zero points likewise, packed along
// N. W[n, k] = (q - z[n, g]) * s[n, g] with g = g_idx[k] or k / group_size,
// z = 0 for a symmetric scheme.
struct PackQuantizedTensors {
  TensorView weight_packed;                     // I32 [N, ceil(K / P)]
  TensorView weight_scale;                      // F16, BF16 or F32 [N, G]
  TensorView weight_shape;                      // I64 (or I32) [2]: N, K
  std::optional<TensorView> weight_zero_point;  // I32 [ceil(N / P), G], or I8 [N, G] unpacked
  std::optional<TensorView> weight_g_idx;       // I32 [K]: group actorder
  std::optional<TensorView> bias;               // F16, BF16 or F32 [N]
};

// The weights' scheme from the config group that targets the layer.
struct PackQuantizedScheme {
  int bits = 4;  // 4 or 8
  bool symmetric = true;
  // "group" (with group_size) or "channel" (one group of K inputs).
  bool per_channel = false;
  int group_size = 128;
  bool group_actorder = false;  // actorder "group": weight_g_idx is stored
};

// Checks every tensor against the others, the scheme and `shape`: weight_shape
// against the config's shape; weight_packed's width for `bits`; scales per
// group (a group size dividing K) or per channel; zero points exactly when
// asymmetric; g_idx of K groups in range, each group holding K / G inputs as
// compressed-tensors requires. K must be a multiple of 8, N of 8. Throws
// ModelError naming the tensor and what was expected.
GptqLayout describe_pack_quantized(std::string_view key, const PackQuantizedTensors& tensors,
                                   const PackQuantizedScheme& scheme,
                                   const LinearShape& shape = {});

// GPTQ's layout: qweight and qzeros are the packed words transposed (both
// formats pack values low bits first along the same dimension); exact zero
// points, symmetric weights without any; scales transposed to [G, N].
GptqRepacked repack_pack_quantized(const GptqLayout& layout, const PackQuantizedTensors& tensors);

}  // namespace quire::engine::formats
