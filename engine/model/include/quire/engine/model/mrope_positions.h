#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace quire::engine {

// An image's grid in the language model's tokens: frames, rows and columns
// after the tower merges patches (Qwen's image processor gives patches; a
// 2 x 2 merge halves its h and w). Its tokens run frame by frame, row by row.
struct MropeImageGrid {
  std::int32_t t = 1;
  std::int32_t h = 0;
  std::int32_t w = 0;
};

// Each token's three rotary ids, and what generated tokens add to their
// slots, as transformers' get_rope_index gives them (Qwen2-VL, Qwen2.5-VL).
struct MropePositions {
  // [tokens][3]: token i's (temporal, height, width) at [3i, 3i + 3), the
  // layout ForwardPass::Sequence::rope_positions takes (transformers holds
  // them as 3 x tokens).
  std::vector<std::int32_t> ids;
  // A token in slot p after the prompt turns by p + delta on every axis
  // (rope_deltas): the largest id plus one, less the prompt's length.
  std::int32_t delta = 0;
};

// How an image of several frames numbers them on the temporal axis (images
// have one frame in practice): Qwen2-VL and Qwen3-VL count 0, 1, ...;
// Qwen2.5-VL scales them by the image's seconds per frame, zero.
enum class MropeFrames : std::uint8_t { Zero, Numbered };

// Text tokens take t = h = w, counting on from the largest id so far plus
// one; image k's t * h * w tokens, the k-th run of `image_token` in
// `tokens`, take (t0 + frame, t0 + row, t0 + column) where t0 is the id its
// first token would have had as text. Throws std::invalid_argument naming
// the problem when the image tokens do not match `images` (a run shorter
// than its grid, more runs than grids or fewer), or a grid is empty.
MropePositions mrope_positions(std::span<const std::int32_t> tokens, std::int32_t image_token,
                               std::span<const MropeImageGrid> images,
                               MropeFrames frames = MropeFrames::Zero);

}  // namespace quire::engine
