#include "writer_support.h"

#include <cmath>
#include <numeric>
#include <random>
#include <stdexcept>
#include <string>

#include "quire/kernels/cpu/half.h"

namespace quire::engine::formats::detail {

std::vector<std::int32_t> seeded_permutation(std::int64_t count,
                                             std::optional<std::uint64_t> seed) {
  std::vector<std::int32_t> perm(static_cast<std::size_t>(count));
  std::iota(perm.begin(), perm.end(), 0);
  if (!seed) return perm;
  std::mt19937_64 rng(*seed);
  for (std::size_t i = perm.size(); i > 1; --i) {
    // The modulo bias (below 2^-40 for any layer) does not matter here.
    std::swap(perm[i - 1], perm[static_cast<std::size_t>(rng() % i)]);
  }
  return perm;
}

std::uint16_t half_at_least(float value) {
  if (!(value >= 0.0f) || value > 65504.0f) {
    throw std::invalid_argument("scale " + std::to_string(value) + " does not fit FP16");
  }
  std::uint16_t bits = kernels::float_to_half(value);
  if (kernels::half_to_float(bits) < value) ++bits;  // positive: the next pattern is larger
  return bits;
}

void check_matrix(std::span<const float> weight, std::int64_t out_features,
                  std::int64_t in_features) {
  if (out_features <= 0 || in_features <= 0 ||
      weight.size() != static_cast<std::size_t>(out_features * in_features)) {
    throw std::invalid_argument("weight of " + std::to_string(weight.size()) + " values for " +
                                std::to_string(out_features) + " x " + std::to_string(in_features));
  }
  for (const float value : weight) {
    if (!std::isfinite(value)) throw std::invalid_argument("weight holds a non-finite value");
  }
}

}  // namespace quire::engine::formats::detail
