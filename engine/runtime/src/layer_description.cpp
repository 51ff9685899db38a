#include "layer_description.h"

#include <optional>

#include "group_quantized_layers.h"
#include "quire/engine/model_error.h"

namespace quire::engine::detail {
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

bool holds_linear(const io::ModelTensors& tensors, const std::string& key) {
  return tensors.contains(key + ".weight") || tensors.contains(key + ".q_weight") ||
         tensors.contains(key + ".qweight") || tensors.contains(key + ".trellis") ||
         tensors.contains(key + ".weight_packed");
}

std::optional<formats::TensorView> optional_view(const io::ModelTensors& tensors,
                                                 const std::string& name) {
  if (!tensors.contains(name)) return std::nullopt;
  return view_of(tensors, name);
}

// The output width a projection is stored with, in any format. EXL3 stores
// its outputs padded to a multiple of 128, so that width is only known to be
// within 128 of the real one.
std::optional<std::int64_t> stored_outputs(const io::ModelTensors& tensors, const std::string& key,
                                           bool awq) {
  if (auto dense = tensors.find(key + ".weight"); dense && dense->info->shape.size() == 2) {
    return dense->info->shape[0];
  }
  // compressed-tensors' [out, packed inputs].
  if (auto packed = tensors.find(key + ".weight_packed");
      packed && packed->info->shape.size() == 2) {
    return packed->info->shape[0];
  }
  for (const char* packed : {".q_weight", ".qweight"}) {
    if (auto quantized = tensors.find(key + packed);
        quantized && quantized->info->shape.size() == 2) {
      // AWQ packs eight outputs into a word.
      return quantized->info->shape[1] * (awq && packed == std::string(".qweight") ? 8 : 1);
    }
  }
  return std::nullopt;
}

// A query projection of another width than heads x head_dim means
// config.json's head_dim (or its default, hidden / heads) is wrong for these
// files; say so rather than only that a shape differs.
void check_head_dim(const ModelDescription& model, const std::string& key, std::int64_t expected,
                    std::int64_t fused_extra) {
  const ModelConfig& c = model.config;
  if (auto trellis = model.tensors.find(key + ".trellis");
      trellis && trellis->info->shape.size() == 3) {
    const std::int64_t padded = trellis->info->shape[1] * 16;
    if (padded == formats::exl3_padded(expected)) return;
    throw ModelError(model.directory.string() + ": " + key + ".trellis holds " +
                     std::to_string(padded) + " outputs (padded to 128), but config.json's " +
                     "head_dim " + std::to_string(c.head_dim) + " x " +
                     std::to_string(c.num_heads) + " heads asks for " + std::to_string(expected) +
                     ". config.json's \"head_dim\" disagrees with the tensors");
  }
  const std::optional<std::int64_t> rows =
      stored_outputs(model.tensors, key, model.config.quantization.method == "awq");
  if (!rows || *rows == expected) return;
  const std::int64_t query_rows = *rows - fused_extra;
  std::string hint;
  if (query_rows > 0 && query_rows % c.num_heads == 0) {
    hint = "; the tensors hold heads of " + std::to_string(query_rows / c.num_heads);
  }
  throw ModelError(model.directory.string() + ": " + key + " has " + std::to_string(*rows) +
                   " outputs, but config.json's head_dim " + std::to_string(c.head_dim) + " x " +
                   std::to_string(c.num_heads) + " heads asks for " + std::to_string(expected) +
                   hint + ". config.json's \"head_dim\" disagrees with the tensors");
}

ExpertDescription describe_expert(const ModelDescription& model, const LayerTensorNames& names,
                                  int expert) {
  const ModelConfig& c = model.config;
  const std::int64_t hidden = c.hidden_size;
  const std::int64_t inner = c.moe.intermediate_size;
  ExpertDescription description;
  description.gate =
      describe_linear(model, names.expert(expert, names.expert_gate), hidden, inner, c.mlp_bias);
  description.up =
      describe_linear(model, names.expert(expert, names.expert_up), hidden, inner, c.mlp_bias);
  description.down =
      describe_linear(model, names.expert(expert, names.expert_down), inner, hidden, c.mlp_bias);
  return description;
}

// FP8 weights as compressed-tensors writes them: `weight` [out, in] in
// F8_E4M3 beside `weight_scale`, [out, 1] or [out] for a scale per output
// row (strategy "channel"), [1] or [] for one scale (strategy "tensor").
void describe_fp8(const ModelDescription& model, const std::string& key,
                  LinearDescription& linear) {
  const io::ModelTensors& tensors = model.tensors;
  const std::int64_t in = linear.in_features;
  const std::int64_t out = linear.out_features;
  const io::ModelTensors::Located weight =
      tensors.require(key + ".weight", {DType::F8_E4M3}, {out, in});
  const std::string scale_name = key + ".weight_scale";
  if (!tensors.contains(scale_name)) {
    throw ModelError(model.directory.string() + ": " + key +
                     ".weight holds FP8 (F8_E4M3) values but there is no " + scale_name +
                     " to scale them; the files are incomplete or not a compressed-tensors "
                     "FP8 checkpoint");
  }
  const io::ModelTensors::Located scale = tensors.get(scale_name);
  const DType scale_dtype = scale.info->dtype;
  if (scale_dtype != DType::F32 && scale_dtype != DType::BF16 && scale_dtype != DType::F16) {
    throw ModelError(model.directory.string() + ": " + scale_name + " is " +
                     std::string(kernels::dtype_name(scale_dtype)) +
                     "; FP8 weight scales must be F32, BF16 or F16");
  }
  const std::vector<std::int64_t>& shape = scale.info->shape;
  const bool per_row = (shape.size() == 2 && shape[0] == out && shape[1] == 1) ||
                       (shape.size() == 1 && shape[0] == out && out != 1);
  const bool per_tensor = shape.empty() || (shape.size() == 1 && shape[0] == 1) ||
                          (shape.size() == 2 && shape[0] == 1 && shape[1] == 1);
  if (!per_row && !per_tensor) {
    std::string text;
    for (const std::int64_t d : shape)
      text += (text.empty() ? "" : ", ") + std::to_string(d);
    throw ModelError(model.directory.string() + ": " + scale_name + " has shape [" + text +
                     "]; FP8 weights take one scale per output row ([" + std::to_string(out) +
                     ", 1]) or one for the tensor ([1]). Scales per group of inputs are not "
                     "supported");
  }
  linear.format = LinearFormat::Fp8;
  linear.scale_dtype = scale_dtype;
  linear.scale_per_row = per_row;
  // On a device: the codes, and the scales widened to F32, one per row.
  linear.device_bytes = static_cast<std::int64_t>(weight.info->bytes) + 4 * out;
  linear.bits_per_weight = 8.0 + 32.0 / double(in);
}

// EXL3 as exllamav3 writes it: the trellis with its input and output
// vectors, a codebook marker, and a bias of N or of the padded Np outputs.
void describe_exl3(const ModelDescription& model, const std::string& key, bool with_bias,
                   LinearDescription& linear) {
  const io::ModelTensors& tensors = model.tensors;
  formats::Exl3Tensors exl3;
  exl3.trellis = view_of(tensors, key + ".trellis");
  exl3.suh = optional_view(tensors, key + ".suh");
  exl3.svh = optional_view(tensors, key + ".svh");
  exl3.su = optional_view(tensors, key + ".su");
  exl3.sv = optional_view(tensors, key + ".sv");
  exl3.mcg = optional_view(tensors, key + ".mcg");
  exl3.mul1 = optional_view(tensors, key + ".mul1");
  const std::string bias_name = key + ".bias";
  if (with_bias) {
    if (!tensors.contains(bias_name)) {
      throw ModelError(model.directory.string() + ": no tensor " + bias_name +
                       ", but config.json gives this layer a bias; the model files are "
                       "incomplete or do not match config.json");
    }
    exl3.bias = view_of(tensors, bias_name);
  }
  linear.format = LinearFormat::Exl3;
  linear.exl3 = formats::describe_exl3(key, exl3, {linear.in_features, linear.out_features});
  const formats::Exl3Layout& layout = *linear.exl3;
  linear.bits_per_weight = layout.bits_per_weight();
  if (exl3.bias) {
    linear.has_bias = true;
    linear.bias_dtype = exl3.bias->dtype;
  }
  // The trellis, suh and svh as FP16 (older files' packed signs are
  // unpacked at load), and the bias.
  linear.device_bytes = bytes_of(tensors, key + ".trellis") + 2 * layout.padded_in +
                        2 * layout.padded_out +
                        (exl3.bias ? static_cast<std::int64_t>(exl3.bias->bytes.size()) : 0);
}

}  // namespace

