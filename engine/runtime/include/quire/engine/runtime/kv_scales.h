#pragma once

#include <optional>
#include <string>
#include <vector>

namespace quire::engine {

struct ModelDescription;

// One attention layer's calibrated FP8 scales, one per KV head (a scale per
// tensor is repeated for every head). A cached value is stored as
// E4M3(value / scale) and read back as code * scale.
struct LayerKvScales {
  std::vector<float> key;
  std::vector<float> value;
};

// The static K/V cache scales of a checkpoint calibrated by llm-compressor
// (compressed-tensors' kv_cache_scheme) or by `quire-cli calibrate-kv`.
struct CalibratedKvScales {
  bool per_head = false;  // strategy "attn_head"; otherwise "tensor", one per layer
  std::vector<LayerKvScales> layers;
};

// Where a layer's scales are stored: its attention module's "k_scale" and
// "v_scale" ("model.layers.3.self_attn.k_scale"), as llm-compressor names them.
std::string kv_scale_tensor_name(const ModelDescription& model, int layer, bool key);
// Every name a checkpoint may store them under, the one above first: older
// compressed-tensors checkpoints name them after the projection's output
// ("model.layers.3.self_attn.k_proj.output_scale", as vLLM still reads).
std::vector<std::string> kv_scale_tensor_names(const ModelDescription& model, int layer, bool key);

// The scales config.json's quantization_config.kv_cache_scheme promises,
// read from the tensors and checked: F32, F16 or BF16; shape [] or [1] for
// "tensor", [kv_heads] (optionally [kv_heads, 1, 1]) for "attn_head"; every
// value positive and finite. Nothing when the config has no scheme, or one
// that Quire does not run (KvCacheScheme::unsupported_reason says why).
// Throws ModelError naming the tensor for a missing or malformed one.
std::optional<CalibratedKvScales> read_kv_scales(const ModelDescription& model);

// What `inspect` and the perplexity report say about a model's K/V scales:
// "calibrated FP8 K/V scales, one per layer", the reason a scheme is not
// used, or empty when there is no scheme.
std::string describe_kv_scales(const ModelDescription& model);

}  // namespace quire::engine
