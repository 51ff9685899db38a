#include "small_model.h"

#include <random>

#include "quire/engine/modelgen/random_model.h"

namespace quire::test {

SmallModel::SmallModel(const engine::modelgen::RandomModelSpec& spec) {
  path = std::filesystem::path(directory.path().toStdString()) / "model";
  engine::modelgen::write_random_model(spec, path);
  description =
      std::make_shared<const engine::ModelDescription>(engine::ModelDescription::open(path));
  tokenizer = std::make_unique<engine::Tokenizer>(engine::Tokenizer::load(path));
}

engine::modelgen::RandomModelSpec qwen2_spec(std::uint64_t seed) {
  engine::modelgen::RandomModelSpec spec;
  spec.architecture = "qwen2";
  spec.seed = seed;
  return spec;
}

engine::RuntimeOptions small_options(cache::CacheFormat format, int pages, int page_size) {
  engine::RuntimeOptions options;
  options.cache_format = format;
  options.cache_tokens = std::int64_t{pages} * page_size;
  options.page_size = page_size;
  options.max_chunk_tokens = 64;
  options.max_sequences = 17;
  options.reserve_bytes = 0;
  return options;
}

std::vector<cache::TokenId> prompt_of(int count, std::uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<cache::TokenId> tokens{1};
  for (int i = 1; i < count; ++i)
    tokens.push_back(static_cast<cache::TokenId>(3 + rng() % 500));
  return tokens;
}

}  // namespace quire::test
