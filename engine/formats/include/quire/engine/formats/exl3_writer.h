#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "quire/engine/formats/exl3_layout.h"
#include "quire/engine/formats/layer_tensors.h"
#include "quire/kernels/linear_weight.h"

namespace quire::engine::formats {

// Writing EXL3 layers as exllamav3's converter lays them out: the packed
// trellis, suh and svh, and the codebook's marker tensor.

// One layer's tensors, ready for a safetensors file.
struct Exl3Encoding {
  std::int64_t in_features = 0;   // K
  std::int64_t out_features = 0;  // N
  std::int64_t padded_in = 0;     // Kp: K rounded up to 128
  std::int64_t padded_out = 0;    // Np
  int bits = 4;
  kernels::Exl3Codebook codebook = kernels::Exl3Codebook::mul1;
  std::vector<std::uint16_t> trellis;  // [Kp / 16, Np / 16, 16 * bits]
  std::vector<std::uint16_t> suh;      // FP16 [Kp]
  std::vector<std::uint16_t> svh;      // FP16 [Np]

  // Views of the tensors (without a bias), as describe_exl3 takes them; the
  // marker tensor's bytes live in `marker`, which must outlive them.
  Exl3Tensors views(std::vector<std::byte>& marker) const;
  // "trellis" (I16), "suh" and "svh" (F16), and "mcg" or "mul1" (an I32
  // scalar holding the multiplier) unless the codebook is 3INST.
  std::vector<NamedTensor> tensors() const;
};

// Packs one tile's 256 symbols (each below 2^bits, in tile position order)
// into its 16 * bits stored words: symbol t fills stream bits [t bits,
// (t + 1) bits), the stream read most significant bit first from 32-bit
// words stored low half first (exl3_trellis.h).
void pack_exl3_tile(std::span<const std::uint16_t> symbols, int bits, std::uint16_t* tile);

// The 256 states of a tile's positions from its symbols: state t = the last
// 16 / bits symbols up to t, tail-biting (the inverse of packing + reading).
std::vector<std::uint16_t> exl3_states_of_symbols(std::span<const std::uint16_t> symbols, int bits);

// The root mean square of a codebook's 65536 values.
double exl3_codebook_rms(kernels::Exl3Codebook codebook);

// A layer of random trellis symbols for test models: any symbols are a valid
// EXL3 tensor. suh holds random signs times `deviation` / the codebook's RMS,
// svh random signs, so the weights have about `deviation` as their standard
// deviation. Draws from std::mt19937_64 (the same on every platform).
struct Exl3RandomOptions {
  int bits = 4;
  kernels::Exl3Codebook codebook = kernels::Exl3Codebook::mul1;
  double deviation = 0.1;
  std::uint64_t seed = 1;
};
Exl3Encoding random_exl3(std::int64_t out_features, std::int64_t in_features,
                         const Exl3RandomOptions& options);

}  // namespace quire::engine::formats
