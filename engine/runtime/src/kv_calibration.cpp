#include "quire/engine/runtime/kv_calibration.h"

#include <algorithm>
#include <cfloat>
#include <cmath>

#include "quire/engine/runtime/model_runtime.h"

namespace quire::engine {

float fp8_scale_from_absmax(float absmax) {
  return std::max(absmax / 448.0f, FLT_EPSILON);
}

KvCalibration::KvCalibration(ModelRuntime& runtime) : runtime_(runtime) {
  const auto heads = static_cast<std::size_t>(runtime.model().config.num_kv_heads);
  absmax_.assign(runtime.model().layers.size(),
                 LayerKvScales{std::vector<float>(heads, 0.0f), std::vector<float>(heads, 0.0f)});
  runtime_.forward().set_kv_observer(
      [this](std::size_t layer, int device, const float* key, const float* value,
             std::int64_t tokens) { record(layer, device, key, value, tokens); });
}

KvCalibration::~KvCalibration() {
  runtime_.forward().set_kv_observer({});
}

void KvCalibration::observe(std::span<const cache::TokenId> tokens) {
  runtime_.prefill(tokens, false);
  tokens_ += static_cast<std::int64_t>(tokens.size());
}

void KvCalibration::record(std::size_t layer, int device, const float* key, const float* value,
                           std::int64_t tokens) {
  const ModelConfig& c = runtime_.model().config;
  const auto head_dim = static_cast<std::size_t>(c.head_dim);
  const auto heads = static_cast<std::size_t>(c.num_kv_heads);
  const std::size_t count = static_cast<std::size_t>(tokens) * heads * head_dim;
  host_.resize(count);
  for (const auto& [source, maxima] :
       {std::pair{key, &absmax_[layer].key}, std::pair{value, &absmax_[layer].value}}) {
    runtime_.backend().copy(host_.data(), -1, source, device, count * sizeof(float));
    for (std::size_t i = 0; i < count; ++i) {
      float& largest = (*maxima)[(i / head_dim) % heads];
      // NaN compares false and is left out, as torch's amax would not be.
      largest = std::max(largest, std::fabs(host_[i]));
    }
  }
}

CalibratedKvScales KvCalibration::scales(bool per_head) const {
  CalibratedKvScales result;
  result.per_head = per_head;
  for (const LayerKvScales& maxima : absmax_) {
    LayerKvScales layer;
    for (const auto& [from, to] :
         {std::pair{&maxima.key, &layer.key}, std::pair{&maxima.value, &layer.value}}) {
      if (per_head) {
        for (const float m : *from)
          to->push_back(fp8_scale_from_absmax(m));
      } else {
        const float largest = *std::max_element(from->begin(), from->end());
        to->assign(from->size(), fp8_scale_from_absmax(largest));
      }
    }
    result.layers.push_back(std::move(layer));
  }
  return result;
}

}  // namespace quire::engine
