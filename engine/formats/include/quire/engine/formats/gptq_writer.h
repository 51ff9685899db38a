#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "quire/engine/formats/gptq_layout.h"
#include "quire/engine/formats/layer_tensors.h"

namespace quire::engine::formats {

// Writing 4- and 8-bit GPTQ layers for Quire's own test models: asymmetric
// round-to-nearest per group and output column (no Hessian, as GPTQ's
// "RTN" baseline).

struct GptqQuantizeOptions {
  int group_size = 128;  // a power of two
  // Act-order: inputs are assigned to groups in an order shuffled by this seed
  // (the same on every platform); without it, input k is in group k / group_size.
  std::optional<std::uint64_t> act_order_seed;
  bool exact_zeros = false;  // gptq_v2; otherwise v1, which stores zero - 1
  bool write_g_idx = true;   // as GPTQ tools do, even without act-order
  int bits = 4;              // 4 or 8
};

struct GptqEncoding {
  std::int64_t in_features = 0;
  std::int64_t out_features = 0;
  int groups = 0;
  int group_size = 0;
  bool exact_zeros = false;
  int bits = 4;
  std::vector<std::uint32_t> qweight;
  std::vector<std::uint32_t> qzeros;
  std::vector<std::uint16_t> scales;  // FP16
  std::vector<std::int32_t> g_idx;    // empty when not written

  GptqTensors views() const;
  // "qweight", "qzeros", "scales" and "g_idx" (when written).
  std::vector<NamedTensor> tensors() const;
};

// Quantizes W [N, K] (Hugging Face layout; K and N multiples of 8). Per group
// and output column, the range [min(w, 0), max(w, 0)] is split into
// 2^bits - 1 steps of the FP16 scale s and the zero point z in 0..2^bits - 1
// (from 1 for v1, whose stored z - 1 must not underflow) is chosen so that no
// weight clips: every weight is within s / 2 of its value. Throws std::invalid_argument for bad
// arguments.
GptqEncoding quantize_gptq(std::span<const float> weight, std::int64_t out_features,
                           std::int64_t in_features, const GptqQuantizeOptions& options);

}  // namespace quire::engine::formats