LinearDescription describe_linear(const ModelDescription& model, const std::string& key,
                                  std::int64_t in, std::int64_t out, bool with_bias) {
  const io::ModelTensors& tensors = model.tensors;
  LinearDescription linear;
  linear.key = key;
  linear.in_features = in;
  linear.out_features = out;
  if (tensors.contains(key + ".trellis")) {
    describe_exl3(model, key, with_bias, linear);
    return linear;
  }
  const std::string bias_name = key + ".bias";
  if (with_bias) {
    const io::ModelTensors::Located bias =
        tensors.require(bias_name, {DType::F16, DType::BF16, DType::F32}, {out});
    linear.has_bias = true;
    linear.bias_dtype = bias.info->dtype;
  }
  const std::int64_t bias_bytes = with_bias ? bytes_of(tensors, bias_name) : 0;
  const formats::LinearShape shape{in, out};
  // AWQ and compressed-tensors' integer weights, repacked into GPTQ's layout at load.
  if (describe_group_quantized(model, key, linear)) return linear;

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
    if (model.config.quantization.bits != 0) options.bits = model.config.quantization.bits;
    linear.format = LinearFormat::Gptq;
    linear.gptq = formats::describe_gptq(key, gptq, options, shape);
    const std::int64_t g_idx_bytes = linear.gptq->g_idx.empty() ? 0 : 4 * in;
    linear.device_bytes = bytes_of(tensors, key + ".qweight") + bytes_of(tensors, key + ".qzeros") +
                          bytes_of(tensors, key + ".scales") + g_idx_bytes + bias_bytes;
    linear.bits_per_weight = double(linear.device_bytes - bias_bytes) * 8.0 / double(in * out);
    return linear;
  }
  const QuantizationConfig& quantization = model.config.quantization;
  if (!tensors.contains(key + ".weight") && quantization.method == "compressed-tensors") {
    throw ModelError(model.directory.string() + ": no tensor " + key + ".weight_packed or " + key +
                     ".weight; config.json's quantization_config is compressed-tensors (\"" +
                     quantization.format +
                     "\"), whose layers hold one of them: the model files are incomplete or do "
                     "not match config.json");
  }
  if (!tensors.contains(key + ".weight")) {
    throw ModelError(model.directory.string() + ": no tensor " + key + ".weight (nor " + key +
                     ".q_weight for EXL2, " + key + ".qweight for GPTQ or " + key +
                     ".trellis for EXL3); the model files are incomplete or do not match "
                     "config.json");
  }
  if (tensors.get(key + ".weight").info->dtype == DType::F8_E4M3) {
    describe_fp8(model, key, linear);
    linear.device_bytes += bias_bytes;
    return linear;
  }
  const io::ModelTensors::Located weight =
      tensors.require(key + ".weight", {DType::F16, DType::BF16, DType::F32}, {out, in});
  linear.format = LinearFormat::Dense;
  linear.dtype = weight.info->dtype;
  linear.bits_per_weight = double(kernels::dtype_size(linear.dtype)) * 8.0;
  linear.device_bytes = static_cast<std::int64_t>(weight.info->bytes) + bias_bytes;
  return linear;
}

