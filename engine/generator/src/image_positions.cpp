#include <blake2.h>

#include <cstring>
#include <stdexcept>
#include <string>

#include "quire/engine/generator/image_input.h"

namespace quire::engine {

ImageDigest image_digest(std::span<const std::uint8_t> bytes) {
  ImageDigest digest{};
  if (blake2b(digest.data(), bytes.data(), nullptr, digest.size(), bytes.size(), 0) != 0) {
    throw std::runtime_error("blake2b failed");
  }
  return digest;
}

std::vector<cache::TokenId> image_position_ids(const ImageDigest& digest, int positions) {
  if (positions < 0)
    throw std::invalid_argument("an image cannot take a negative count of positions");
  std::vector<cache::TokenId> ids;
  ids.reserve(static_cast<std::size_t>(positions));
  std::uint8_t input[sizeof(digest) + 4];
  std::memcpy(input, digest.data(), digest.size());
  for (int i = 0; i < positions; ++i) {
    for (int b = 0; b < 4; ++b)
      input[digest.size() + std::size_t(b)] =
          static_cast<std::uint8_t>(std::uint32_t(i) >> (8 * b));
    std::uint8_t out[4];
    if (blake2b(out, input, nullptr, sizeof(out), sizeof(input), 0) != 0) {
      throw std::runtime_error("blake2b failed");
    }
    const std::uint32_t bits = (std::uint32_t(out[0]) | std::uint32_t(out[1]) << 8 |
                                std::uint32_t(out[2]) << 16 | std::uint32_t(out[3]) << 24) &
                               ((std::uint32_t{1} << 30) - 1);
    ids.push_back(kFirstImagePositionId + static_cast<cache::TokenId>(bits));
  }
  return ids;
}

}  // namespace quire::engine
