#pragma once

#include <QString>
#include <cstdint>
#include <functional>
#include <random>
#include <string>
#include <vector>

namespace quire::test {

inline constexpr const char* kLayerKey = "model.layers.3.mlp.up_proj";

// [N, K] values from a normal distribution with a few larger outliers, like
// trained weights.
std::vector<float> random_matrix(std::mt19937& rng, std::int64_t out_features,
                                 std::int64_t in_features);

// Runs `describe` and returns the ModelError's message, or an empty string
// (and a failed check) when it does not throw one.
std::string model_error_message(const std::function<void()>& describe);

}  // namespace quire::test
