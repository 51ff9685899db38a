#include "quire/engine/runtime/kv_scales.h"

#include <cmath>
#include <cstring>

#include "quire/engine/model_error.h"
#include "quire/engine/runtime/model_description.h"
#include "quire/kernels/cpu/half.h"

namespace quire::engine {
namespace {

using kernels::DType;

std::string shape_text(const std::vector<std::int64_t>& shape) {
  std::string text = "[";
  for (std::size_t i = 0; i < shape.size(); ++i)
    text += (i ? ", " : "") + std::to_string(shape[i]);
  return text + "]";
}

// A tensor strategy's scale is one element ([], [1]); a per-head one is
// [kv_heads] with trailing ones, as compressed-tensors writes [heads, 1, 1].
bool shape_fits(const std::vector<std::int64_t>& shape, std::int64_t heads) {
  for (std::size_t i = 0; i < shape.size(); ++i) {
    const std::int64_t expected = i == 0 ? heads : 1;
    if (shape[i] != expected) return false;
  }
  return !shape.empty() || heads == 1;
}

std::vector<float> read_scale(const ModelDescription& model, int layer, bool key,
                              const KvCacheScheme& scheme) {
  const std::vector<std::string> names = kv_scale_tensor_names(model, layer, key);
  std::string name = names.front();
  auto located = model.tensors.find(name);
  for (std::size_t i = 1; !located && i < names.size(); ++i) {
    located = model.tensors.find(names[i]);
    if (located) name = names[i];
  }
  const std::string where = model.directory.string() + ": " + name;
  if (!located) {
    throw ModelError(where + " (or " + names.back() +
                     ") is missing, though config.json's quantization_config.kv_cache_scheme "
                     "promises calibrated K/V scales for every layer. The files are incomplete: "
                     "download them again, or remove kv_cache_scheme from config.json to use "
                     "Quire's dynamic FP8 scales");
  }
  const DType dtype = located->info->dtype;
  if (dtype != DType::F32 && dtype != DType::F16 && dtype != DType::BF16) {
    throw ModelError(where + " is " + std::string(kernels::dtype_name(dtype)) +
                     "; K/V scales must be F32, F16 or BF16");
  }
  const std::vector<std::int64_t>& shape = located->info->shape;
  const std::int64_t heads = scheme.per_head() ? model.config.num_kv_heads : 1;
  if (!shape_fits(shape, heads)) {
    throw ModelError(where + " has shape " + shape_text(shape) + "; kv_cache_scheme.strategy \"" +
                     scheme.strategy + "\" asks for " +
                     (scheme.per_head() ? "one scale per KV head ([" + std::to_string(heads) +
                                              "] or [" + std::to_string(heads) + ", 1, 1])"
                                        : std::string("one scale ([] or [1])")) +
                     ". config.json and the tensors disagree");
  }
  const std::span<const std::byte> data = model.tensors.data(name);
  std::vector<float> values(static_cast<std::size_t>(heads));
  for (std::size_t i = 0; i < values.size(); ++i) {
    if (dtype == DType::F32) {
      std::memcpy(&values[i], data.data() + i * 4, 4);
    } else {
      std::uint16_t bits = 0;
      std::memcpy(&bits, data.data() + i * 2, 2);
      values[i] = dtype == DType::F16 ? kernels::half_to_float(bits) : kernels::bf16_to_float(bits);
    }
    if (!(values[i] > 0.0f) || !std::isfinite(values[i])) {
      throw ModelError(where + " holds " + std::to_string(values[i]) +
                       (heads > 1 ? " for KV head " + std::to_string(i) : std::string()) +
                       "; a K/V scale must be a positive, finite number. Calibrate the model "
                       "again (quire-cli calibrate-kv) or remove kv_cache_scheme from "
                       "config.json");
    }
  }
  if (!scheme.per_head())
    values.assign(static_cast<std::size_t>(model.config.num_kv_heads), values[0]);
  return values;
}

}  // namespace

std::string kv_scale_tensor_name(const ModelDescription& model, int layer, bool key) {
  const std::string k_proj = model.architecture->layer(model.text_prefix, layer).k_proj;
  return k_proj.substr(0, k_proj.rfind('.') + 1) + (key ? "k_scale" : "v_scale");
}

std::vector<std::string> kv_scale_tensor_names(const ModelDescription& model, int layer, bool key) {
  const LayerTensorNames names = model.architecture->layer(model.text_prefix, layer);
  return {kv_scale_tensor_name(model, layer, key),
          (key ? names.k_proj : names.v_proj) + ".output_scale"};
}

std::optional<CalibratedKvScales> read_kv_scales(const ModelDescription& model) {
  const std::optional<KvCacheScheme>& scheme = model.config.quantization.kv_cache_scheme;
  if (!scheme || !scheme->unsupported_reason().empty()) return std::nullopt;
  CalibratedKvScales scales;
  scales.per_head = scheme->per_head();
  for (int layer = 0; layer < model.config.num_layers; ++layer) {
    scales.layers.push_back(LayerKvScales{read_scale(model, layer, true, *scheme),
                                          read_scale(model, layer, false, *scheme)});
  }
  return scales;
}

std::string describe_kv_scales(const ModelDescription& model) {
  const std::optional<KvCacheScheme>& scheme = model.config.quantization.kv_cache_scheme;
  if (!scheme) return {};
  if (const std::string reason = scheme->unsupported_reason(); !reason.empty()) {
    return "not used: " + reason;
  }
  return std::string("calibrated FP8 K/V scales, ") +
         (scheme->per_head() ? "one per KV head" : "one per layer") +
         " (used by FP8 cache halves instead of per-page scales)";
}

}  // namespace quire::engine
