#pragma once

#include <cstdint>
#include <vector>

#include "quire/kernels/linear_weight.h"

// The CUDA backend's use of the shared descriptor checks
// (quire/kernels/linear_checks.h), which refuse the same weights as the CPU
// backend with the same messages, plus the limits of its own kernels.

namespace quire::kernels::cuda {

// Everything that lives in host memory: shape, dtypes, pointers present,
// EXL2's groups and columns, GPTQ's groups. Also refuses sizes past the
// kernels' 32-bit row indices.
void check_linear_weight(const LinearWeight& weight);

// GPTQ's g_idx, which lives in device memory: the caller copies it here.
void check_group_indices(const std::vector<std::int32_t>& g_idx, int groups);

// The row length of an EXL2 q_weight: q_columns, or N when that is 0.
std::int64_t exl2_columns(const LinearWeight& weight, const Exl2Weight& exl2);

}  // namespace quire::kernels::cuda
