#include "quire/kernels/memory_size.h"

#include <charconv>
#include <stdexcept>
#include <utility>

namespace quire::kernels {

std::int64_t parse_memory_size(std::string_view text) {
  std::int64_t number = 0;
  const char* end = text.data() + text.size();
  const auto [stop, error] = std::from_chars(text.data(), end, number);
  if (error != std::errc() || number <= 0) {
    throw std::invalid_argument("\"" + std::string(text) + "\" is not a memory size like 512MiB");
  }
  const std::string_view unit(stop, static_cast<std::size_t>(end - stop));
  std::int64_t factor = 0;
  if (unit.empty() || unit == "B") factor = 1;
  if (unit == "K" || unit == "KiB") factor = std::int64_t{1} << 10;
  if (unit == "M" || unit == "MiB") factor = std::int64_t{1} << 20;
  if (unit == "G" || unit == "GiB") factor = std::int64_t{1} << 30;
  if (factor == 0) {
    throw std::invalid_argument("unknown size unit \"" + std::string(unit) + "\" in \"" +
                                std::string(text) + "\"; use B, KiB, MiB or GiB");
  }
  if (number > (std::int64_t{1} << 50) / factor) {
    throw std::invalid_argument("memory size \"" + std::string(text) + "\" is too large");
  }
  return number * factor;
}

std::string format_memory_size(std::int64_t bytes) {
  constexpr std::pair<std::int64_t, const char*> kUnits[] = {{std::int64_t{1} << 30, "GiB"},
                                                             {std::int64_t{1} << 20, "MiB"},
                                                             {std::int64_t{1} << 10, "KiB"}};
  for (const auto& [factor, unit] : kUnits) {
    if (bytes >= factor && bytes % factor == 0) return std::to_string(bytes / factor) + unit;
  }
  return std::to_string(bytes) + "B";
}

}  // namespace quire::kernels
