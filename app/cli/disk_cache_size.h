#pragma once

// The size that --disk-cache-size takes: plain bytes, or a number with K, M,
// G or T (powers of 1024), optionally followed by B or iB: 512M, 8G, 8GiB,
// 1.5T. Plain C++ so that it can be tested on its own.

#include <cstdint>
#include <string>
#include <string_view>

namespace quire::cli {

// The forms a size may take, for messages.
inline constexpr std::string_view kByteSizeForms =
    "bytes, or a number with K, M, G or T (powers of 1024, optionally followed by B or iB), "
    "such as 512M, 8G or 8GiB";

// Bytes that `text` names. Throws std::invalid_argument with a sentence
// that quotes `text` and says what is wrong with it (not a size, zero,
// negative, too large) and the forms a size may take.
std::uint64_t parse_byte_size(std::string_view text);

}  // namespace quire::cli
