#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "quire/cache/cache_format.h"
#include "quire/engine/formats/exl2_layout.h"
#include "quire/engine/formats/exl3_layout.h"
#include "quire/engine/formats/gptq_layout.h"
#include "quire/engine/io/model_tensors.h"
#include "quire/engine/model/architecture.h"
#include "quire/engine/model/model_config.h"
#include "quire/engine/planner/placement_request.h"
#include "quire/engine/runtime/kv_scales.h"
#include "quire/engine/vision/vision_tower_summary.h"
#include "quire/kernels/dtype.h"

namespace quire::engine {

// Fp8: compressed-tensors' float-quantized weights (F8_E4M3 `weight` and
// its `weight_scale`, per output row or per tensor). Exl3: exllamav3's
// trellis-coded weights (`trellis`, `suh`, `svh`, a codebook marker).
// Gptq (4- or 8-bit), and the formats repacked into GPTQ's layout at load,
// whose device layout is `gptq`: Awq (AutoAWQ's GEMM checkpoints),
// PackQuantized (compressed-tensors' W4A16 and W8A16) and NaiveQuantized
// (compressed-tensors' int8 `weight` with its scales).
enum class LinearFormat : std::uint8_t {
  Dense,
  Exl2,
  Gptq,
  Fp8,
  Exl3,
  Awq,
  PackQuantized,
  NaiveQuantized
};

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
  std::optional<formats::GptqLayout> gptq;  // Gptq, Awq, PackQuantized, NaiveQuantized
  std::optional<formats::Exl3Layout> exl3;
  // Fp8: the dtype of `weight_scale`, and whether it holds one scale per
  // output row (else one for the whole tensor).
  kernels::DType scale_dtype = kernels::DType::F32;
  bool scale_per_row = false;
};

// One RMSNorm weight as the files hold it.
struct NormDescription {
  std::string name;  // without ".weight"; empty: the layer has no such norm
  kernels::DType dtype = kernels::DType::F16;
  std::int64_t width = 0;  // weights: hidden_size, or head_dim for q/k norms
  std::int64_t bytes = 0;  // on a device: F32 where the weight is used as (1 + w)

  explicit operator bool() const { return !name.empty(); }
};

// One expert of a sparse MLP: a gated MLP of its own.
struct ExpertDescription {
  LinearDescription gate, up, down;
};

struct LayerDescription {
  // Attention: q, k and v apart, or one fused projection whose output holds
  // q, k then v (Phi-3); q, k and v are then unset (empty key).
  std::optional<LinearDescription> qkv;
  LinearDescription q, k, v, o;
  // MLP: gate and up apart or fused (gate first), then down. A sparse layer
  // has a router and experts instead.
  std::optional<LinearDescription> gate_up;
  LinearDescription gate, up, down;
  std::optional<LinearDescription> router;
  std::vector<ExpertDescription> experts;
  NormDescription attention_norm, attention_output_norm, mlp_norm, mlp_output_norm;
  NormDescription q_norm, k_norm;

  std::int64_t norm_bytes() const;
  std::int64_t device_bytes() const;
  // What a decode step reads: attention and norms, the router and, of a
  // sparse layer, `active_experts` experts.
  std::int64_t active_bytes(int active_experts) const;
  bool sparse() const { return router.has_value(); }
  template <typename F>
  void for_each_norm(F&& f) const {
    for (const NormDescription* norm :
         {&attention_norm, &attention_output_norm, &mlp_norm, &mlp_output_norm, &q_norm, &k_norm})
      if (*norm) f(*norm);
  }
  // Every projection the files hold, experts included.
  template <typename F>
  void for_each_linear(F&& f) const {
    for (const LinearDescription* linear : {&q, &k, &v, &o, &gate, &up, &down})
      if (!linear->key.empty()) f(*linear);
    for (const auto* fused : {&qkv, &gate_up, &router})
      if (fused->has_value()) f(**fused);
    for (const ExpertDescription& expert : experts)
      for (const LinearDescription* linear : {&expert.gate, &expert.up, &expert.down})
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

  // Where the language model's tensors start ("model.", or a multimodal
  // wrapper's "language_model.model."), and what else the files hold.
  std::string text_prefix;
  std::string embedding_name;  // without ".weight"
  // Tensors that are not the language model's (a vision tower), left on disk.
  std::int64_t unused_tensors = 0;
  std::int64_t unused_bytes = 0;
  // Whether the model can see images, and with which tower (vision.tower
  // unset: it cannot; vision.problem says why when config.json declares one
  // the files do not hold). The language model's forward pass ignores it.
  vision::VisionAvailability vision;
  kernels::DType embedding_dtype = kernels::DType::F16;
  // Gemma: sqrt(hidden) rounded to the embedding's dtype; 1: none.
  float embedding_scale = 1.0f;
  std::int64_t embedding_bytes = 0;
  std::vector<LayerDescription> layers;
  NormDescription final_norm;
  std::int64_t final_norm_bytes = 0;
  // The output projection; with tied embeddings it is the embedding table.
  LinearDescription head;
  bool head_tied = false;
  // Calibrated FP8 K/V scales (config.json's kv_cache_scheme), used by FP8
  // cache halves in place of per-page scales; none without a scheme Quire runs.
  std::optional<CalibratedKvScales> kv_scales;
  std::int64_t parameters = 0;
  // Of those, what one token runs through (a mixture of experts runs
  // experts_per_token of its experts).
  std::int64_t active_parameters = 0;

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
  // The widest fused projection's output (Phi-3's qkv_proj, gate_up_proj); 0: none.
  std::int64_t fused_width() const;
};

}  // namespace quire::engine
