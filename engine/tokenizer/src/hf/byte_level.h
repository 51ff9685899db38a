#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace quire::engine::detail {

// GPT-2's byte-level alphabet: every byte is shown as a printable character
// (printable ASCII and Latin-1 as themselves, the rest from U+0100 on), so a
// vocabulary of strings can hold arbitrary bytes ("Ġ" is the space).
class ByteAlphabet {
 public:
  static const ByteAlphabet& get();
  // Appends the characters for the bytes of `text`.
  void encode(std::string_view text, std::string& out) const;
  // The byte a character stands for.
  std::optional<std::uint8_t> byte_of(char32_t c) const;

 private:
  ByteAlphabet();
  std::array<std::string, 256> characters_;
  std::array<std::int16_t, 324> bytes_{};  // by code point; -1 where none
};

}  // namespace quire::engine::detail
