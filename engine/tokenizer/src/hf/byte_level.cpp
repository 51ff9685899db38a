#include "byte_level.h"

#include "utf8.h"

namespace quire::engine::detail {

ByteAlphabet::ByteAlphabet() {
  bytes_.fill(-1);
  auto shown_as_itself = [](int b) {
    return (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF);
  };
  int next = 256;
  for (int b = 0; b < 256; ++b) {
    const int c = shown_as_itself(b) ? b : next++;
    append_utf8(characters_[static_cast<std::size_t>(b)], static_cast<char32_t>(c));
    bytes_[static_cast<std::size_t>(c)] = static_cast<std::int16_t>(b);
  }
}

const ByteAlphabet& ByteAlphabet::get() {
  static const ByteAlphabet alphabet;
  return alphabet;
}

void ByteAlphabet::encode(std::string_view text, std::string& out) const {
  for (const char c : text)
    out += characters_[static_cast<unsigned char>(c)];
}

std::optional<std::uint8_t> ByteAlphabet::byte_of(char32_t c) const {
  if (c >= bytes_.size() || bytes_[c] < 0) return std::nullopt;
  return static_cast<std::uint8_t>(bytes_[c]);
}

}  // namespace quire::engine::detail
