#include "formats_test_support.h"

#include "quire/engine/model_error.h"

namespace quire::test {

std::vector<float> random_matrix(std::mt19937& rng, std::int64_t out_features,
                                 std::int64_t in_features) {
  std::normal_distribution<float> normal(0.0f, 0.02f);
  std::uniform_int_distribution<int> outlier(0, 99);
  std::vector<float> values(std::size_t(out_features * in_features));
  for (float& value : values)
    value = normal(rng) * (outlier(rng) == 0 ? 8.0f : 1.0f);
  return values;
}

std::string model_error_message(const std::function<void()>& describe) {
  try {
    describe();
  } catch (const engine::ModelError& error) {
    return error.what();
  }
  return {};
}

const engine::formats::NamedTensor* find_tensor(
    const std::vector<engine::formats::NamedTensor>& tensors, const std::string& suffix) {
  for (const engine::formats::NamedTensor& tensor : tensors)
    if (tensor.suffix == suffix) return &tensor;
  return nullptr;
}

engine::formats::TensorView view_of(const engine::formats::NamedTensor& tensor) {
  return {tensor.dtype, tensor.shape, tensor.bytes};
}

}  // namespace quire::test
