#include "disk_cache_size.h"

#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <stdexcept>
#include <system_error>

namespace quire::cli {
namespace {

[[noreturn]] void refuse_size(std::string_view text, std::string_view problem) {
  throw std::invalid_argument("\"" + std::string(text) + "\" " + std::string(problem) + "; write " +
                              std::string(kByteSizeForms));
}

char lower_ascii(char c) {
  return static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
}

// 1024^n for the unit letter; 0 for a letter that is no unit.
double unit_bytes(char letter) {
  switch (lower_ascii(letter)) {
    case 'k':
      return 1024.0;
    case 'm':
      return 1024.0 * 1024.0;
    case 'g':
      return 1024.0 * 1024.0 * 1024.0;
    case 't':
      return 1024.0 * 1024.0 * 1024.0 * 1024.0;
    default:
      return 0;
  }
}

}  // namespace

std::uint64_t parse_byte_size(std::string_view text) {
  std::string_view rest = text;
  if (!rest.empty() && rest.front() == '-') refuse_size(text, "is negative");
  // The number: digits, and with a unit a fraction.
  std::size_t digits = 0;
  while (digits < rest.size() && std::isdigit(static_cast<unsigned char>(rest[digits])) != 0)
    ++digits;
  std::size_t number_end = digits;
  if (number_end < rest.size() && rest[number_end] == '.') {
    std::size_t fraction = number_end + 1;
    while (fraction < rest.size() && std::isdigit(static_cast<unsigned char>(rest[fraction])) != 0)
      ++fraction;
    if (fraction == number_end + 1) refuse_size(text, "is not a size");
    number_end = fraction;
  }
  if (digits == 0) refuse_size(text, "is not a size");
  const std::string number(rest.substr(0, number_end));
  std::string_view unit = rest.substr(number_end);

  double multiplier = 1;
  if (!unit.empty()) {
    if (unit.size() == 1 && lower_ascii(unit[0]) == 'b') {
      unit = {};
    } else {
      multiplier = unit_bytes(unit[0]);
      if (multiplier == 0) refuse_size(text, "is not a size");
      unit.remove_prefix(1);
      // K, KB, KiB (any case).
      const bool bytes = unit.size() == 1 && lower_ascii(unit[0]) == 'b';
      const bool binary =
          unit.size() == 2 && lower_ascii(unit[0]) == 'i' && lower_ascii(unit[1]) == 'b';
      if (!unit.empty() && !bytes && !binary) refuse_size(text, "is not a size");
    }
  }
  const bool fractional = number_end != digits;
  if (fractional && multiplier == 1) refuse_size(text, "is not a whole number of bytes");

  std::uint64_t bytes = 0;
  if (!fractional && multiplier == 1) {
    const auto [end, error] = std::from_chars(number.data(), number.data() + number.size(), bytes);
    if (error != std::errc() || end != number.data() + number.size())
      refuse_size(text, "is too large");
  } else {
    // Digits and at most one point: strtod reads them all, an overflow as infinity.
    const double value = std::strtod(number.c_str(), nullptr) * multiplier;
    // 2^64: no disk is larger.
    if (!(value < 18446744073709551616.0)) refuse_size(text, "is too large");
    bytes = static_cast<std::uint64_t>(std::floor(value));
  }
  if (bytes == 0) refuse_size(text, "is zero: the disk cache needs room for at least one page");
  return bytes;
}

}  // namespace quire::cli
