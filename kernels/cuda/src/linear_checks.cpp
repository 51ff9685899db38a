#include "linear_checks.h"

#include <limits>
#include <stdexcept>
#include <string>

#include "quire/kernels/linear_checks.h"

namespace quire::kernels::cuda {

std::int64_t exl2_columns(const LinearWeight& weight, const Exl2Weight& exl2) {
  return exl2_q_columns(weight, exl2);
}

void check_linear_weight(const LinearWeight& weight) {
  check_linear_descriptor(weight);
  // The kernels index input rows, groups and word rows with 32-bit integers.
  constexpr std::int64_t kLargest = std::numeric_limits<std::int32_t>::max() - 32;
  if (weight.in_features > kLargest || weight.out_features > kLargest) {
    throw std::invalid_argument("linear weight: shape " + std::to_string(weight.out_features) +
                                " x " + std::to_string(weight.in_features) +
                                " is too large for the CUDA backend");
  }
}

void check_group_indices(const std::vector<std::int32_t>& g_idx, int groups) {
  check_gptq_group_indices(g_idx.data(), static_cast<std::int64_t>(g_idx.size()), groups);
}

}  // namespace quire::kernels::cuda
