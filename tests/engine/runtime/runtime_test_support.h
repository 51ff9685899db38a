#pragma once

#include <QTemporaryDir>
#include <filesystem>
#include <memory>
#include <random>
#include <span>
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

// The small Llama the cache-coding comparisons run: 3 layers, 2 K/V heads
// of 64, 512 tokens of vocabulary.
inline engine::modelgen::RandomModelSpec small_llama_spec() {
  engine::modelgen::RandomModelSpec spec;
  spec.architecture = "llama";
  spec.layers = 3;
  spec.hidden = 256;
  spec.heads = 4;
  spec.kv_heads = 2;
  spec.intermediate = 512;
  spec.seed = 5;
  return spec;
}

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

// The small cache the logit comparisons run in: 512 tokens in pages of 32,
// prompts taken 64 tokens at a time, so a 200-token prompt spans several
// pages and chunks.
inline engine::RuntimeOptions small_cache_options(
    cache::CacheFormat format = cache::CacheFormat::FP16) {
  engine::RuntimeOptions options;
  options.cache_format = format;
  options.cache_tokens = 512;
  options.page_size = 32;
  options.max_chunk_tokens = 64;
  return options;
}

// The logits after the last token of a prompt prefilled into a new runtime on
// the CPU backend.
inline std::vector<float> last_prefill_logits(std::shared_ptr<const engine::ModelDescription> model,
                                              const engine::RuntimeOptions& options,
                                              std::span<const cache::TokenId> tokens) {
  kernels::CpuBackend backend;
  engine::ModelRuntime runtime(std::move(model), backend, options);
  return runtime.prefill(tokens, false).back();
}

inline float max_abs(const std::vector<float>& a) {
  float worst = 0.0f;
  for (float v : a)
    worst = std::max(worst, std::fabs(v));
  return worst;
}

}  // namespace quire::test
