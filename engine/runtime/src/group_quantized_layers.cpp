// AutoAWQ's GEMM checkpoints and compressed-tensors' integer weights
// (llm-compressor's W4A16, W8A16 and int8 schemes): which the config
// describes, which tensors each layer holds, and their repacking into GPTQ's
// layout, whose products (kernels/cpu/linear/src/linear_gptq.cpp,
// kernels/cuda/src/linear_gptq.cu) do the same arithmetic.

#include "group_quantized_layers.h"

#include "quire/engine/formats/awq_layout.h"
#include "quire/engine/formats/naive_quantized_layout.h"
#include "quire/engine/formats/pack_quantized_layout.h"
#include "quire/engine/model_error.h"

namespace quire::engine::detail {
namespace {

using kernels::DType;

// What Quire runs of compressed-tensors, for every refusal.
constexpr const char* kCompressedTensorsRuns =
    "Quire runs compressed-tensors' pack-quantized W4A16 and W8A16 (4- and 8-bit integer "
    "weights, symmetric or with zero points, in groups or per output row, with or without "
    "group actorder), naive-quantized int8 weights and float-quantized FP8 weights, each "
    "with activations in floating point";

formats::TensorView file_view(const io::ModelTensors& tensors, const std::string& name) {
  const io::ModelTensors::Located located = tensors.get(name);
  return formats::TensorView{located.info->dtype, located.info->shape,
                             located.file->data(*located.info)};
}

std::optional<formats::TensorView> file_view_if_present(const io::ModelTensors& tensors,
                                                        const std::string& name) {
  if (!tensors.contains(name)) return std::nullopt;
  return file_view(tensors, name);
}

// A tensor the format needs, or ModelError naming it.
formats::TensorView needed_file_view(const ModelDescription& model, const std::string& name,
                                     const char* format) {
  if (!model.tensors.contains(name)) {
    throw ModelError(model.directory.string() + ": no tensor " + name + ", which " + format +
                     " weights need; the model files are incomplete");
  }
  return file_view(model.tensors, name);
}

// compressed-tensors' _get_quant_compression_format (config/format.py):
// the format of a group that names none in a model that names none or
// "mixed-precision".
std::string inferred_format(const CompressedTensorsGroup& group) {
  const CompressedTensorsArgs& weights = *group.weights;
  if (weights.type == "float" && weights.num_bits == 4) return "nvfp4-pack-quantized";
  if (!group.input_activations) {
    const bool packable = weights.type == "int" && (weights.num_bits == 4 || weights.num_bits == 8);
    return packable ? "pack-quantized" : "naive-quantized";
  }
  if (weights.type == "float" && weights.num_bits == 8) return "float-quantized";
  if (weights.type == "int") return "int-quantized";
  return "naive-quantized";
}

std::string format_of(const QuantizationConfig& q, const CompressedTensorsGroup& group) {
  const std::string& named = group.format.empty() ? q.format : group.format;
  if (named.empty() || named == "mixed-precision" || named == "dense") {
    return inferred_format(group);
  }
  return named;
}

std::string describe_args(const CompressedTensorsArgs& args) {
  std::string text = std::to_string(args.num_bits) + "-bit " + args.type + " " + args.strategy;
  if (args.strategy == "group") text += " of " + std::to_string(args.group_size);
  if (!args.symmetric) text += ", asymmetric";
  if (!args.actorder.empty()) text += ", actorder " + args.actorder;
  return text;
}

// Why Quire cannot run the group, or empty.
std::string group_refusal(const std::string& format, const CompressedTensorsGroup& group) {
  const CompressedTensorsArgs& weights = *group.weights;
  const auto& inputs = group.input_activations;
  if (inputs && inputs->type == "int") {
    return "quantizes activations to " + std::to_string(inputs->num_bits) +
           "-bit integers (int-quantized activations, W" + std::to_string(weights.num_bits) + "A" +
           std::to_string(inputs->num_bits) + ")";
  }
  if (format == "pack-quantized") {
    if (weights.type != "int") return "packs " + weights.type + " weights";
    if (weights.num_bits != 4 && weights.num_bits != 8) {
      return "packs " + std::to_string(weights.num_bits) + "-bit weights";
    }
    if (weights.strategy != "group" && weights.strategy != "channel") {
      return "packs weights with strategy \"" + weights.strategy + "\"";
    }
    if (weights.strategy == "group" && weights.group_size <= 0) {
      return "packs weights in groups without a positive group_size";
    }
    if (!weights.actorder.empty() && weights.actorder != "group" && weights.actorder != "weight") {
      return "packs weights with actorder \"" + weights.actorder + "\"";
    }
    if (inputs) return "quantizes activations to " + inputs->type + " as well";
    return {};
  }
  if (format == "naive-quantized") {
    if (weights.type == "float" && weights.num_bits == 8) return {};  // FP8 in naive form
    if (weights.type != "int" || weights.num_bits > 8) {
      return "stores " + std::to_string(weights.num_bits) + "-bit " + weights.type + " weights";
    }
    if (weights.strategy != "tensor" && weights.strategy != "channel" &&
        weights.strategy != "group") {
      return "stores weights with strategy \"" + weights.strategy + "\"";
    }
    if (inputs) return "quantizes activations to " + inputs->type + " as well";
    return {};
  }
  if (format == "float-quantized") {
    if (weights.type != "float" || weights.num_bits != 8) {
      return "stores " + std::to_string(weights.num_bits) + "-bit " + weights.type + " weights";
    }
    return {};
  }
  return "is in the \"" + format + "\" format";
}

void refuse(const ModelDescription& model, const std::string& what) {
  throw ModelError(model.directory.string() + ": config.json's quantization_config " + what +
                   ", which Quire does not run. " + kCompressedTensorsRuns);
}

const CompressedTensorsArgs& scheme_of(const ModelDescription& model, const std::string& key,
                                       const char* tensors) {
  const CompressedTensorsGroup* group = model.config.quantization.group_for(key);
  if (group == nullptr || !group->weights) {
    throw ModelError(model.directory.string() + ": " + key + " holds " + tensors +
                     ", but config.json's quantization_config gives it no weight scheme (no "
                     "config_groups target matches it, or \"ignore\" names it)");
  }
  return *group->weights;
}

formats::PackQuantizedTensors pack_quantized_tensors(const ModelDescription& model,
                                                     const LinearDescription& linear) {
  const std::string& key = linear.key;
  formats::PackQuantizedTensors t;
  t.weight_packed = file_view(model.tensors, key + ".weight_packed");
  t.weight_scale = needed_file_view(model, key + ".weight_scale", "pack-quantized");
  t.weight_shape = needed_file_view(model, key + ".weight_shape", "pack-quantized");
  t.weight_zero_point = file_view_if_present(model.tensors, key + ".weight_zero_point");
  t.weight_g_idx = file_view_if_present(model.tensors, key + ".weight_g_idx");
  if (linear.has_bias) t.bias = file_view(model.tensors, key + ".bias");
  return t;
}

formats::PackQuantizedScheme pack_quantized_scheme(const CompressedTensorsArgs& args) {
  formats::PackQuantizedScheme scheme;
  scheme.bits = args.num_bits;
  scheme.symmetric = args.symmetric;
  scheme.per_channel = args.strategy == "channel";
  scheme.group_size = args.group_size;
  scheme.group_actorder = args.actorder == "group";
  return scheme;
}

formats::NaiveQuantizedTensors naive_quantized_tensors(const ModelDescription& model,
                                                       const LinearDescription& linear) {
  const std::string& key = linear.key;
  formats::NaiveQuantizedTensors t;
  t.weight = file_view(model.tensors, key + ".weight");
  t.weight_scale = needed_file_view(model, key + ".weight_scale", "int8");
  t.weight_zero_point = file_view_if_present(model.tensors, key + ".weight_zero_point");
  t.weight_g_idx = file_view_if_present(model.tensors, key + ".weight_g_idx");
  if (linear.has_bias) t.bias = file_view(model.tensors, key + ".bias");
  return t;
}

formats::NaiveQuantizedScheme naive_quantized_scheme(const CompressedTensorsArgs& args) {
  using Strategy = formats::NaiveQuantizedScheme::Strategy;
  formats::NaiveQuantizedScheme scheme;
  scheme.bits = args.num_bits;
  scheme.symmetric = args.symmetric;
  scheme.strategy = args.strategy == "tensor"    ? Strategy::tensor
                    : args.strategy == "channel" ? Strategy::channel
                                                 : Strategy::group;
  scheme.group_size = args.group_size;
  scheme.group_actorder = args.actorder == "group";
  return scheme;
}

formats::AwqTensors awq_tensors(const ModelDescription& model, const LinearDescription& linear) {
  const std::string& key = linear.key;
  formats::AwqTensors t;
  t.qweight = file_view(model.tensors, key + ".qweight");
  t.qzeros = needed_file_view(model, key + ".qzeros", "AWQ");
  t.scales = needed_file_view(model, key + ".scales", "AWQ");
  if (linear.has_bias) t.bias = file_view(model.tensors, key + ".bias");
  return t;
}

formats::AwqOptions awq_options(const QuantizationConfig& q) {
  formats::AwqOptions options;
  if (q.bits != 0) options.bits = q.bits;
  options.group_size = q.group_size;
  return options;
}

}  // namespace

void check_quantization_supported(const ModelDescription& model) {
  const QuantizationConfig& q = model.config.quantization;
  const std::string where = model.directory.string() + ": config.json's quantization_config ";
  if (q.method == "awq") {
    if (!q.version.empty() && q.version != "gemm") {
      throw ModelError(where + "is AWQ in AutoAWQ's \"" + q.version +
                       "\" layout, which Quire does not run; Quire runs AWQ checkpoints in the "
                       "GEMM layout (\"version\": \"gemm\"), the one AutoAWQ writes by default");
    }
    if (q.bits != 0 && q.bits != 4) {
      throw ModelError(where + "is " + std::to_string(q.bits) +
                       "-bit AWQ, which Quire does not run; AutoAWQ's GEMM layout is 4-bit");
    }
    if (!q.zero_point) {
      throw ModelError(where +
                       "is AWQ without zero points (\"zero_point\": false), which "
                       "AutoAWQ's GEMM layout does not write; Quire runs AWQ with them");
    }
  }
  if (q.method == "gptq" && q.bits != 0 && q.bits != 4 && q.bits != 8) {
    throw ModelError(where + "is " + std::to_string(q.bits) +
                     "-bit GPTQ, which Quire does not run; Quire runs 4- and 8-bit GPTQ");
  }
  if (q.method != "compressed-tensors") return;
  static constexpr const char* kRunnable[] = {
      "", "dense", "mixed-precision", "pack-quantized", "naive-quantized", "float-quantized"};
  if (std::find(std::begin(kRunnable), std::end(kRunnable), q.format) == std::end(kRunnable)) {
    refuse(model, "is compressed-tensors in the \"" + q.format + "\" format");
  }
  for (const CompressedTensorsGroup& group : q.groups) {
    if (!group.weights) continue;
    const std::string format = format_of(q, group);
    const std::string why = group_refusal(format, group);
    if (why.empty()) continue;
    refuse(model, "is compressed-tensors whose config_groups." + group.name + " (" +
                      describe_args(*group.weights) + ", " + format + ") " + why);
  }
}

bool describe_group_quantized(const ModelDescription& model, const std::string& key,
                              LinearDescription& linear) {
  const io::ModelTensors& tensors = model.tensors;
  const QuantizationConfig& q = model.config.quantization;
  const formats::LinearShape shape{linear.in_features, linear.out_features};
  const std::int64_t bias_bytes =
      linear.has_bias ? static_cast<std::int64_t>(tensors.get(key + ".bias").info->bytes) : 0;
  if (tensors.contains(key + ".qweight") && q.method == "awq") {
    linear.format = LinearFormat::Awq;
    linear.gptq = formats::describe_awq(key, awq_tensors(model, linear), awq_options(q), shape);
  } else if (tensors.contains(key + ".weight_packed")) {
    const CompressedTensorsArgs& args = scheme_of(model, key, "pack-quantized weights");
    linear.format = LinearFormat::PackQuantized;
    linear.gptq = formats::describe_pack_quantized(key, pack_quantized_tensors(model, linear),
                                                   pack_quantized_scheme(args), shape);
  } else if (auto weight = tensors.find(key + ".weight");
             weight && weight->info->dtype == DType::I8) {
    const CompressedTensorsArgs& args = scheme_of(model, key, "int8 weights");
    linear.format = LinearFormat::NaiveQuantized;
    linear.gptq = formats::describe_naive_quantized(key, naive_quantized_tensors(model, linear),
                                                    naive_quantized_scheme(args), shape);
  } else {
    return false;
  }
  linear.device_bytes = linear.gptq->device_bytes() + bias_bytes;
  linear.bits_per_weight = linear.gptq->bits_per_weight();
  return true;
}

formats::GptqRepacked repack_group_quantized(const ModelDescription& model,
                                             const LinearDescription& linear) {
  const formats::GptqLayout& layout = *linear.gptq;
  switch (linear.format) {
    case LinearFormat::Awq:
      return formats::repack_awq(layout, awq_tensors(model, linear));
    case LinearFormat::PackQuantized:
      return formats::repack_pack_quantized(layout, pack_quantized_tensors(model, linear));
    case LinearFormat::NaiveQuantized:
      return formats::repack_naive_quantized(layout, naive_quantized_tensors(model, linear));
    default:
      break;
  }
  throw std::logic_error(linear.key + " is not a repacked format");
}

}  // namespace quire::engine::detail
