// M-RoPE positions of a job (Qwen2-VL, Qwen2.5-VL): where a prompt holds
// images, its tokens' rotary ids drift from their cache slots (an image's
// tokens share their time id and count rows and columns; the text after it
// continues from the largest id plus one), so the generator gives the
// forward pass the ids of each position it computes, prompt and reply.

#include <algorithm>
#include <stdexcept>
#include <string>

#include "generator_job.h"
#include "quire/engine/generator/generator.h"
#include "quire/engine/model/mrope_positions.h"

namespace quire::engine {

void Generator::plan_rope_positions(Job& job) const {
  job.rope_ids.clear();
  job.rope_delta = 0;
  if (runtime_.model().config.rope_scaling.mrope_section.empty() || job.request.images.empty())
    return;
  // The prompt as get_rope_index sees it: 1 where an image's position
  // lies, 0 for text. Images are placed in order and never overlap
  // (check_images), so the k-th run of grid size is image k.
  constexpr std::int32_t kImage = 1;
  std::vector<std::int32_t> kinds(job.request.prompt.size(), 0);
  std::vector<MropeImageGrid> grids;
  for (std::size_t i = 0; i < job.request.images.size(); ++i) {
    const PromptImagePlacement& placement = job.request.images[i];
    const PromptImage& image = *placement.image;
    const std::int64_t cells =
        std::int64_t{image.grid_t} * std::int64_t{image.grid_h} * std::int64_t{image.grid_w};
    if (image.grid_t < 1 || image.grid_h < 1 || image.grid_w < 1 || cells != image.positions) {
      throw std::invalid_argument(
          "image " + std::to_string(i + 1) + " takes " + std::to_string(image.positions) +
          " positions, but its grid is " + std::to_string(image.grid_t) + " x " +
          std::to_string(image.grid_h) + " x " + std::to_string(image.grid_w) +
          "; this model's rotary positions (M-RoPE) need the grid of every image");
    }
    std::fill(kinds.begin() + placement.first, kinds.begin() + placement.first + image.positions,
              kImage);
    grids.push_back({image.grid_t, image.grid_h, image.grid_w});
  }
  MropePositions positions = mrope_positions(kinds, kImage, grids, MropeFrames::Zero);
  job.rope_ids = std::move(positions.ids);
  job.rope_delta = positions.delta;
}

void Generator::give_rope_positions(Job& job, cache::TokenRange chunk,
                                    ForwardPass::Sequence& sequence) {
  if (job.rope_ids.empty()) return;
  job.step_rope.clear();
  const auto prompt = static_cast<std::int32_t>(job.rope_ids.size() / 3);
  for (std::int32_t p = chunk.begin; p < chunk.end; ++p) {
    if (p < prompt) {
      const auto at = job.rope_ids.begin() + std::ptrdiff_t(3) * p;
      job.step_rope.insert(job.step_rope.end(), at, at + 3);
    } else {
      const std::int32_t id = p + job.rope_delta;  // rope_deltas: the reply after the prompt
      job.step_rope.insert(job.step_rope.end(), {id, id, id});
    }
  }
  sequence.rope_positions = job.step_rope;
}

}  // namespace quire::engine
