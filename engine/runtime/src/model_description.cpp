#include "quire/engine/runtime/model_description.h"

#include <algorithm>
#include <cmath>

#include "group_quantized_layers.h"
#include "layer_description.h"
#include "quire/engine/model_error.h"
#include "quire/kernels/cpu/half.h"
#include "quire/kernels/top_logits.h"

namespace quire::engine {
namespace {

using kernels::DType;

// sqrt(hidden) as transformers multiplies Gemma's embeddings by it: a tensor
// of the embedding's dtype, so rounded to it first.
float embedding_scale_of(const ModelConfig& config, DType dtype) {
  if (!config.scale_embeddings) return 1.0f;
  const auto scale = static_cast<float>(std::sqrt(static_cast<double>(config.hidden_size)));
  if (dtype == DType::BF16) return kernels::bf16_to_float(kernels::float_to_bf16(scale));
  if (dtype == DType::F16) return kernels::half_to_float(kernels::float_to_half(scale));
  return scale;
}

// The first of the architecture's prefixes under which the files hold the
// embedding: a multimodal download keeps its language model under one of
// two spellings, or holds none at all.
std::string find_text_prefix(const ModelDescription& model) {
  const Architecture& a = *model.architecture;
  std::string tried;
  for (const std::string& prefix : a.text_prefixes) {
    const std::string name = a.embedding(prefix) + ".weight";
    if (model.tensors.contains(name)) return prefix;
    tried += (tried.empty() ? "" : " or ") + name;
  }
  if (a.multimodal) {
    throw ModelError(model.directory.string() + ": no language model in the files (no tensor " +
                     tried + "); this " + std::string(a.label) +
                     " download may hold only its vision tower or be incomplete");
  }
  throw ModelError(model.directory.string() + ": no tensor " + tried +
                   "; the model files are incomplete or do not match config.json");
}

// A tensor beside an EXL3 trellis that exllamav3's format does not have
// (say, the marker of a codebook newer than Quire) would otherwise be left
// unread and its layer decoded wrongly.
void check_exl3_tensor_names(const ModelDescription& model) {
  for (const std::string_view name : model.tensors.names()) {
    const std::size_t dot = name.rfind('.');
    if (dot == std::string_view::npos) continue;
    const std::string_view suffix = name.substr(dot + 1);
    bool known = false;
    for (const std::string_view expected : formats::kExl3TensorSuffixes)
      known = known || suffix == expected;
    if (known || !model.tensors.contains(std::string(name.substr(0, dot)) + ".trellis")) continue;
    throw ModelError(model.directory.string() + ": " + std::string(name) +
                     " lies beside an EXL3 trellis, but EXL3 layers hold only trellis, suh, "
                     "svh, su, sv, mcg, mul1 and bias; this model uses a part of the format "
                     "Quire does not know (perhaps a newer codebook)");
  }
}

std::int64_t parameters_of(const LinearDescription& linear) {
  return linear.in_features * linear.out_features + (linear.has_bias ? linear.out_features : 0);
}

}  // namespace

const char* to_string(LinearFormat format) {
  switch (format) {
    case LinearFormat::Dense:
      return "dense";
    case LinearFormat::Exl2:
      return "exl2";
    case LinearFormat::Gptq:
      return "gptq";
    case LinearFormat::Fp8:
      return "fp8";
    case LinearFormat::Exl3:
      return "exl3";
    case LinearFormat::Awq:
      return "awq";
    case LinearFormat::PackQuantized:
      return "pack-quantized";
    case LinearFormat::NaiveQuantized:
      return "naive-quantized";
  }
  return "?";
}

std::int64_t LayerDescription::norm_bytes() const {
  std::int64_t total = 0;
  for_each_norm([&](const NormDescription& norm) { total += norm.bytes; });
  return total;
}

std::int64_t LayerDescription::device_bytes() const {
  std::int64_t total = norm_bytes();
  for_each_linear([&](const LinearDescription& linear) { total += linear.device_bytes; });
  return total;
}

std::int64_t LayerDescription::active_bytes(int active_experts) const {
  if (!sparse()) return device_bytes();
  std::int64_t all_experts = 0;
  for (const ExpertDescription& expert : experts)
    all_experts += expert.gate.device_bytes + expert.up.device_bytes + expert.down.device_bytes;
  // Experts of one layer share their formats and shapes: each costs the mean.
  const std::int64_t chosen =
      experts.empty() ? 0
                      : all_experts * active_experts / static_cast<std::int64_t>(experts.size());
  return device_bytes() - all_experts + chosen;
}

ModelDescription::ModelDescription(std::filesystem::path directory_, ModelConfig config_,
                                   const Architecture* architecture_, io::ModelTensors tensors_)
    : directory(std::move(directory_)),
      config(std::move(config_)),
      architecture(architecture_),
      tensors(std::move(tensors_)) {}

ModelDescription ModelDescription::open(const std::filesystem::path& directory) {
  ModelConfig config = load_model_config(directory);
  const Architecture* architecture = &find_architecture(config);
  ModelDescription model(directory, std::move(config), architecture,
                         io::ModelTensors::open(directory));
  const ModelConfig& c = model.config;
  const Architecture& a = *model.architecture;
  check_exl3_tensor_names(model);
  detail::check_quantization_supported(model);

  model.text_prefix = find_text_prefix(model);
  model.embedding_name = a.embedding(model.text_prefix);
  const io::ModelTensors::Located embedding =
      model.tensors.require(model.embedding_name + ".weight", {DType::F16, DType::BF16, DType::F32},
                            {c.vocab_size, c.hidden_size});
  model.embedding_dtype = embedding.info->dtype;
  model.embedding_bytes = static_cast<std::int64_t>(embedding.info->bytes);
  model.embedding_scale = embedding_scale_of(c, model.embedding_dtype);
  model.parameters = c.vocab_size * c.hidden_size;
  model.active_parameters = model.parameters;

  for (int i = 0; i < c.num_layers; ++i) {
    LayerDescription layer = detail::describe_layer(model, i);
    std::int64_t experts = 0;
    layer.for_each_linear([&](const LinearDescription& linear) {
      model.parameters += parameters_of(linear);
      model.active_parameters += parameters_of(linear);
    });
    for (const ExpertDescription& expert : layer.experts) {
      experts += parameters_of(expert.gate) + parameters_of(expert.up) + parameters_of(expert.down);
    }
    if (!layer.experts.empty()) {
      model.active_parameters +=
          experts * c.moe.experts_per_token / static_cast<std::int64_t>(layer.experts.size()) -
          experts;
    }
    layer.for_each_norm([&](const NormDescription& norm) {
      model.parameters += norm.width;
      model.active_parameters += norm.width;
    });
    model.layers.push_back(std::move(layer));
  }
  model.final_norm = detail::describe_norm(model, a.final_norm(model.text_prefix), c.hidden_size);
  model.final_norm_bytes = model.final_norm.bytes;
  model.parameters += c.hidden_size;
  model.active_parameters += c.hidden_size;

  std::string head;
  for (const std::string& name : a.heads) {
    if (model.tensors.contains(name + ".weight") || model.tensors.contains(name + ".q_weight") ||
        model.tensors.contains(name + ".qweight") || model.tensors.contains(name + ".trellis") ||
        model.tensors.contains(name + ".weight_packed")) {
      head = name;
      break;
    }
  }
  model.head_tied = c.tie_word_embeddings && head.empty();
  if (model.head_tied) {
    model.head.key = model.embedding_name;
    model.head.format = LinearFormat::Dense;
    model.head.dtype = model.embedding_dtype;
    model.head.in_features = c.hidden_size;
    model.head.out_features = c.vocab_size;
    model.head.bits_per_weight = double(kernels::dtype_size(model.embedding_dtype)) * 8.0;
    model.head.device_bytes = model.embedding_bytes;
  } else {
    model.head = detail::describe_linear(model, head.empty() ? a.heads.front() : head,
                                         c.hidden_size, c.vocab_size, false);
    model.parameters += c.hidden_size * c.vocab_size;
    model.active_parameters += c.hidden_size * c.vocab_size;
  }

  model.kv_scales = read_kv_scales(model);

  // What else the files hold: a multimodal download's vision tower.
  for (const std::string_view name : model.tensors.names()) {
    if (name.starts_with(model.text_prefix) || name.starts_with(model.head.key + ".")) continue;
    ++model.unused_tensors;
    model.unused_bytes += static_cast<std::int64_t>(model.tensors.get(name).info->bytes);
  }
  if (a.multimodal) model.vision = vision::describe_vision(model.directory, model.tensors);
  return model;
}

std::vector<ModuleCost> ModelDescription::modules(cache::CacheFormat format, int page_size,
                                                  std::int64_t logit_rows) const {
  const std::int64_t page_bytes =
      cache::format_info(format).page_bytes(kv_shape(), page_size).total();
  std::vector<ModuleCost> modules;
  modules.push_back(
      ModuleCost{embedding_name, ModuleKind::Embedding, head_tied ? 0 : embedding_bytes, 0, 0});
  for (std::size_t i = 0; i < layers.size(); ++i) {
    modules.push_back(ModuleCost{"model.layers." + std::to_string(i), ModuleKind::Layer,
                                 layers[i].device_bytes(), page_bytes, 0});
  }
  // Per row of logits (ForwardPass's buffers on the head's device): the row
  // gathered before the head and its norm, the logits, the sampler's
  // candidates (values and ids) and their statistics and temperature.
  const std::int64_t candidates = std::min<std::int64_t>(kernels::kMaxTopLogits, config.vocab_size);
  const std::int64_t head_scratch =
      logit_rows * ((config.vocab_size + 2 * config.hidden_size + 2 * candidates + 1) * 4 +
                    static_cast<std::int64_t>(sizeof(kernels::TopLogitsStats)));
  modules.push_back(ModuleCost{head_tied ? std::string("lm_head") : head.key, ModuleKind::Head,
                               final_norm_bytes + head.device_bytes, 0, head_scratch});
  return modules;
}

std::int64_t ModelDescription::scratch_bytes(std::int64_t tokens) const {
  const ModelConfig& c = config;
  const std::int64_t q = std::int64_t{c.num_heads} * c.head_dim;
  const std::int64_t kv = std::int64_t{c.num_kv_heads} * c.head_dim;
  const std::int64_t inner = std::max(c.intermediate_size, c.moe.intermediate_size);
  // x, h and a projection's output (hidden each), q and the attention output,
  // k and v, gate and up; plus token ids, positions and sequence numbers,
  // and the residual window's two entries per sequence (at most one per token).
  std::int64_t floats = 3 * c.hidden_size + 2 * q + 2 * kv + 2 * inner;
  // A fused projection's output before it is split.
  floats += fused_width();
  // Mixtures of experts: the router's scores, the rows routed to one expert
  // and its output, the routed rows' indices and weights.
  if (c.moe.experts > 0) floats += c.moe.experts + 2 * c.hidden_size + 2 * c.moe.experts_per_token;
  return tokens * (floats * 4 + 5 * 4) + static_cast<std::int64_t>(c.rotary_dim() / 2) * 4;
}

std::int64_t ModelDescription::fused_width() const {
  std::int64_t width = 0;
  for (const LayerDescription& layer : layers) {
    if (layer.qkv) width = std::max(width, layer.qkv->out_features);
    if (layer.gate_up) width = std::max(width, layer.gate_up->out_features);
  }
  return width;
}

}  // namespace quire::engine
