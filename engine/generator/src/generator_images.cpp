// Images in a job's prompt (image_input.h): what submit() checks, how
// prefill chunks keep an image that attends both ways whole, and the
// embedding rows each chunk gives the forward pass.

#include <algorithm>
#include <stdexcept>
#include <string>

#include "generator_job.h"
#include "quire/engine/generator/generator.h"

namespace quire::engine {
namespace {

std::string image_name(std::size_t index) {
  return "image " + std::to_string(index + 1);
}

}  // namespace

void Generator::check_images(const JobRequest& request) const {
  const auto size = static_cast<std::int64_t>(request.prompt.size());
  std::vector<bool> covered(request.prompt.size(), false);
  std::int64_t previous_end = 0;
  for (std::size_t i = 0; i < request.images.size(); ++i) {
    const PromptImagePlacement& placement = request.images[i];
    if (!placement.image) throw std::invalid_argument(image_name(i) + " of the prompt is empty");
    const PromptImage& image = *placement.image;
    const std::int64_t begin = placement.first;
    const std::int64_t end = begin + image.positions;
    if (image.positions <= 0 || begin < 0 || end > size) {
      throw std::invalid_argument(image_name(i) + " takes positions " + std::to_string(begin) +
                                  ".." + std::to_string(end) + ", outside the prompt's " +
                                  std::to_string(size) + " tokens");
    }
    if (begin < previous_end) {
      throw std::invalid_argument(image_name(i) + " begins inside the image before it");
    }
    previous_end = end;
    if (!image.embed) throw std::invalid_argument(image_name(i) + " has no embeddings to give");
    if (image.both_ways && image.positions > config_.max_step_tokens) {
      throw std::invalid_argument(image_name(i) + " takes " + std::to_string(image.positions) +
                                  " positions that attend to each other, more than the " +
                                  std::to_string(config_.max_step_tokens) +
                                  " one step computes; raise the tokens per step to at least " +
                                  std::to_string(image.positions));
    }
    const std::vector<cache::TokenId> ids = image_position_ids(image.digest, image.positions);
    if (!std::equal(ids.begin(), ids.end(), request.prompt.begin() + begin)) {
      throw std::invalid_argument("the prompt's positions " + std::to_string(begin) + ".." +
                                  std::to_string(end) + " do not hold the ids of " + image_name(i));
    }
    std::fill(covered.begin() + begin, covered.begin() + end, true);
  }
  const std::int64_t vocab = runtime_.model().config.vocab_size;
  for (std::size_t p = 0; p < request.prompt.size(); ++p) {
    const cache::TokenId id = request.prompt[p];
    if (!covered[p] && (id < 0 || id >= vocab)) {
      throw std::invalid_argument("the prompt's token " + std::to_string(id) + " at position " +
                                  std::to_string(p) + " lies outside the vocabulary of " +
                                  std::to_string(vocab) +
                                  (is_image_position(id) ? " and belongs to no image given" : ""));
    }
  }
}

std::optional<cache::TokenRange> Generator::image_chunk(const Job& job, cache::TokenRange chunk,
                                                        int budget) const {
  for (const PromptImagePlacement& placement : job.request.images) {
    if (!placement.image->both_ways) continue;
    const std::int32_t begin = placement.first;
    const std::int32_t end = begin + placement.image->positions;
    if (chunk.end <= begin || chunk.end >= end) continue;  // the chunk does not end inside it
    if (begin > chunk.begin) {
      chunk.end = begin;  // the image starts the next chunk
    } else if (end - chunk.begin <= budget) {
      chunk.end = end;  // the rest of the image in this one
    } else {
      return std::nullopt;
    }
    break;
  }
  return chunk;
}

void Generator::give_images(Job& job, cache::TokenRange chunk, ForwardPass::Sequence& sequence) {
  job.step_rows.clear();
  job.step_both_ways.clear();
  const std::int64_t hidden = runtime_.model().config.hidden_size;
  for (std::size_t i = 0; i < job.request.images.size(); ++i) {
    const PromptImagePlacement& placement = job.request.images[i];
    const PromptImage& image = *placement.image;
    const std::int32_t begin = placement.first;
    const std::int32_t end = begin + image.positions;
    const std::int32_t from = std::max(begin, chunk.begin);
    const std::int32_t to = std::min(end, chunk.end);
    if (from >= to) continue;
    if (image.both_ways) job.step_both_ways.push_back({begin, end});
    auto rows = job.image_rows.find(i);
    if (rows == job.image_rows.end()) {
      std::vector<float> values = image.embed();
      if (static_cast<std::int64_t>(values.size()) != std::int64_t{image.positions} * hidden) {
        throw std::runtime_error(image_name(i) + " gave " + std::to_string(values.size()) +
                                 " values for " + std::to_string(image.positions) +
                                 " positions of width " + std::to_string(hidden));
      }
      rows = job.image_rows.emplace(i, std::move(values)).first;
    }
    job.step_rows.push_back(
        {from - chunk.begin, to - from, rows->second.data() + std::int64_t(from - begin) * hidden});
  }
  sequence.embedded = job.step_rows;
  sequence.both_ways = job.step_both_ways;
}

}  // namespace quire::engine
