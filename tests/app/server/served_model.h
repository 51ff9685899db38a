#pragma once

// A small random model served by an engine thread, for the server's tests:
// the model directory, and a generator with the host that owns its thread,
// each on a runtime of its own.

#include <QTemporaryDir>
#include <filesystem>
#include <memory>

#include "quire/engine/generator/generator.h"
#include "quire/engine/modelgen/random_model.h"
#include "quire/engine/runtime/model_runtime.h"
#include "quire/kernels/cpu/cpu_backend.h"
#include "quire/server/engine_host.h"

namespace quire::test {

struct Model {
  QTemporaryDir directory;
  std::filesystem::path path;
  std::shared_ptr<const engine::ModelDescription> description;
  std::unique_ptr<engine::Tokenizer> tokenizer;

  explicit Model(std::uint64_t seed) {
    engine::modelgen::RandomModelSpec spec;
    spec.architecture = "qwen2";
    spec.seed = seed;
    path = std::filesystem::path(directory.path().toStdString()) / "model";
    engine::modelgen::write_random_model(spec, path);
    description =
        std::make_shared<const engine::ModelDescription>(engine::ModelDescription::open(path));
    tokenizer = std::make_unique<engine::Tokenizer>(engine::Tokenizer::load(path));
  }
};

inline engine::RuntimeOptions small_options(int cache_tokens = 64 * 16) {
  engine::RuntimeOptions options;
  options.cache_tokens = cache_tokens;
  options.page_size = 16;
  options.max_chunk_tokens = 64;
  options.max_sequences = 17;
  options.reserve_bytes = 0;
  return options;
}

struct Served {
  kernels::CpuBackend backend;
  engine::ModelRuntime runtime;
  engine::Generator generator;
  server::EngineHost host;

  Served(const Model& model, std::size_t max_jobs, int cache_tokens = 64 * 16)
      : runtime(model.description, backend, small_options(cache_tokens)),
        generator(runtime, *model.tokenizer),
        host(generator, {max_jobs}) {}
};

}  // namespace quire::test
