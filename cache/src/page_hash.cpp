#include "quire/cache/page_hash.h"

#include <blake2.h>

#include <algorithm>
#include <cstring>
#include <stdexcept>

namespace quire::cache {
namespace {

constexpr std::size_t kDigestBytes = 16;

void append_int64_le(std::uint8_t* out, std::int64_t value) {
  auto bits = static_cast<std::uint64_t>(value);
  for (int i = 0; i < 8; ++i)
    out[i] = static_cast<std::uint8_t>(bits >> (8 * i));
}

}  // namespace

std::string PageHash::hex() const {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string text(bytes.size() * 2, '0');
  for (std::size_t i = 0; i < bytes.size(); ++i) {
    text[2 * i] = kDigits[bytes[i] >> 4];
    text[2 * i + 1] = kDigits[bytes[i] & 0xf];
  }
  return text;
}

std::size_t PageHashHasher::operator()(const PageHash& hash) const noexcept {
  // The digest is uniformly distributed; its first bytes make a good bucket key.
  std::size_t value = 0;
  std::memcpy(&value, hash.bytes.data(), sizeof(value));
  return value;
}

PageHash hash_page(const PageHash* previous, std::span<const TokenId> tokens) {
  blake2b_state state;
  if (blake2b_init(&state, kDigestBytes) != 0) throw std::runtime_error("blake2b_init failed");
  if (previous != nullptr) blake2b_update(&state, previous->bytes.data(), previous->bytes.size());

  // Widen in small batches so the hash sees one contiguous little-endian stream.
  constexpr std::size_t kBatch = 64;
  std::uint8_t buffer[kBatch * 8];
  for (std::size_t begin = 0; begin < tokens.size(); begin += kBatch) {
    const std::size_t count = std::min(kBatch, tokens.size() - begin);
    for (std::size_t i = 0; i < count; ++i)
      append_int64_le(buffer + 8 * i, tokens[begin + i]);
    blake2b_update(&state, buffer, count * 8);
  }

  PageHash hash;
  if (blake2b_final(&state, hash.bytes.data(), kDigestBytes) != 0) {
    throw std::runtime_error("blake2b_final failed");
  }
  return hash;
}

std::vector<PageHash> hash_full_pages(std::span<const TokenId> tokens, int page_size) {
  if (page_size <= 0) throw std::invalid_argument("page size must be positive");
  const std::size_t size = static_cast<std::size_t>(page_size);
  std::vector<PageHash> hashes;
  hashes.reserve(tokens.size() / size);
  for (std::size_t begin = 0; begin + size <= tokens.size(); begin += size) {
    const PageHash* previous = hashes.empty() ? nullptr : &hashes.back();
    hashes.push_back(hash_page(previous, tokens.subspan(begin, size)));
  }
  return hashes;
}

PageHash PlaceholderSource::next() {
  static constexpr char kKey[] = "quire page placeholder";
  std::uint8_t counter[8];
  append_int64_le(counter, static_cast<std::int64_t>(counter_++));
  PageHash hash;
  if (blake2b(hash.bytes.data(), counter, kKey, kDigestBytes, sizeof(counter), sizeof(kKey) - 1) !=
      0) {
    throw std::runtime_error("blake2b failed");
  }
  return hash;
}

}  // namespace quire::cache
