#pragma once

#include <cstdint>
#include <string_view>

namespace quire::engine::modelgen {

// A pseudo-random stream that gives the same numbers on every compiler,
// standard library and machine: xoshiro256** seeded through splitmix64, and a
// Box-Muller normal sampler of its own (std::normal_distribution and the
// other standard distributions are implementation-defined).
class RandomStream {
 public:
  explicit RandomStream(std::uint64_t seed);
  // An independent stream per label ("model.layers.0.mlp.up_proj.weight"), so
  // a tensor's values depend only on the seed and its name, not on which
  // tensors were drawn before it.
  RandomStream(std::uint64_t seed, std::string_view label);

  std::uint64_t next();
  // Uniform in [0, 1) with 53 random bits.
  double uniform();
  // Standard normal N(0, 1).
  double normal();

 private:
  std::uint64_t state_[4] = {};
  double spare_ = 0.0;
  bool has_spare_ = false;
};

}  // namespace quire::engine::modelgen
