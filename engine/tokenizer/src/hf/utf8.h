#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace quire::engine::detail {

// Valid UTF-8 with every ill-formed sequence replaced by U+FFFD, one per
// maximal ill-formed subpart (the rule of the WHATWG decoder and of Rust's
// from_utf8_lossy, which Hugging Face's decoders use).
std::string to_valid_utf8(std::string_view bytes);
bool is_valid_utf8(std::string_view bytes);

// The code point at `position` of valid UTF-8 and its length in bytes.
struct CodePoint {
  char32_t value = 0;
  std::size_t length = 0;
};
CodePoint code_point_at(std::string_view text, std::size_t position);

void append_utf8(std::string& out, char32_t code_point);

// The whitespace that JavaScript's trim() removes, which the reference
// implementation uses around added tokens with lstrip/rstrip and in Strip.
bool is_trim_space(char32_t c);
std::string_view trim_start(std::string_view text);
std::string_view trim_end(std::string_view text);

}  // namespace quire::engine::detail
