#pragma once

// UTF-8 helpers: Python strings count and slice code points, not bytes.
// Malformed bytes count as one code point each, so nothing is ever dropped.

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace quire::engine::jinja::utf8 {

// Length in bytes of the sequence starting at `text[pos]`.
std::size_t sequence_length(std::string_view text, std::size_t pos);
// The code point at `text[pos]` (malformed bytes decode as themselves).
char32_t decode(std::string_view text, std::size_t pos);
void encode(char32_t code_point, std::string& out);
bool is_ascii(std::string_view text);
std::size_t count(std::string_view text);
// Byte offset of every code point, followed by text.size().
std::vector<std::size_t> offsets(std::string_view text);

}  // namespace quire::engine::jinja::utf8
