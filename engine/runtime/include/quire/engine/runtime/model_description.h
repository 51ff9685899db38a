#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "quire/cache/cache_format.h"
#include "quire/engine/formats/exl2_layout.h"
#include "quire/engine/formats/gptq_layout.h"
#include "quire/engine/io/model_tensors.h"
#include "quire/engine/model/architecture.h"
#include "quire/engine/model/model_config.h"
#include "quire/engine/planner/placement_request.h"
#include "quire/kernels/dtype.h"

namespace quire::engine {

enum class LinearFormat : std::uint8_t { Dense, Exl2, Gptq };

const char* to_string(LinearFormat format);

// One linear layer as the files hold it, checked against config.json and
// against itself, with the exact bytes loading it takes on a device.
struct LinearDescription {
  std::string key;  // e.g. "model.layers.3.mlp.up_proj"
  LinearFormat format = LinearFormat::Dense;
  kernels::DType dtype = kernels::DType::F16;  // Dense weights
  std::int64_t in_features = 0;
  std::int64_t out_features = 0;
  bool has_bias = false;
  kernels::DType bias_dtype = kernels::DType::F16;
  double bits_per_weight = 16.0;
  std::int64_t device_bytes = 0;
  std::optional<formats::Exl2Layout> exl2;
  std::optional<formats::GptqLayout> gptq;
};

struct LayerDescription {
  LinearDescription q, k, v, o, gate, up, down;
  kernels::DType norm_dtype = kernels::DType::F16;
  std::int64_t norm_bytes = 0;  // both norms

  std::int64_t device_bytes() const;
  template <typename F>
  void for_each_linear(F&& f) const {
    for (const LinearDescription* linear : {&q, &k, &v, &o, &gate, &up, &down})
      f(*linear);
  }
};

// Everything about a model directory that can be known without loading it:
// config, architecture, every tensor located and checked, per-layer formats
// and exact device bytes. open() throws ModelError for anything wrong.
struct ModelDescription {
  ModelDescription(std::filesystem::path directory, ModelConfig config,
                   const Architecture* architecture, io::ModelTensors tensors);

  std::filesystem::path directory;
  ModelConfig config;
  const Architecture* architecture = nullptr;
  io::ModelTensors tensors;

  kernels::DType embedding_dtype = kernels::DType::F16;
  std::int64_t embedding_bytes = 0;
  std::vector<LayerDescription> layers;
  kernels::DType final_norm_dtype = kernels::DType::F16;
  std::int64_t final_norm_bytes = 0;
  // The output projection; with tied embeddings it is the embedding table.
  LinearDescription head;
  bool head_tied = false;
  std::int64_t parameters = 0;

  static ModelDescription open(const std::filesystem::path& directory);

  // K and V shape of the attention layers.
  cache::LayerShape kv_shape() const { return {config.num_kv_heads, config.head_dim}; }

  // Placement units in execution order: the embedding, each layer, then the
  // final norm with the head. With tied embeddings the table is stored once,
  // with the head, and the embedding lookup runs on the head's device.
  std::vector<ModuleCost> modules(cache::CacheFormat format, int page_size,
                                  std::int64_t logit_rows) const;

  // Activations of a step of `tokens` tokens, on every device holding layers.
  std::int64_t scratch_bytes(std::int64_t tokens) const;
};

}  // namespace quire::engine
