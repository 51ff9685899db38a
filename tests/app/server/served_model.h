#pragma once

// A small random model served by an engine thread, for the server's tests:
// the model directory, and a generator with the host that owns its thread,
// each on a runtime of its own.

#include <cstdint>

#include "quire/engine/generator/generator.h"
#include "quire/engine/runtime/model_runtime.h"
#include "quire/kernels/cpu/cpu_backend.h"
#include "quire/server/engine_host.h"
#include "small_model.h"

namespace quire::test {

// The Qwen2 random model of `seed`.
struct Model : SmallModel {
  explicit Model(std::uint64_t seed) : SmallModel(qwen2_spec(seed)) {}
};

struct Served {
  kernels::CpuBackend backend;
  engine::ModelRuntime runtime;
  engine::Generator generator;
  server::EngineHost host;

  // A cache of `pages` pages of 16 tokens; every request's jobs draft as
  // `draft` says.
  Served(const Model& model, std::size_t max_jobs, int pages = 64,
         const engine::DraftSettings& draft = {})
      : runtime(model.description, backend, small_options(cache::CacheFormat::FP16, pages)),
        generator(runtime, *model.tokenizer),
        host(generator, host_config(max_jobs, draft)) {}

  static server::EngineHostConfig host_config(std::size_t max_jobs,
                                              const engine::DraftSettings& draft) {
    server::EngineHostConfig config;
    config.max_jobs = max_jobs;
    config.draft = draft;
    return config;
  }
};

}  // namespace quire::test
