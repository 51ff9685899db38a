#pragma once

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "quire/engine/formats/layer_tensors.h"
#include "quire/kernels/linear_weight.h"

namespace quire::engine::formats {

// The tensors of one EXL2 layer "<key>.q_weight" etc. (K inputs, N outputs,
// G groups; columns C = N rounded up to a multiple of 32 by the converter).
struct Exl2Tensors {
  TensorView q_weight;             // I32 [sum(rows * bits / 32), C]
  TensorView q_invperm;            // I32 or I16 [K]: quantized position of each input
  TensorView q_scale;              // I32 [G, C / 8]: 4-bit column scales minus one
  TensorView q_scale_max;          // F16 [G]
  TensorView q_groups;             // I16 [2G]: (bits, first q_weight row) per group
  std::optional<TensorView> bias;  // F16, BF16 or F32 [N]
};

// What the tensors say about the layer, checked for consistency.
struct Exl2Layout {
  std::int64_t in_features = 0;   // K
  std::int64_t out_features = 0;  // N
  std::int64_t q_columns = 0;     // C
  // Rows of each group: for all but the last, its q_weight rows * 32 / bits;
  // the last takes the remaining inputs, as exllamav2 does.
  std::vector<kernels::Exl2Group> groups;
  std::vector<std::int32_t> perm;  // argsort(q_invperm): input of quantized row k

  // Bits of q_weight per weight (scales and permutation not counted).
  double bits_per_weight() const;
};

// Checks the tensors against each other and against what is known of the
// layer's shape: dtypes and ranks; G from q_groups matches q_scale and
// q_scale_max; C is a multiple of 32 and N rounded up to one (N comes from
// `shape`, else the bias, else C); every width is 2, 3, 4, 5, 6 or 8 bits and
// the widths do not increase (exllamav2's order); the groups start at q_weight
// row 0, each spans whole words, and together they cover exactly the K inputs
// and every q_weight row; q_invperm is a permutation of 0..K-1; q_scale_max is
// finite. Throws ModelError naming `key` and the inconsistency.
Exl2Layout describe_exl2(std::string_view key, const Exl2Tensors& tensors,
                         const LinearShape& shape = {});

// A weight descriptor over host-resident tensors, for the CPU backend. It
// points into the tensors' bytes and into layout.perm, which must outlive it;
// throws std::invalid_argument when a tensor is not aligned for its element
// type (copy it first).
kernels::LinearWeight host_linear_weight(const Exl2Layout& layout, const Exl2Tensors& tensors);

}  // namespace quire::engine::formats
