#pragma once

// A small random model on disk with its description and tokenizer, and the
// small paged cache the generator and server suites run it with.

#include <QTemporaryDir>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <vector>

#include "quire/cache/cache_format.h"
#include "quire/cache/types.h"
#include "quire/engine/modelgen/random_model_spec.h"
#include "quire/engine/runtime/model_runtime.h"
#include "quire/engine/tokenizer/tokenizer.h"

namespace quire::test {

// Written into a temporary directory that lives as long as the object.
struct SmallModel {
  QTemporaryDir directory;
  std::filesystem::path path;
  std::shared_ptr<const engine::ModelDescription> description;
  std::unique_ptr<engine::Tokenizer> tokenizer;

  explicit SmallModel(const engine::modelgen::RandomModelSpec& spec);
};

// The default random model in the Qwen2 architecture (attention biases).
engine::modelgen::RandomModelSpec qwen2_spec(std::uint64_t seed);

// `pages` pages of `page_size` tokens, prefilled 64 tokens a chunk, with room
// for 17 sequences and no memory held back.
engine::RuntimeOptions small_options(cache::CacheFormat format = cache::CacheFormat::FP16,
                                     int pages = 64, int page_size = 16);

// Token 1 (BOS) and then `count - 1` ids drawn from 3..502 with `seed`.
std::vector<cache::TokenId> prompt_of(int count, std::uint32_t seed);

}  // namespace quire::test