NormDescription describe_norm(const ModelDescription& model, const std::string& name,
                              std::int64_t width) {
  const io::ModelTensors::Located norm =
      model.tensors.require(name + ".weight", {DType::F16, DType::BF16, DType::F32}, {width});
  NormDescription description;
  description.name = name;
  description.dtype = norm.info->dtype;
  description.width = width;
  description.bytes = model.config.norm_weight_offset != 0.0
                          ? width * 4
                          : static_cast<std::int64_t>(norm.info->bytes);
  return description;
}

LayerDescription describe_layer(const ModelDescription& model, int index) {
  const ModelConfig& c = model.config;
  const LayerTensorNames names = model.architecture->layer(model.text_prefix, index);
  const std::int64_t hidden = c.hidden_size;
  const std::int64_t q_out = std::int64_t{c.num_heads} * c.head_dim;
  const std::int64_t kv_out = std::int64_t{c.num_kv_heads} * c.head_dim;
  LayerDescription layer;
  // Fused where the architecture names a fused tensor and the files hold
  // it; some converters write the parts apart, and those load as well.
  const bool fused_qkv = !names.qkv_proj.empty() && holds_linear(model.tensors, names.qkv_proj) &&
                         !holds_linear(model.tensors, names.q_proj);
  // First, so that a wrong head_dim is named as such rather than as the
  // first tensor of an unexpected shape.
  if (fused_qkv) {
    check_head_dim(model, names.qkv_proj, q_out + 2 * kv_out, 2 * kv_out);
  } else {
    check_head_dim(model, names.q_proj, q_out, 0);
  }

  layer.attention_norm = describe_norm(model, names.attention_norm, hidden);
  layer.mlp_norm = describe_norm(model, names.mlp_norm, hidden);
  if (!names.attention_output_norm.empty()) {
    layer.attention_output_norm = describe_norm(model, names.attention_output_norm, hidden);
    layer.mlp_output_norm = describe_norm(model, names.mlp_output_norm, hidden);
  }
  if (c.qk_norm) {
    // One weight of head_dim each, shared by every query (key) head.
    layer.q_norm = describe_norm(model, names.q_norm, c.head_dim);
    layer.k_norm = describe_norm(model, names.k_norm, c.head_dim);
  }

  if (fused_qkv) {
    layer.qkv =
        describe_linear(model, names.qkv_proj, hidden, q_out + 2 * kv_out, c.attention_bias);
  } else {
    layer.q = describe_linear(model, names.q_proj, hidden, q_out, c.attention_bias);
    layer.k = describe_linear(model, names.k_proj, hidden, kv_out, c.attention_bias);
    layer.v = describe_linear(model, names.v_proj, hidden, kv_out, c.attention_bias);
  }
  layer.o = describe_linear(model, names.o_proj, q_out, hidden, c.attention_output_bias);

  if (c.moe.sparse(static_cast<std::size_t>(index))) {
    // Routers stay dense in every format.
    layer.router = describe_linear(model, names.router, hidden, c.moe.experts, false);
    for (int e = 0; e < c.moe.experts; ++e)
      layer.experts.push_back(describe_expert(model, names, e));
    return layer;
  }
  const std::int64_t inner = c.intermediate_size;
  if (!names.gate_up_proj.empty() && holds_linear(model.tensors, names.gate_up_proj) &&
      !holds_linear(model.tensors, names.gate_proj)) {
    layer.gate_up = describe_linear(model, names.gate_up_proj, hidden, 2 * inner, c.mlp_bias);
  } else {
    layer.gate = describe_linear(model, names.gate_proj, hidden, inner, c.mlp_bias);
    layer.up = describe_linear(model, names.up_proj, hidden, inner, c.mlp_bias);
  }
  layer.down = describe_linear(model, names.down_proj, inner, hidden, c.mlp_bias);
  return layer;
}

}  // namespace quire::engine::detail
