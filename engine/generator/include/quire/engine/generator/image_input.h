#pragma once

// Images in a job's prompt (JobRequest::images). An image stands in the
// prompt as a run of positions whose token ids lie outside every vocabulary,
// from kFirstImagePositionId on, each derived from a digest of what the
// vision tower reads (image_position_ids). The page cache hashes pages over
// token ids, so a page holding an image's positions is keyed by the image's
// content: the same image in a later turn, a branch or another chat is a
// prefix hit, and its tower does not run again. The forward pass takes those
// positions' inputs from the image's embeddings instead of the table.

#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "quire/cache/types.h"

namespace quire::engine {

// Whether the generator's jobs may carry images; the vision checks of the
// server and the window (model_sees_images in app/server and app/gui)
// follow it, together with the model's vision tower.
inline constexpr bool kGeneratorTakesImages = true;

// Every id from here on is an image position: far above any vocabulary
// (Gemma 3's 262,208 tokens are the largest Quire reads).
inline constexpr cache::TokenId kFirstImagePositionId = cache::TokenId{1} << 30;

constexpr bool is_image_position(cache::TokenId id) {
  return id >= kFirstImagePositionId;
}

// BLAKE2b-256 of what the vision tower reads for one image (its pixel tensor
// and grid), so that equal inputs, and only those, share cached positions.
using ImageDigest = std::array<std::uint8_t, 32>;

ImageDigest image_digest(std::span<const std::uint8_t> bytes);

// The ids of an image's `positions` positions: position i takes 30 bits of
// BLAKE2b(digest, i) above kFirstImagePositionId. A page's hash chains every
// id before it, so two images share a cached page only when all their
// positions up to it agree: 30 bits for each, never one small hash for all.
std::vector<cache::TokenId> image_position_ids(const ImageDigest& digest, int positions);

// One image of a prompt, as the model's vision side prepared it.
struct PromptImage {
  ImageDigest digest{};
  int positions = 0;
  // Its positions attend to each other in both directions at prefill
  // (Gemma 3), so the generator computes all of them in one step; otherwise
  // attention is causal over them as over text (Qwen2.5-VL, Pixtral).
  bool both_ways = false;
  // Its positions as a grid of frames, rows and columns (Qwen's merged
  // patches), for a model whose rotary positions are M-RoPE: position
  // (f, r, c) of the image turns by (t0 + f, t0 + r, t0 + c) where t0 is
  // the id the image's first position would have had as text (transformers'
  // get_rope_index). Its product must be `positions` for such a model; other
  // models ignore it.
  int grid_t = 1;
  int grid_h = 0;
  int grid_w = 0;
  // The forward pass's input at its positions: positions x hidden size
  // floats, row-major (the vision tower's output). Called on the thread
  // that runs Generator::step(), at most once per job and only when a
  // position of the image must be computed: a cache hit over all of them
  // never runs the tower. An exception ends the job with its message.
  std::function<std::vector<float>()> embed;
};

// An image made ready for a chat, as the model's processor lays it out: the
// marker the chat template writes for an image, the text it becomes in the
// prompt (transformers' processors replace the marker in the rendered text
// before tokenizing), and the runs of image positions that text holds, each
// written as `position_text` once per position (Gemma 3's
// "<image_soft_token>"): a run per crop where the processor makes crops.
struct PreparedImage {
  std::string marker;
  std::string text;
  std::string position_text;
  std::vector<std::shared_ptr<const PromptImage>> runs;
};

// Where an image's positions begin in JobRequest::prompt.
struct PromptImagePlacement {
  std::int32_t first = 0;
  std::shared_ptr<const PromptImage> image;
};

}  // namespace quire::engine
