#pragma once

// Private: reading a vision tower's dense tensors out of a model's files,
// shared by the towers Quire runs.

#include <string>
#include <vector>

#include "quire/engine/io/model_tensors.h"
#include "quire/engine/vision/vision_weights.h"

namespace quire::engine::vision::detail {

// Throws ModelError naming `name` and the directory when the files lack it:
// as quantized (a format's codes stored in place of a dense ".weight"), or
// missing altogether.
void check_tower_tensor_present(const io::ModelTensors& tensors, const std::string& name);

// Host bytes a tower tensor takes once WeightReader has read it: a vector
// (norms, biases) widened to FP32, a matrix or convolution kept as stored.
inline std::int64_t loaded_bytes(const std::vector<std::int64_t>& shape, std::int64_t elements,
                                 std::int64_t stored_bytes) {
  return shape.size() == 1 ? 4 * elements : stored_bytes;
}

class WeightReader {
 public:
  explicit WeightReader(const io::ModelTensors& tensors) : tensors_(tensors) {}

  // Any F16, BF16 or F32 tensor widened to FP32.
  std::vector<float> floats(const std::string& name) const;
  LayerNormWeights layer_norm(const std::string& key) const;
  // `key`.weight of any shape [out, ...] read as [out, product of the rest],
  // in the file's dtype, with `key`.bias widened to FP32 when `with_bias`.
  DenseLinear linear(const std::string& key, bool with_bias = true) const;
  // A [rows, columns] matrix stored for x W, turned into a linear's [columns, rows].
  DenseLinear transposed(const std::string& name) const;

 private:
  const io::ModelTensors& tensors_;
};

}  // namespace quire::engine::vision::detail
