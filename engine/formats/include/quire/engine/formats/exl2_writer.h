#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "quire/engine/formats/exl2_layout.h"
#include "quire/engine/formats/layer_tensors.h"
#include "quire/kernels/linear_weight.h"

namespace quire::engine::formats {

// Writing EXL2 layers for Quire's own test models. The quantization is plain
// round-to-nearest with per-column scales that never clip (exllamav2's
// converter does better with calibration data; tests need the format, not the
// last bit of quality).

struct Exl2GroupSpec {
  int bits = 4;
  int rows = 32;
};

struct Exl2QuantizeOptions {
  // In exllamav2's order (widths never increase), rows * bits a multiple of
  // 32, rows adding up to K.
  std::vector<Exl2GroupSpec> groups;
  // Quantized row k holds input perm[k]: a shuffle seeded by this (the same on
  // every platform), or the identity without one.
  std::optional<std::uint64_t> permutation_seed;
};

// The tensors of one layer, ready for a safetensors file, and the layout they
// were written with.
struct Exl2Encoding {
  std::int64_t in_features = 0;
  std::int64_t out_features = 0;
  std::int64_t q_columns = 0;  // N rounded up to 32; padding columns are zero weights
  std::vector<std::uint32_t> q_weight;
  std::vector<std::int32_t> q_invperm;
  std::vector<std::uint32_t> q_scale;
  std::vector<std::uint16_t> q_scale_max;  // FP16
  std::vector<std::uint16_t> q_groups;     // I16 bit patterns
  std::vector<kernels::Exl2Group> groups;
  std::vector<std::int32_t> perm;

  // Views of the tensors (without a bias), as describe_exl2 takes them.
  Exl2Tensors views() const;
  // "q_weight", "q_invperm", "q_scale", "q_scale_max", "q_groups" with the
  // dtypes and shapes exllamav2's converter writes.
  std::vector<NamedTensor> tensors() const;
};

// Quantizes W [N, K] (Hugging Face layout, row-major). Per group and output
// column: s = qs^2 * q_scale_max / 256 with q_scale_max the group's largest
// needed scale rounded up to FP16 and qs in 1..16 the smallest that covers the
// column's largest magnitude, so every weight is within s / 2 of its value.
// Throws std::invalid_argument for a plan that breaks the rules above, a
// matrix of the wrong size, non-finite weights or scales beyond FP16.
Exl2Encoding quantize_exl2(std::span<const float> weight, std::int64_t out_features,
                           std::int64_t in_features, const Exl2QuantizeOptions& options);

// A plan of mixed widths averaging about `bits_per_weight` (2 to 8) over K
// inputs (a multiple of 32) in groups of `group_size` rows (a multiple of 32;
// the last group takes the remainder). Widths are the two legal ones around
// the target; a target that is itself a legal width still gets some groups one
// width above and below (4.0 gives 5-, 4- and 3-bit groups) where both exist,
// so test models exercise mixed layers. Ordered as exllamav2 orders them.
std::vector<Exl2GroupSpec> plan_exl2_groups(std::int64_t in_features, double bits_per_weight,
                                            int group_size = 32);

// Weighted mean width of a plan.
double plan_bits_per_weight(std::span<const Exl2GroupSpec> plan);

}  // namespace quire::engine::formats
