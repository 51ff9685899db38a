#pragma once

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "quire/engine/formats/layer_tensors.h"
#include "quire/kernels/linear_weight.h"

namespace quire::engine::formats {

// The tensors of one GPTQ layer "<key>.qweight" etc. (K inputs, N outputs, G
// groups, P = 32 / bits values per word).
struct GptqTensors {
  TensorView qweight;               // I32 [K / P, N]: values along K, low bits first
  TensorView qzeros;                // I32 [G, N / P]: zero points along N
  TensorView scales;                // F16 [G, N]
  std::optional<TensorView> g_idx;  // I32 [K]: group of each input
  std::optional<TensorView> bias;   // F16, BF16 or F32 [N]
};

// From the model's quantization_config.
struct GptqOptions {
  // "bits": the width when the layer's shape is not known; with it, the width
  // follows from qweight's rows, as GPTQModel's per-module overrides may
  // differ from the file's default. Quire runs 4 and 8.
  int bits = 4;
  bool exact_zeros = false;  // "checkpoint_format" == "gptq_v2": zeros stored as they are
};

// A group-quantized weight as a device holds it, in GPTQ's layout: GPTQ's
// own, and the formats repacked into it at load (AWQ, compressed-tensors'
// pack-quantized and naive int8; see GptqRepacked).
struct GptqLayout {
  std::int64_t in_features = 0;   // K
  std::int64_t out_features = 0;  // N
  int groups = 0;                 // G
  // Inputs per group: GPTQ's smallest power of two with group_size * G >= K;
  // the other formats' group size, or K for one group per output row.
  int group_size = 0;
  // Group of each input when it is not k / group_size (act-order); empty
  // otherwise. Like exllamav2, an all-zero g_idx counts as absent.
  std::vector<std::int32_t> g_idx;
  bool exact_zeros = false;
  int bits = 4;  // 4 or 8
  // No zero points: each is 2^(bits - 1) (symmetric checkpoints).
  bool symmetric = false;
  kernels::DType scale_dtype = kernels::DType::F16;  // F16, BF16 or F32

  // What a device holds, byte for byte.
  std::int64_t qweight_bytes() const { return in_features * bits / 32 * out_features * 4; }
  std::int64_t qzeros_bytes() const {
    return symmetric ? 0 : std::int64_t{groups} * out_features * bits / 32 * 4;
  }
  std::int64_t scales_bytes() const {
    return std::int64_t{groups} * out_features *
           static_cast<std::int64_t>(kernels::dtype_size(scale_dtype));
  }
  std::int64_t g_idx_bytes() const { return g_idx.empty() ? 0 : 4 * in_features; }
  std::int64_t device_bytes() const {
    return qweight_bytes() + qzeros_bytes() + scales_bytes() + g_idx_bytes();
  }
  // Including the zero points, scales and group indices.
  double bits_per_weight() const {
    return double(device_bytes()) * 8.0 / double(in_features * out_features);
  }
};

// Checks dtypes and ranks; K = qweight rows * P (and `shape`'s inputs when
// given, from which the width follows: 4 or 8 bits); N = qweight columns
// (and `shape`'s outputs), a multiple of 8; qzeros is [G, N / P] and scales
// [G, N] with 1 <= G <= K; g_idx has K entries, each a group in 0..G-1; the
// bias has N. Throws ModelError naming `key` and the inconsistency, or what
// Quire does not run (another bit width).
GptqLayout describe_gptq(std::string_view key, const GptqTensors& tensors,
                         const GptqOptions& options, const LinearShape& shape = {});

// A weight descriptor over host-resident tensors, for the CPU backend. It
// points into the tensors' bytes and into layout.g_idx, which must outlive it;
// throws std::invalid_argument when a tensor is not aligned for its element
// type (copy it first).
kernels::LinearWeight host_linear_weight(const GptqLayout& layout, const GptqTensors& tensors);

}  // namespace quire::engine::formats
