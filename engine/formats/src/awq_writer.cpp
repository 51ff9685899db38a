#include "quire/engine/formats/awq_writer.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

#include "quire/engine/formats/awq_layout.h"
#include "quire/kernels/cpu/half.h"
#include "writer_support.h"

namespace quire::engine::formats {

using kernels::DType;

std::vector<NamedTensor> quantize_awq(std::span<const float> weight, std::int64_t out_features,
                                      std::int64_t in_features, const AwqQuantizeOptions& options) {
  detail::check_matrix(weight, out_features, in_features);
  const std::int64_t group_size = options.group_size == -1 ? in_features : options.group_size;
  if (in_features % 8 != 0 || out_features % 8 != 0 || group_size <= 0 ||
      in_features % group_size != 0) {
    throw std::invalid_argument("AWQ layer of " + std::to_string(out_features) + " x " +
                                std::to_string(in_features) + " in groups of " +
                                std::to_string(options.group_size));
  }
  const std::int64_t groups = in_features / group_size;
  const std::int64_t words = out_features / 8;
  // The slot of column c in its word: the i with kAwqOrder[i] == c.
  int slot_of[8] = {};
  for (int i = 0; i < 8; ++i)
    slot_of[kAwqOrder[i]] = i;
  std::vector<std::uint32_t> qweight(std::size_t(in_features * words), 0u);
  std::vector<std::uint32_t> qzeros(std::size_t(groups * words), 0u);
  std::vector<std::uint16_t> scales(std::size_t(groups * out_features));
  for (std::int64_t g = 0; g < groups; ++g) {
    for (std::int64_t n = 0; n < out_features; ++n) {
      const float* row = weight.data() + n * in_features + g * group_size;
      const auto [low, high] = std::minmax_element(row, row + group_size);
      const float step = std::max(*high - *low, 1e-5f) / 15.0f;
      const float zero = std::clamp(-std::nearbyint(*low / step), 0.0f, 15.0f);
      const std::uint16_t stored = kernels::float_to_half(step);
      const float step16 = kernels::half_to_float(stored);
      scales[std::size_t(g * out_features + n)] = stored;
      const int shift = 4 * slot_of[n % 8];
      qzeros[std::size_t(g * words + n / 8)] |= std::uint32_t(zero) << shift;
      for (std::int64_t i = 0; i < group_size; ++i) {
        const float q = std::clamp(std::nearbyint((row[i] + zero * step) / step16), 0.0f, 15.0f);
        qweight[std::size_t((g * group_size + i) * words + n / 8)] |= std::uint32_t(q) << shift;
      }
    }
  }
  return {{"qweight", DType::I32, {in_features, words}, detail::to_bytes(qweight)},
          {"qzeros", DType::I32, {groups, words}, detail::to_bytes(qzeros)},
          {"scales", DType::F16, {groups, out_features}, detail::to_bytes(scales)}};
}

}  // namespace quire::engine::formats
