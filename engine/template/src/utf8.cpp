#include "utf8.h"

namespace quire::engine::jinja::utf8 {

std::size_t sequence_length(std::string_view text, std::size_t pos) {
  const auto lead = static_cast<unsigned char>(text[pos]);
  std::size_t length = 1;
  if (lead >= 0xF0 && lead < 0xF8)
    length = 4;
  else if (lead >= 0xE0)
    length = lead < 0xF0 ? 3 : 1;
  else if (lead >= 0xC0)
    length = 2;
  if (pos + length > text.size()) return 1;
  for (std::size_t i = 1; i < length; ++i) {
    if ((static_cast<unsigned char>(text[pos + i]) & 0xC0) != 0x80) return 1;
  }
  return length;
}

char32_t decode(std::string_view text, std::size_t pos) {
  const std::size_t length = sequence_length(text, pos);
  const auto lead = static_cast<unsigned char>(text[pos]);
  if (length == 1) return lead;
  char32_t value = lead & (length == 2 ? 0x1F : length == 3 ? 0x0F : 0x07);
  for (std::size_t i = 1; i < length; ++i)
    value = (value << 6) | (static_cast<unsigned char>(text[pos + i]) & 0x3F);
  return value;
}

void encode(char32_t c, std::string& out) {
  if (c < 0x80) {
    out.push_back(static_cast<char>(c));
  } else if (c < 0x800) {
    out.push_back(static_cast<char>(0xC0 | (c >> 6)));
    out.push_back(static_cast<char>(0x80 | (c & 0x3F)));
  } else if (c < 0x10000) {
    out.push_back(static_cast<char>(0xE0 | (c >> 12)));
    out.push_back(static_cast<char>(0x80 | ((c >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (c & 0x3F)));
  } else {
    out.push_back(static_cast<char>(0xF0 | (c >> 18)));
    out.push_back(static_cast<char>(0x80 | ((c >> 12) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | ((c >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (c & 0x3F)));
  }
}

bool is_ascii(std::string_view text) {
  for (const char c : text) {
    if (static_cast<unsigned char>(c) >= 0x80) return false;
  }
  return true;
}

std::size_t count(std::string_view text) {
  if (is_ascii(text)) return text.size();
  std::size_t n = 0;
  for (std::size_t pos = 0; pos < text.size(); pos += sequence_length(text, pos))
    ++n;
  return n;
}

std::vector<std::size_t> offsets(std::string_view text) {
  std::vector<std::size_t> result;
  result.reserve(text.size() + 1);
  for (std::size_t pos = 0; pos < text.size(); pos += sequence_length(text, pos))
    result.push_back(pos);
  result.push_back(text.size());
  return result;
}

}  // namespace quire::engine::jinja::utf8
