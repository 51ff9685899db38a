#include "byte_math.h"

#include <cmath>
#include <cstdio>

namespace quire::engine::detail {

std::string mib_exact_or_decimal(std::int64_t bytes) {
  constexpr std::int64_t kMiB = std::int64_t{1} << 20;
  char text[48];
  if (bytes % kMiB == 0) {
    std::snprintf(text, sizeof text, "%lld", static_cast<long long>(bytes / kMiB));
  } else {
    std::snprintf(text, sizeof text, "%.1f", static_cast<double>(bytes) / kMiB);
  }
  return text;
}

std::string human_bytes(std::int64_t bytes) {
  const double value = static_cast<double>(bytes);
  const double magnitude = std::fabs(value);
  char text[48];
  if (magnitude >= static_cast<double>(std::int64_t{1} << 30)) {
    std::snprintf(text, sizeof text, "%.2f GiB", value / static_cast<double>(1 << 30));
  } else if (magnitude >= static_cast<double>(1 << 20)) {
    std::snprintf(text, sizeof text, "%.0f MiB", value / static_cast<double>(1 << 20));
  } else if (magnitude >= 1024.0) {
    std::snprintf(text, sizeof text, "%.0f KiB", value / 1024.0);
  } else {
    std::snprintf(text, sizeof text, "%lld B", static_cast<long long>(bytes));
  }
  return text;
}

}  // namespace quire::engine::detail
