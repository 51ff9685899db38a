#pragma once

// Pieces shared by the EXL2 and GPTQ writers.

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <span>
#include <vector>

namespace quire::engine::formats::detail {

// Identity without a seed; otherwise a Fisher-Yates shuffle driven by
// std::mt19937_64, whose output the standard fixes, so a seed gives the same
// permutation with every compiler and standard library (std::shuffle does not).
std::vector<std::int32_t> seeded_permutation(std::int64_t count, std::optional<std::uint64_t> seed);

// The smallest FP16 value >= `value` (0 <= value <= 65504), as bits: a scale
// rounded up never clips the weights it was computed for.
std::uint16_t half_at_least(float value);

// Throws std::invalid_argument unless `weight` holds out * in finite values.
void check_matrix(std::span<const float> weight, std::int64_t out_features,
                  std::int64_t in_features);

template <typename T>
std::vector<std::byte> to_bytes(const std::vector<T>& values) {
  std::vector<std::byte> bytes(values.size() * sizeof(T));
  if (!bytes.empty()) std::memcpy(bytes.data(), values.data(), bytes.size());
  return bytes;
}

template <typename T>
std::span<const std::byte> byte_view(const std::vector<T>& values) {
  return std::as_bytes(std::span<const T>(values));
}

}  // namespace quire::engine::formats::detail
