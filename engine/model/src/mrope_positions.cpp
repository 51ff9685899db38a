// M-RoPE positions of a prompt with images, following the logic of
// transformers' get_rope_index (models/qwen2_5_vl) for images in one
// unpadded sequence.

#include "quire/engine/model/mrope_positions.h"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace quire::engine {
namespace {

std::string grid_text(const MropeImageGrid& grid) {
  return std::to_string(grid.t) + " x " + std::to_string(grid.h) + " x " + std::to_string(grid.w);
}

}  // namespace

MropePositions mrope_positions(std::span<const std::int32_t> tokens, std::int32_t image_token,
                               std::span<const MropeImageGrid> images, MropeFrames frames) {
  MropePositions out;
  out.ids.reserve(3 * tokens.size());
  std::int32_t next = 0;  // the largest id so far plus one
  const auto text = [&](std::size_t count) {
    for (std::size_t i = 0; i < count; ++i) {
      out.ids.insert(out.ids.end(), {next, next, next});
      ++next;
    }
  };
  std::size_t at = 0;
  for (std::size_t k = 0; k < images.size(); ++k) {
    const MropeImageGrid& grid = images[k];
    if (grid.t < 1 || grid.h < 1 || grid.w < 1) {
      throw std::invalid_argument("image " + std::to_string(k) + " has an empty grid (" +
                                  grid_text(grid) + " merged tokens)");
    }
    const auto first = std::find(tokens.begin() + std::ptrdiff_t(at), tokens.end(), image_token);
    const std::size_t count = std::size_t(grid.t) * std::size_t(grid.h) * std::size_t(grid.w);
    const auto begin = static_cast<std::size_t>(first - tokens.begin());
    if (first == tokens.end()) {
      throw std::invalid_argument("the prompt holds the tokens of " + std::to_string(k) +
                                  " images (token " + std::to_string(image_token) +
                                  "), but grids are given for " + std::to_string(images.size()));
    }
    if (tokens.size() - begin < count ||
        std::any_of(first, first + std::ptrdiff_t(count),
                    [&](std::int32_t token) { return token != image_token; })) {
      throw std::invalid_argument("image " + std::to_string(k) + " at token " +
                                  std::to_string(begin) + " has fewer than the " +
                                  std::to_string(count) + " tokens of its " + grid_text(grid) +
                                  " grid");
    }
    text(begin - at);
    const std::int32_t origin = next;
    std::int32_t largest = origin;
    for (std::int32_t f = 0; f < grid.t; ++f) {
      const std::int32_t frame = frames == MropeFrames::Numbered ? f : 0;
      for (std::int32_t row = 0; row < grid.h; ++row) {
        for (std::int32_t column = 0; column < grid.w; ++column) {
          out.ids.insert(out.ids.end(), {origin + frame, origin + row, origin + column});
          largest = std::max({largest, origin + frame, origin + row, origin + column});
        }
      }
    }
    next = largest + 1;
    at = begin + count;
  }
  if (std::find(tokens.begin() + std::ptrdiff_t(at), tokens.end(), image_token) != tokens.end()) {
    throw std::invalid_argument("the prompt holds more runs of image token " +
                                std::to_string(image_token) + " than the " +
                                std::to_string(images.size()) + " image grids given");
  }
  text(tokens.size() - at);
  out.delta = next - static_cast<std::int32_t>(tokens.size());
  return out;
}

}  // namespace quire::engine
