#pragma once

#include <QTemporaryDir>
#include <filesystem>
#include <memory>
#include <random>
#include <vector>

#include "quire/engine/modelgen/random_model.h"
#include "quire/engine/runtime/model_runtime.h"
#include "quire/kernels/cpu/cpu_backend.h"

namespace quire::test {

// A random model written into a temporary directory for one test.
class TestModel {
 public:
  explicit TestModel(const engine::modelgen::RandomModelSpec& spec) {
    path_ = std::filesystem::path(directory_.path().toStdString()) / "model";
    engine::modelgen::write_random_model(spec, path_);
    description_ =
        std::make_shared<const engine::ModelDescription>(engine::ModelDescription::open(path_));
  }
  const std::filesystem::path& path() const { return path_; }
  std::shared_ptr<const engine::ModelDescription> description() const { return description_; }

 private:
  QTemporaryDir directory_;
  std::filesystem::path path_;
  std::shared_ptr<const engine::ModelDescription> description_;
};

inline std::vector<cache::TokenId> random_tokens(int count, int vocab, std::uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<cache::TokenId> tokens(static_cast<std::size_t>(count));
  for (cache::TokenId& token : tokens)
    token = static_cast<cache::TokenId>(3 + rng() % (vocab - 3));
  return tokens;
}

inline float max_abs_difference(const std::vector<float>& a, const std::vector<float>& b) {
  float worst = 0.0f;
  for (std::size_t i = 0; i < a.size(); ++i)
    worst = std::max(worst, std::fabs(a[i] - b[i]));
  return worst;
}

inline float max_abs(const std::vector<float>& a) {
  float worst = 0.0f;
  for (float v : a)
    worst = std::max(worst, std::fabs(v));
  return worst;
}

}  // namespace quire::test
