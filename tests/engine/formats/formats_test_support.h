#pragma once

#include <QString>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "quire/engine/formats/layer_tensors.h"

namespace quire::test {

inline constexpr const char* kLayerKey = "model.layers.3.mlp.up_proj";

// [N, K] values from a normal distribution with a few larger outliers, like
// trained weights.
std::vector<float> random_matrix(std::mt19937& rng, std::int64_t out_features,
                                 std::int64_t in_features);

// Runs `describe` and returns the ModelError's message, or an empty string
// (and a failed check) when it does not throw one.
std::string model_error_message(const std::function<void()>& describe);

// A vector's bytes, as a tensor view takes them.
template <typename T>
std::span<const std::byte> bytes_of(const std::vector<T>& values) {
  return std::as_bytes(std::span<const T>(values));
}

// The tensor of a writer's output with this suffix, or null.
const engine::formats::NamedTensor* find_tensor(
    const std::vector<engine::formats::NamedTensor>& tensors, const std::string& suffix);

// A view of a writer's tensor, as a reader takes it.
engine::formats::TensorView view_of(const engine::formats::NamedTensor& tensor);

}  // namespace quire::test
