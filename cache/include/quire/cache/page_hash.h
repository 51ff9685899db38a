#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "quire/cache/types.h"

namespace quire::cache {

// 16-byte page identity. For a full page it is the chained blake2b digest (see
// hash_page); pages that are not full carry a unique placeholder instead.
struct PageHash {
  std::array<std::uint8_t, 16> bytes{};

  friend bool operator==(const PageHash&, const PageHash&) = default;
  friend auto operator<=>(const PageHash&, const PageHash&) = default;

  // 32 lowercase hex digits.
  std::string hex() const;
};

struct PageHashHasher {
  std::size_t operator()(const PageHash& hash) const noexcept;
};

// blake2b with a 16-byte digest, no key, over `previous` (omitted for the first
// page of a sequence) followed by the page's token ids as little-endian int64.
// This is exactly exllamav2's dynamic-generator page hash.
PageHash hash_page(const PageHash* previous, std::span<const TokenId> tokens);

// Chained hashes of every full page of `tokens` (the trailing partial page, if
// any, gets none). Element i hashes tokens [i*page_size, (i+1)*page_size).
std::vector<PageHash> hash_full_pages(std::span<const TokenId> tokens, int page_size);

// Unique placeholder identities for pages that are not full. They come from a
// keyed blake2b over a counter, so they never repeat and are, like real page
// hashes, indistinguishable from random: a placeholder cannot match a real page.
class PlaceholderSource {
 public:
  PageHash next();

 private:
  std::uint64_t counter_ = 0;
};

}  // namespace quire::cache
