#pragma once

#include <vector>

namespace quire::engine::vision {

// What a vision encoder gives for one image: the embeddings that stand in
// the prompt for its image positions, in the order the positions take them.
struct ImageEmbeddings {
  int tokens = 0;
  int width = 0;              // the language model's hidden size
  std::vector<float> values;  // [tokens, width] row-major
};

}  // namespace quire::engine::vision
