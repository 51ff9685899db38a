#include "quire/engine/generator/random.h"

namespace quire::engine {
namespace {

std::uint64_t rotate_left(std::uint64_t value, int shift) {
  return (value << shift) | (value >> (64 - shift));
}

}  // namespace

std::uint64_t Random::splitmix64(std::uint64_t& state) {
  state += 0x9E3779B97F4A7C15ull;
  std::uint64_t z = state;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

Random::Random(std::uint64_t seed) {
  // splitmix64 never yields four zero words in a row, the one state
  // xoshiro cannot leave.
  for (std::uint64_t& word : state_)
    word = splitmix64(seed);
}

std::uint64_t Random::next() {
  const std::uint64_t result = rotate_left(state_[1] * 5, 7) * 9;
  const std::uint64_t shifted = state_[1] << 17;
  state_[2] ^= state_[0];
  state_[3] ^= state_[1];
  state_[1] ^= state_[2];
  state_[0] ^= state_[3];
  state_[2] ^= shifted;
  state_[3] = rotate_left(state_[3], 45);
  return result;
}

}  // namespace quire::engine
