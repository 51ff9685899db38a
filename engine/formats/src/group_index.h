#pragma once

// compressed-tensors' weight_g_idx (group activation order), shared by its
// pack-quantized and naive-quantized readers.

#include <cstdint>
#include <string_view>
#include <vector>

#include "quire/engine/formats/layer_tensors.h"
#include "tensor_checks.h"

namespace quire::engine::formats::detail {

// `view`: I32 [in], the group of each input. An entry of -1 anywhere means
// the index was never set, and compressed-tensors then groups the inputs in
// order (forward.py's is_column_order), so it reads as absent. Otherwise every
// entry must be a group in 0..groups-1, and every group must hold
// in / groups inputs: compressed-tensors sorts the inputs by group and cuts
// them into groups of equal size. Empty when the index is k / group_size.
std::vector<std::int32_t> read_even_group_index(const LayerChecks& checks, std::string_view name,
                                                const TensorView& view, std::int64_t in,
                                                int groups, int group_size);

}  // namespace quire::engine::formats::detail
