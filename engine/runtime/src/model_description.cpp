#include "quire/engine/runtime/model_description.h"

#include "quire/engine/model_error.h"

namespace quire::engine {
namespace {

using kernels::DType;

formats::TensorView view_of(const io::ModelTensors& tensors, const std::string& name) {
  const io::ModelTensors::Located located = tensors.get(name);
  return formats::TensorView{located.info->dtype, located.info->shape,
                             located.file->data(*located.info)};
}

std::int64_t bytes_of(const io::ModelTensors& tensors, const std::string& name) {
  return static_cast<std::int64_t>(tensors.get(name).info->bytes);
}

LinearDescription describe_linear(const ModelDescription& model, const std::string& key,
                                  std::int64_t in, std::int64_t out, bool with_bias) {
  const io::ModelTensors& tensors = model.tensors;
  LinearDescription linear;
  linear.key = key;
  linear.in_features = in;
  linear.out_features = out;
  const std::string bias_name = key + ".bias";
  if (with_bias) {
    const io::ModelTensors::Located bias =
        tensors.require(bias_name, {DType::F16, DType::BF16, DType::F32}, {out});
    linear.has_bias = true;
    linear.bias_dtype = bias.info->dtype;
  }
  const std::int64_t bias_bytes = with_bias ? bytes_of(tensors, bias_name) : 0;
  const formats::LinearShape shape{in, out};

  if (tensors.contains(key + ".q_weight")) {
    formats::Exl2Tensors exl2{
        view_of(tensors, key + ".q_weight"), view_of(tensors, key + ".q_invperm"),
        view_of(tensors, key + ".q_scale"),  view_of(tensors, key + ".q_scale_max"),
        view_of(tensors, key + ".q_groups"), std::nullopt};
    if (with_bias) exl2.bias = view_of(tensors, bias_name);
    linear.format = LinearFormat::Exl2;
    linear.exl2 = formats::describe_exl2(key, exl2, shape);
    linear.bits_per_weight = linear.exl2->bits_per_weight();
    // The loader keeps q_weight, q_scale and q_scale_max, and the permutation as int32.
    linear.device_bytes = bytes_of(tensors, key + ".q_weight") +
                          bytes_of(tensors, key + ".q_scale") +
                          bytes_of(tensors, key + ".q_scale_max") + 4 * in + bias_bytes;
    return linear;
  }
  if (tensors.contains(key + ".qweight")) {
    formats::GptqTensors gptq{view_of(tensors, key + ".qweight"), view_of(tensors, key + ".qzeros"),
                              view_of(tensors, key + ".scales"), std::nullopt, std::nullopt};
    if (tensors.contains(key + ".g_idx")) gptq.g_idx = view_of(tensors, key + ".g_idx");
    if (with_bias) gptq.bias = view_of(tensors, bias_name);
    formats::GptqOptions options;
    options.exact_zeros = model.config.quantization.checkpoint_format == "gptq_v2";
    linear.format = LinearFormat::Gptq;
    linear.gptq = formats::describe_gptq(key, gptq, options, shape);
    const std::int64_t g_idx_bytes = linear.gptq->g_idx.empty() ? 0 : 4 * in;
    linear.device_bytes = bytes_of(tensors, key + ".qweight") + bytes_of(tensors, key + ".qzeros") +
                          bytes_of(tensors, key + ".scales") + g_idx_bytes + bias_bytes;
    linear.bits_per_weight = double(linear.device_bytes - bias_bytes) * 8.0 / double(in * out);
    return linear;
  }
  if (!tensors.contains(key + ".weight")) {
    throw ModelError(model.directory.string() + ": no tensor " + key + ".weight (nor " + key +
                     ".q_weight for EXL2 or " + key +
                     ".qweight for GPTQ); the model files are incomplete or do not match "
                     "config.json");
  }
  const io::ModelTensors::Located weight =
      tensors.require(key + ".weight", {DType::F16, DType::BF16, DType::F32}, {out, in});
  linear.format = LinearFormat::Dense;
  linear.dtype = weight.info->dtype;
  linear.bits_per_weight = double(kernels::dtype_size(linear.dtype)) * 8.0;
  linear.device_bytes = static_cast<std::int64_t>(weight.info->bytes) + bias_bytes;
  return linear;
}

std::int64_t norm_bytes(const ModelDescription& model, const std::string& name, DType& dtype,
                        std::int64_t width) {
  const io::ModelTensors::Located norm =
      model.tensors.require(name + ".weight", {DType::F16, DType::BF16, DType::F32}, {width});
  dtype = norm.info->dtype;
  return static_cast<std::int64_t>(norm.info->bytes);
}

std::int64_t norm_bytes(const ModelDescription& model, const std::string& name, DType& dtype) {
  return norm_bytes(model, name, dtype, model.config.hidden_size);
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
  }
  return "?";
}

std::int64_t LayerDescription::device_bytes() const {
  std::int64_t total = norm_bytes;
  for_each_linear([&](const LinearDescription& linear) { total += linear.device_bytes; });
  return total;
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

  const io::ModelTensors::Located embedding =
      model.tensors.require(a.embedding() + ".weight", {DType::F16, DType::BF16, DType::F32},
                            {c.vocab_size, c.hidden_size});
  model.embedding_dtype = embedding.info->dtype;
  model.embedding_bytes = static_cast<std::int64_t>(embedding.info->bytes);
  model.parameters = c.vocab_size * c.hidden_size;

  const std::int64_t q_out = std::int64_t{c.num_heads} * c.head_dim;
  const std::int64_t kv_out = std::int64_t{c.num_kv_heads} * c.head_dim;
  for (int i = 0; i < c.num_layers; ++i) {
    const LayerTensorNames names = a.layer(i);
    LayerDescription layer;
    DType second_norm = DType::F16;
    layer.norm_bytes = norm_bytes(model, names.input_norm, layer.norm_dtype) +
                       norm_bytes(model, names.post_attention_norm, second_norm);
    if (c.qk_norm) {
      // One weight of head_dim each, shared by every query (key) head.
      layer.norm_bytes += norm_bytes(model, names.q_norm, second_norm, c.head_dim) +
                          norm_bytes(model, names.k_norm, second_norm, c.head_dim);
      model.parameters += 2 * std::int64_t{c.head_dim};
    }
    layer.q = describe_linear(model, names.q_proj, c.hidden_size, q_out, c.attention_bias);
    layer.k = describe_linear(model, names.k_proj, c.hidden_size, kv_out, c.attention_bias);
    layer.v = describe_linear(model, names.v_proj, c.hidden_size, kv_out, c.attention_bias);
    layer.o = describe_linear(model, names.o_proj, q_out, c.hidden_size, c.attention_output_bias);
    layer.gate =
        describe_linear(model, names.gate_proj, c.hidden_size, c.intermediate_size, c.mlp_bias);
    layer.up =
        describe_linear(model, names.up_proj, c.hidden_size, c.intermediate_size, c.mlp_bias);
    layer.down =
        describe_linear(model, names.down_proj, c.intermediate_size, c.hidden_size, c.mlp_bias);
    layer.for_each_linear([&](const LinearDescription& linear) {
      model.parameters +=
          linear.in_features * linear.out_features + (linear.has_bias ? linear.out_features : 0);
    });
    model.parameters += 2 * c.hidden_size;
    model.layers.push_back(std::move(layer));
  }
  model.final_norm_bytes = norm_bytes(model, a.final_norm(), model.final_norm_dtype);
  model.parameters += c.hidden_size;

  const std::string head = a.head();
  const bool head_present = model.tensors.contains(head + ".weight") ||
                            model.tensors.contains(head + ".q_weight") ||
                            model.tensors.contains(head + ".qweight");
  model.head_tied = c.tie_word_embeddings && !head_present;
  if (model.head_tied) {
    model.head.key = a.embedding();
    model.head.format = LinearFormat::Dense;
    model.head.dtype = model.embedding_dtype;
    model.head.in_features = c.hidden_size;
    model.head.out_features = c.vocab_size;
    model.head.bits_per_weight = double(kernels::dtype_size(model.embedding_dtype)) * 8.0;
    model.head.device_bytes = model.embedding_bytes;
  } else {
    model.head = describe_linear(model, head, c.hidden_size, c.vocab_size, false);
    model.parameters += c.hidden_size * c.vocab_size;
  }
  return model;
}

std::vector<ModuleCost> ModelDescription::modules(cache::CacheFormat format, int page_size,
                                                  std::int64_t logit_rows) const {
  const std::int64_t page_bytes =
      cache::format_info(format).page_bytes(kv_shape(), page_size).total();
  std::vector<ModuleCost> modules;
  modules.push_back(ModuleCost{architecture->embedding(), ModuleKind::Embedding,
                               head_tied ? 0 : embedding_bytes, 0, 0});
  for (std::size_t i = 0; i < layers.size(); ++i) {
    modules.push_back(ModuleCost{"model.layers." + std::to_string(i), ModuleKind::Layer,
                                 layers[i].device_bytes(), page_bytes, 0});
  }
  // Logits of the requested rows, and the rows gathered before the head.
  const std::int64_t head_scratch = logit_rows * (config.vocab_size + config.hidden_size) * 4;
  modules.push_back(ModuleCost{architecture->head(), ModuleKind::Head,
                               final_norm_bytes + head.device_bytes, 0, head_scratch});
  return modules;
}

std::int64_t ModelDescription::scratch_bytes(std::int64_t tokens) const {
  const ModelConfig& c = config;
  const std::int64_t q = std::int64_t{c.num_heads} * c.head_dim;
  const std::int64_t kv = std::int64_t{c.num_kv_heads} * c.head_dim;
  // x, h and a projection's output (hidden each), q and the attention output,
  // k and v, gate and up; plus token ids, positions and sequence numbers.
  const std::int64_t floats = 3 * c.hidden_size + 2 * q + 2 * kv + 2 * c.intermediate_size;
  return tokens * (floats * 4 + 3 * 4) + static_cast<std::int64_t>(c.rotary_dim() / 2) * 4;
}

}  // namespace quire::engine
