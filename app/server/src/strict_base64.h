#pragma once

// Base64 as RFC 4648 section 4 defines it, read strictly: the standard
// alphabet (A-Z, a-z, 0-9, '+', '/'), padded with '=' to a multiple of four
// characters, no whitespace, and no bits set in the padding. Anything else
// is refused with the reason, so that a client that sends the URL-safe
// alphabet, line breaks or a truncated string learns which.

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace quire::server {

struct Base64Result {
  std::vector<std::uint8_t> bytes;
  std::string problem;  // empty when the text decoded; else why not, as a clause
};

// The number of bytes `text` decodes to if it is well formed (from its
// length and padding alone), so that a size limit is checked before anything
// is allocated.
std::size_t base64_decoded_size(std::string_view text);

Base64Result decode_base64_strict(std::string_view text);

}  // namespace quire::server
