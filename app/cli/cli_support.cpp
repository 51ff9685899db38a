#include "cli_support.h"

#include <charconv>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <limits>

namespace quire::cli {

std::vector<std::int32_t> parse_token_list(std::string_view text) {
  std::vector<std::int32_t> tokens;
  std::size_t position = 0;
  while (position < text.size()) {
    const std::size_t end = text.find_first_of(", ", position);
    const std::string_view item = text.substr(
        position, end == std::string_view::npos ? std::string_view::npos : end - position);
    position = end == std::string_view::npos ? text.size() : end + 1;
    if (item.empty()) continue;
    std::int64_t value = 0;
    const auto [stop, error] = std::from_chars(item.data(), item.data() + item.size(), value);
    if (error != std::errc() || stop != item.data() + item.size() || value < 0 ||
        value > std::numeric_limits<std::int32_t>::max()) {
      throw UsageError("\"" + std::string(item) + "\" is not a token id (a non-negative integer)");
    }
    tokens.push_back(static_cast<std::int32_t>(value));
  }
  if (tokens.empty()) throw UsageError("no token ids given; write them like 1,2,3");
  return tokens;
}

std::string human_bytes(std::int64_t bytes) {
  static constexpr const char* kUnits[] = {"KiB", "MiB", "GiB", "TiB"};
  if (bytes < 1024) return std::to_string(bytes) + " B";
  double value = static_cast<double>(bytes);
  int unit = -1;
  while (value >= 1024.0 && unit < 3) {
    value /= 1024.0;
    ++unit;
  }
  char text[32];
  std::snprintf(text, sizeof(text), "%.1f %s", value, kUnits[unit]);
  return text;
}

std::string read_text_file(const std::string& path, std::string_view option) {
  std::ifstream file(path, std::ios::binary);
  if (!file) throw UsageError(std::string(option) + " " + path + ": cannot be read");
  return {std::istreambuf_iterator<char>(file), std::istreambuf_iterator<char>()};
}

}  // namespace quire::cli
