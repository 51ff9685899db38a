#pragma once

// Private: the text helpers shared by the spec's parsers and its validation.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace quire::engine::modelgen::detail {

// Throws std::invalid_argument("<option>: <what>").
[[noreturn]] void reject(std::string_view option, const std::string& what);

// Rejects a value outside low..high, naming both ends.
void check_range(std::string_view option, std::int64_t value, std::int64_t low, std::int64_t high);

// The shortest text that reads back as `value`, always with a decimal point
// ("4.0", "2.5"); independent of the locale.
std::string decimal(double value);

// A finite number, the whole text; nullopt otherwise.
std::optional<double> parse_number(std::string_view text);

}  // namespace quire::engine::modelgen::detail
