#include "quire/engine/modelgen/random_stream.h"

#include <cmath>
#include <numbers>

namespace quire::engine::modelgen {
namespace {

std::uint64_t rotl(std::uint64_t x, int k) {
  return (x << k) | (x >> (64 - k));
}

// splitmix64: spreads any seed, 0 included, over a full xoshiro state.
std::uint64_t splitmix64(std::uint64_t& x) {
  x += 0x9e3779b97f4a7c15ull;
  std::uint64_t z = x;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

// FNV-1a over the label's bytes: stable, unlike std::hash.
std::uint64_t fnv1a(std::string_view text) {
  std::uint64_t hash = 0xcbf29ce484222325ull;
  for (const char c : text) {
    hash ^= static_cast<unsigned char>(c);
    hash *= 0x100000001b3ull;
  }
  return hash;
}

std::uint64_t combine(std::uint64_t seed, std::string_view label) {
  std::uint64_t x = seed;
  return splitmix64(x) ^ fnv1a(label);
}

}  // namespace

RandomStream::RandomStream(std::uint64_t seed) {
  std::uint64_t x = seed;
  for (std::uint64_t& word : state_)
    word = splitmix64(x);
}

RandomStream::RandomStream(std::uint64_t seed, std::string_view label)
    : RandomStream(combine(seed, label)) {}

std::uint64_t RandomStream::next() {
  const std::uint64_t result = rotl(state_[1] * 5, 7) * 9;
  const std::uint64_t t = state_[1] << 17;
  state_[2] ^= state_[0];
  state_[3] ^= state_[1];
  state_[1] ^= state_[2];
  state_[0] ^= state_[3];
  state_[2] ^= t;
  state_[3] = rotl(state_[3], 45);
  return result;
}

double RandomStream::uniform() {
  return static_cast<double>(next() >> 11) * 0x1p-53;
}

double RandomStream::normal() {
  if (has_spare_) {
    has_spare_ = false;
    return spare_;
  }
  // 1 - uniform() lies in (0, 1], so the logarithm is finite.
  const double radius = std::sqrt(-2.0 * std::log(1.0 - uniform()));
  const double angle = 2.0 * std::numbers::pi * uniform();
  spare_ = radius * std::sin(angle);
  has_spare_ = true;
  return radius * std::cos(angle);
}

}  // namespace quire::engine::modelgen
