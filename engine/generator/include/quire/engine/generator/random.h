#pragma once

#include <cstdint>

namespace quire::engine {

// The sampler's source of randomness: xoshiro256** seeded through splitmix64.
// Written out instead of taken from <random> because the standard
// distributions may differ between library implementations, and a seed must
// give the same reply on every machine.
class Random {
 public:
  explicit Random(std::uint64_t seed);

  std::uint64_t next();
  // Uniform in [0, 1), from the top 53 bits of next(): every double it can
  // return is equally likely and exactly representable.
  double uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }

  // One step of splitmix64, also used to expand the seed into the state.
  static std::uint64_t splitmix64(std::uint64_t& state);

 private:
  std::uint64_t state_[4];
};

}  // namespace quire::engine
