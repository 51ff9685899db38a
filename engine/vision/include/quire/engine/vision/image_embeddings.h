#pragma once

#include <vector>

namespace quire::engine::vision {

// What a vision encoder hands the language model for one image: one row per
// image token of the prompt, in the order those tokens stand there.
struct ImageEmbeddings {
  int tokens = 0;
  int width = 0;              // the language model's hidden size
  std::vector<float> values;  // [tokens, width] row-major
};

}  // namespace quire::engine::vision
