#pragma once

// Checks of a linear layer's descriptor, shared by every backend so that all
// of them refuse the same weights with the same messages. Each throws
// std::invalid_argument naming what is wrong.

#include <cstdint>

#include "quire/kernels/linear_weight.h"

namespace quire::kernels {

// Everything a descriptor holds in host memory: the shape, the dtypes, the
// tensors present, EXL2's groups and columns, GPTQ's groups. Not GPTQ's g_idx,
// which lives in the memory of the layer's device.
void check_linear_descriptor(const LinearWeight& weight);

// GPTQ's g_idx, `count` entries in host memory, against its `groups`.
void check_gptq_group_indices(const std::int32_t* g_idx, std::int64_t count, int groups);

// The row length of an EXL2 q_weight: q_columns, or N when that is 0.
std::int64_t exl2_q_columns(const LinearWeight& weight, const Exl2Weight& exl2);

}  // namespace quire::kernels
