#pragma once

#include <cstdint>
#include <filesystem>
#include <span>
#include <vector>

#include "quire/cache/types.h"
#include "quire/engine/runtime/kv_scales.h"

namespace quire::engine {

class ModelRuntime;

// The scale llm-compressor's static min-max observer derives from an
// absolute maximum for symmetric FP8: absmax / 448 (E4M3's largest value),
// so the largest value seen maps onto the largest code; at least FLT_EPSILON,
// as compressed-tensors clamps it, so a head that saw only zeros still has
// a usable scale.
float fp8_scale_from_absmax(float absmax);

// Watches every layer's keys and values while a runtime computes text and
// keeps their absolute maxima per layer and KV head: static calibration,
// the maxima over all the text (no moving average). Observes what is
// computed, so a window already in the cache adds nothing; run distinct
// text. Install one per runtime; it detaches when destroyed.
class KvCalibration {
 public:
  explicit KvCalibration(ModelRuntime& runtime);
  ~KvCalibration();
  KvCalibration(const KvCalibration&) = delete;
  KvCalibration& operator=(const KvCalibration&) = delete;

  // Runs `tokens` as one sequence (ModelRuntime::prefill) and observes it.
  void observe(std::span<const cache::TokenId> tokens);

  // Per layer, per KV head: the largest |key| and |value| seen.
  const std::vector<LayerKvScales>& absmax() const { return absmax_; }
  std::int64_t tokens_observed() const { return tokens_; }

  // Scales from the maxima: per KV head, or one per layer (the largest of
  // its heads) repeated for every head.
  CalibratedKvScales scales(bool per_head) const;

 private:
  void record(std::size_t layer, int device, const float* key, const float* value,
              std::int64_t tokens);

  ModelRuntime& runtime_;
  std::vector<LayerKvScales> absmax_;
  std::vector<float> host_;  // a step's keys or values, copied off the device
  std::int64_t tokens_ = 0;
};

// Writes a copy of `model`'s directory into `out` (which must not exist, or
// be empty) with `scales` in llm-compressor's layout: the tensors
// "<layer>.self_attn.k_scale" and "v_scale" (F32, [1] per layer, or
// [kv_heads, 1, 1] per head) in "kv_cache_scales.safetensors", and
// config.json's quantization_config.kv_cache_scheme {num_bits 8, type float,
// strategy "tensor" or "attn_head", dynamic false, symmetric true} merged in
// (quant_method "compressed-tensors" where the model had none). The other
// files are hard-linked where the file system allows (Quire never writes
// model files in place), copied otherwise; a single model.safetensors
// becomes "model-00001-of-00001.safetensors" under an index that also names
// the scales' file. The directory appears whole or not at all. Throws
// ModelError when `model` already holds scales in its own shards, and
// std::invalid_argument when `out` is not empty; I/O failures throw
// std::system_error.
void write_calibrated_model(const ModelDescription& model, const CalibratedKvScales& scales,
                            const std::filesystem::path& out);

}  // namespace quire::engine
