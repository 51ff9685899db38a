#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "quire/kernels/linear_weight.h"

namespace quire::engine::formats {

// The search that codes one EXL3 tile: the stream of `bits`-wide symbols
// whose trellis states, read through the codebook, come closest in squared
// error to the tile's 256 values (in stream order, exl3_tile_row/column).
//
// Position t's state is the 16 stream bits ending with its symbol, so two
// neighbours' states share 16 - bits bits, the node between them: state t =
// (node t-1) << bits | symbol t, and node t = the state's low 16 - bits bits.
// Viterbi's algorithm keeps, for every node, the cheapest path that reaches
// it; each step tries the 2^bits states that end in the node (its top bits
// free) and remembers the winner, 2^16 states per position in all.
//
// The stream is tail-biting: the state of position 0 reaches back into the
// last symbols, so a valid path ends in the node it started from. As
// exllamav3's converter does, the search first runs unconstrained from the
// middle of the tile around to it and reads off which node its best path
// passes between positions 255 and 0, where it is well settled; a second run
// from that node is then the best path among those that end in it.
//
// Any number of positions works (a tile has 256; tests brute-force short
// streams); positions * bits must reach 16 so that a state is a stream's bits.
// One object per thread: it holds its work rows (several MiB at 1 or 2 bits).
class Exl3TrellisSearch {
 public:
  // `lanes`: the floats a vector of the search holds, 16 (AVX-512), 8 (AVX2)
  // or 4 (any processor); 0 takes the widest this processor runs, within
  // QUIRE_CPU_VECTOR_BITS. Throws std::invalid_argument for a width the
  // processor lacks, and for bits outside 1..8.
  Exl3TrellisSearch(int bits, kernels::Exl3Codebook codebook, int lanes = 0);

  int bits() const { return bits_; }
  kernels::Exl3Codebook codebook() const { return codebook_; }

  // The tail-biting path through middle_start_node(). Writes each
  // position's state and its codebook value; returns the squared error.
  double encode(std::span<const float> targets, std::span<std::uint16_t> states,
                std::span<float> decoded);

  // The best path whose last state ends in `node` (below 2^(16 - bits)),
  // which is then the node before position 0: a tail-biting stream.
  double encode_through(std::span<const float> targets, std::uint32_t node,
                        std::span<std::uint16_t> states, std::span<float> decoded);

  // The node encode() goes through: the best unconstrained path, run from
  // position count / 2 around the stream, between its last and first position.
  std::uint32_t middle_start_node(std::span<const float> targets);

 private:
  // Runs the steps over positions (first + r) % count, r = 0.., from `start`
  // (costs of the node before the first), leaving each step's choices in
  // choices_ and the last costs in current_.
  void run(std::span<const float> targets, std::size_t first, const std::vector<float>& start);
  // Reads the states back from the node after the last step.
  void trace_back(std::size_t count, std::size_t first, std::uint32_t node,
                  std::span<std::uint16_t> states) const;
  double finish(std::span<const float> targets, std::span<const std::uint16_t> states,
                std::span<float> decoded) const;
  void check(std::span<const float> targets, std::size_t states, std::size_t decoded) const;

  int bits_;
  kernels::Exl3Codebook codebook_;
  std::size_t nodes_;    // 2^(16 - bits)
  const float* values_;  // the codebook's 65536 values
  // One position's step, at the widest vectors the processor runs.
  void (*step_)(const float*, const float*, float, float*, std::uint8_t*);
  std::vector<float> current_, next_;
  std::vector<std::uint8_t> choices_;  // per step and node: the winning state's top bits
  std::vector<float> open_, closed_;   // start costs: every node, or one
};

}  // namespace quire::engine::formats
