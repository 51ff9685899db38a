#pragma once

// Byte arithmetic for the planner. Inputs are at most kMaxPlanBytes (2^60), but
// sums over many modules and products with page counts can still pass int64's
// range; they saturate at INT64_MAX instead, which is larger than any usable
// memory and so reads as "does not fit".

#include <cstdint>
#include <limits>
#include <string>

namespace quire::engine::detail {

inline constexpr std::int64_t kSaturated = std::numeric_limits<std::int64_t>::max();

// Both arguments non-negative.
inline std::int64_t add_sat(std::int64_t a, std::int64_t b) {
  return a > kSaturated - b ? kSaturated : a + b;
}

inline std::int64_t mul_sat(std::int64_t a, std::int64_t b) {
  if (a == 0 || b == 0) return 0;
  return a > kSaturated / b ? kSaturated : a * b;
}

// floor(bytes * numerator / denominator) for 0 <= numerator <= denominator,
// without forming the full product.
inline std::int64_t scale_floor(std::int64_t bytes, std::int64_t numerator,
                                std::int64_t denominator) {
  const std::int64_t whole = bytes / denominator;
  const std::int64_t rest = bytes % denominator;
  return whole * numerator + rest * numerator / denominator;
}

inline std::int64_t mib_ceil(std::int64_t bytes) {
  constexpr std::int64_t kMiB = std::int64_t{1} << 20;
  return bytes / kMiB + (bytes % kMiB > 0 ? 1 : 0);
}

inline std::int64_t mib_floor(std::int64_t bytes) {
  return bytes / (std::int64_t{1} << 20);
}

// "256" for whole MiB, else one decimal ("95.4"): a reserve is quoted as given.
std::string mib_exact_or_decimal(std::int64_t bytes);

// "512 MiB", "4.51 GiB", "12 KiB", "-1.20 GiB": for summaries, two decimals at most.
std::string human_bytes(std::int64_t bytes);

}  // namespace quire::engine::detail
