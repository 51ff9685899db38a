#include "quire/engine/vision/image_token_layout.h"

namespace quire::vision {

void ImageTokenLayout::add(const std::string& text, std::size_t count, bool image_positions) {
  if (count == 0) return;
  if (!runs.empty() && runs.back().text == text && runs.back().image_positions == image_positions) {
    runs.back().count += count;
    return;
  }
  runs.emplace_back(text, count, image_positions);
}

std::size_t ImageTokenLayout::image_positions() const {
  std::size_t total = 0;
  for (const TokenRun& run : runs)
    if (run.image_positions) total += run.count;
  return total;
}

std::string ImageTokenLayout::text() const {
  std::string out;
  for (const TokenRun& run : runs)
    for (std::size_t i = 0; i < run.count; ++i)
      out += run.text;
  return out;
}

}  // namespace quire::vision
