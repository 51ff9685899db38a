#include "strict_base64.h"

#include <array>

namespace quire::server {
namespace {

constexpr std::uint8_t kNotBase64 = 0xFF;

constexpr std::array<std::uint8_t, 256> base64_values() {
  std::array<std::uint8_t, 256> values{};
  values.fill(kNotBase64);
  constexpr std::string_view kAlphabet =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  for (std::size_t i = 0; i < kAlphabet.size(); ++i) {
    values[static_cast<unsigned char>(kAlphabet[i])] = static_cast<std::uint8_t>(i);
  }
  return values;
}

constexpr std::array<std::uint8_t, 256> kBase64Values = base64_values();

// A byte for a message: printable ASCII quoted, anything else as hex.
std::string describe_byte(unsigned char byte) {
  if (byte >= 0x21 && byte < 0x7F) return std::string("'") + static_cast<char>(byte) + "'";
  static constexpr char kHex[] = "0123456789ABCDEF";
  return std::string("the byte 0x") + kHex[byte >> 4] + kHex[byte & 15];
}

std::size_t padding_of(std::string_view text) {
  std::size_t padding = 0;
  while (padding < 2 && padding < text.size() && text[text.size() - 1 - padding] == '=')
    ++padding;
  return padding;
}

}  // namespace

std::size_t base64_decoded_size(std::string_view text) {
  return text.size() / 4 * 3 - padding_of(text);
}

Base64Result decode_base64_strict(std::string_view text) {
  Base64Result result;
  const std::size_t padding = padding_of(text);
  const std::size_t data_end = text.size() - padding;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const auto byte = static_cast<unsigned char>(text[i]);
    if (kBase64Values[byte] != kNotBase64 || i >= data_end) continue;
    if (byte == '=') {
      result.problem = "'=' at offset " + std::to_string(i) +
                       " comes before the end (padding goes only at the end, at most two)";
    } else if (byte == '-' || byte == '_') {
      result.problem = describe_byte(byte) + " at offset " + std::to_string(i) +
                       " belongs to the URL-safe alphabet; use the standard one ('+' and '/')";
    } else if (byte == ' ' || byte == '\n' || byte == '\r' || byte == '\t') {
      result.problem =
          "whitespace at offset " + std::to_string(i) + " (send it without line breaks)";
    } else {
      result.problem = describe_byte(byte) + " at offset " + std::to_string(i) +
                       " is not in the base64 alphabet";
    }
    return result;
  }
  if (text.size() % 4 != 0) {
    result.problem = "its length, " + std::to_string(text.size()) +
                     " characters, is not a multiple of four (pad it with '=')";
    return result;
  }
  result.bytes.reserve(base64_decoded_size(text));
  std::uint32_t bits = 0;
  int held = 0;
  for (std::size_t i = 0; i < data_end; ++i) {
    bits = (bits << 6) | kBase64Values[static_cast<unsigned char>(text[i])];
    held += 6;
    if (held >= 8) {
      held -= 8;
      result.bytes.push_back(static_cast<std::uint8_t>((bits >> held) & 0xFF));
    }
  }
  // The last character before the padding carries bits no byte holds; a
  // canonical encoder leaves them zero, and a string whose are not was cut
  // or altered.
  if ((bits & ((1u << held) - 1)) != 0) {
    result.bytes.clear();
    result.problem =
        "the character before the padding has bits set that no byte holds "
        "(the data was cut or altered)";
  }
  return result;
}

}  // namespace quire::server
