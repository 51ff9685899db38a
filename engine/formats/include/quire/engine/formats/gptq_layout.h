#pragma once

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "quire/engine/formats/layer_tensors.h"
#include "quire/kernels/linear_weight.h"

namespace quire::engine::formats {

// The tensors of one GPTQ layer "<key>.qweight" etc. (K inputs, N outputs, G groups).
struct GptqTensors {
  TensorView qweight;               // I32 [K / 8, N]: 4-bit values along K, low nibble first
  TensorView qzeros;                // I32 [G, N / 8]: 4-bit zero points along N
  TensorView scales;                // F16 [G, N]
  std::optional<TensorView> g_idx;  // I32 [K]: group of each input
  std::optional<TensorView> bias;   // F16, BF16 or F32 [N]
};

// From the model's quantization_config.
struct GptqOptions {
  int bits = 4;              // "bits"; Quire runs 4-bit GPTQ only
  bool exact_zeros = false;  // "checkpoint_format" == "gptq_v2": zeros stored as they are
};

struct GptqLayout {
  std::int64_t in_features = 0;   // K
  std::int64_t out_features = 0;  // N
  int groups = 0;                 // G
  int group_size = 0;             // smallest power of two with group_size * G >= K
  // Group of each input when it is not k / group_size (act-order); empty
  // otherwise. Like exllamav2, an all-zero g_idx counts as absent.
  std::vector<std::int32_t> g_idx;
  bool exact_zeros = false;
};

// Checks dtypes and ranks; K = 8 * qweight rows (and `shape`'s inputs when
// given); N = qweight columns (and `shape`'s outputs), a multiple of 8; qzeros
// is [G, N / 8] and scales [G, N] with 1 <= G <= K; g_idx has K entries, each a
// group in 0..G-1; the bias has N. Throws ModelError naming `key` and the
// inconsistency, or what Quire does not run (another bit width).
GptqLayout describe_gptq(std::string_view key, const GptqTensors& tensors,
                         const GptqOptions& options, const LinearShape& shape = {});

// A weight descriptor over host-resident tensors, for the CPU backend. It
// points into the tensors' bytes and into layout.g_idx, which must outlive it;
// throws std::invalid_argument when a tensor is not aligned for its element
// type (copy it first).
kernels::LinearWeight host_linear_weight(const GptqLayout& layout, const GptqTensors& tensors);

}  // namespace quire::engine::formats
