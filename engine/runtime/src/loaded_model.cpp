#include "quire/engine/runtime/loaded_model.h"

#include <cstring>
#include <string>

#include "group_quantized_layers.h"
#include "quire/engine/model_error.h"
#include "quire/kernels/cpu/half.h"

namespace quire::engine {
namespace {

// Element i of F32, BF16 or F16 values.
float read_float(std::span<const std::byte> data, std::size_t i, kernels::DType dtype) {
  float value = 0.0f;
  std::uint16_t bits = 0;
  switch (dtype) {
    case kernels::DType::F32:
      std::memcpy(&value, data.data() + 4 * i, 4);
      return value;
    case kernels::DType::BF16:
      std::memcpy(&bits, data.data() + 2 * i, 2);
      return kernels::bf16_to_float(bits);
    default:
      std::memcpy(&bits, data.data() + 2 * i, 2);
      return kernels::half_to_float(bits);
  }
}

// Copies tensors from the mapped files to devices, counting progress.
class Uploader {
 public:
  Uploader(const ModelDescription& model, kernels::Backend& backend,
           std::vector<kernels::DeviceBuffer>& buffers, std::vector<std::int64_t>& device_bytes,
           const LoadOptions& options)
      : model_(model),
        backend_(backend),
        buffers_(buffers),
        device_bytes_(device_bytes),
        options_(options) {
    total_ = static_cast<std::int64_t>(model.tensors.total_bytes());
  }

  // The tensors of one layer share one allocation of `bytes` (plus alignment):
  // one device allocation per layer instead of dozens, and the weights that
  // a decode step streams through lie together (a CPU device then backs a
  // large layer with 2 MiB pages). Tensors that do not fit get their own.
  void begin_layer(int device, std::int64_t bytes) {
    const auto size = static_cast<std::size_t>(bytes) + kLayerSlack;
    layer_ = backend_.allocate(device, size, "weights");
    layer_used_ = 0;
  }

  void end_layer() {
    if (layer_) buffers_.push_back(std::move(layer_));
    layer_ = kernels::DeviceBuffer();
  }

  const void* bytes(int device, std::span<const std::byte> data) {
    if (options_.cancel && options_.cancel->load()) throw LoadCancelled();
    void* target = nullptr;
    if (layer_ && layer_.device() == device && layer_used_ + data.size() <= layer_.bytes()) {
      target = layer_.as<std::byte>() + layer_used_;
      layer_used_ =
          (layer_used_ + data.size() + kTensorAlignment - 1) / kTensorAlignment * kTensorAlignment;
    } else {
      buffers_.push_back(backend_.allocate(device, data.size(), "weights"));
      target = buffers_.back().data();
    }
    backend_.copy(target, device, data.data(), -1, data.size());
    if (static_cast<std::size_t>(device) >= device_bytes_.size()) device_bytes_.resize(device + 1);
    device_bytes_[static_cast<std::size_t>(device)] += static_cast<std::int64_t>(data.size());
    done_ += static_cast<std::int64_t>(data.size());
    if (options_.progress) options_.progress(std::min(done_, total_), total_);
    return target;
  }

  const void* tensor(int device, const std::string& name) {
    return bytes(device, model_.tensors.data(name));
  }

  kernels::DenseWeight dense(int device, const std::string& name) {
    return kernels::DenseWeight{tensor(device, name), model_.tensors.get(name).info->dtype};
  }

  // A norm's weights; where the architecture uses them as (1 + w), widened
  // to F32 with the 1 added here, once, as transformers adds it in FP32.
  kernels::DenseWeight norm(int device, const NormDescription& description) {
    if (!description) return {};
    const std::string name = description.name + ".weight";
    const double offset = model_.config.norm_weight_offset;
    if (offset == 0.0) return dense(device, name);
    const io::ModelTensors::Located located = model_.tensors.get(name);
    const std::span<const std::byte> data = model_.tensors.data(name);
    std::vector<float> widened(data.size() / kernels::dtype_size(located.info->dtype));
    for (std::size_t i = 0; i < widened.size(); ++i)
      widened[i] = static_cast<float>(offset) + read_float(data, i, located.info->dtype);
    return kernels::DenseWeight{values(device, widened), kernels::DType::F32};
  }

  // An FP8 weight's scales in F32, one per output row (a tensor's one scale
  // repeated).
  std::vector<float> fp8_row_scales(const LinearDescription& description) {
    const std::span<const std::byte> data = model_.tensors.data(description.key + ".weight_scale");
    std::vector<float> scales(static_cast<std::size_t>(description.out_features));
    for (std::size_t n = 0; n < scales.size(); ++n) {
      const std::size_t i = description.scale_per_row ? n : 0;
      scales[n] = read_float(data, i, description.scale_dtype);
    }
    return scales;
  }

  // AWQ and compressed-tensors' integer weights, rewritten into GPTQ's
  // layout one layer at a time (the host copy lives only for the upload).
  kernels::GptqWeight repacked(int device, const LinearDescription& description) {
    const formats::GptqLayout& layout = *description.gptq;
    const formats::GptqRepacked packed = detail::repack_group_quantized(model_, description);
    kernels::GptqWeight gptq;
    gptq.qweight = values(device, packed.qweight);
    gptq.qzeros = layout.symmetric ? nullptr : values(device, packed.qzeros);
    gptq.scales = values(device, packed.scales);
    gptq.scale_dtype = layout.scale_dtype;
    gptq.g_idx = layout.g_idx.empty() ? nullptr : values(device, layout.g_idx);
    gptq.groups = layout.groups;
    gptq.group_size = layout.group_size;
    gptq.exact_zeros = layout.exact_zeros;
    gptq.bits = layout.bits;
    return gptq;
  }

  template <typename T>
  const T* values(int device, const std::vector<T>& host) {
    return static_cast<const T*>(
        bytes(device, std::as_bytes(std::span<const T>(host.data(), host.size()))));
  }

  kernels::LinearWeight linear(int device, const LinearDescription& description) {
    kernels::LinearWeight weight;
    weight.in_features = description.in_features;
    weight.out_features = description.out_features;
    const std::string& key = description.key;
    switch (description.format) {
      case LinearFormat::Dense:
        weight.format = dense(device, key + ".weight");
        break;
      case LinearFormat::Exl2: {
        const formats::Exl2Layout& layout = *description.exl2;
        kernels::Exl2Weight exl2;
        exl2.q_weight = static_cast<const std::uint32_t*>(tensor(device, key + ".q_weight"));
        exl2.q_scale = static_cast<const std::uint32_t*>(tensor(device, key + ".q_scale"));
        exl2.q_scale_max = static_cast<const std::uint16_t*>(tensor(device, key + ".q_scale_max"));
        exl2.perm = values(device, layout.perm);
        exl2.groups = layout.groups;
        exl2.q_columns = layout.q_columns;
        weight.format = std::move(exl2);
        break;
      }
      case LinearFormat::Gptq: {
        const formats::GptqLayout& layout = *description.gptq;
        kernels::GptqWeight gptq;
        gptq.qweight = static_cast<const std::uint32_t*>(tensor(device, key + ".qweight"));
        gptq.qzeros = static_cast<const std::uint32_t*>(tensor(device, key + ".qzeros"));
        gptq.scales = static_cast<const std::uint16_t*>(tensor(device, key + ".scales"));
        gptq.g_idx = layout.g_idx.empty() ? nullptr : values(device, layout.g_idx);
        gptq.groups = layout.groups;
        gptq.group_size = layout.group_size;
        gptq.exact_zeros = layout.exact_zeros;
        gptq.bits = layout.bits;
        weight.format = gptq;
        break;
      }
      case LinearFormat::Awq:
      case LinearFormat::PackQuantized:
      case LinearFormat::NaiveQuantized:
        weight.format = repacked(device, description);
        break;
      case LinearFormat::Exl3: {
        const formats::Exl3Layout& layout = *description.exl3;
        kernels::Exl3Weight exl3;
        exl3.trellis = static_cast<const std::uint16_t*>(tensor(device, key + ".trellis"));
        // Signs unpacked from an older converter's su / sv, else the files' own.
        exl3.suh = layout.suh.empty()
                       ? static_cast<const std::uint16_t*>(tensor(device, key + ".suh"))
                       : values(device, layout.suh);
        exl3.svh = layout.svh.empty()
                       ? static_cast<const std::uint16_t*>(tensor(device, key + ".svh"))
                       : values(device, layout.svh);
        exl3.bits = layout.bits;
        exl3.codebook = layout.codebook;
        exl3.padded_in = layout.padded_in;
        exl3.padded_out = layout.padded_out;
        weight.format = exl3;
        break;
      }
      case LinearFormat::Fp8: {
        kernels::Fp8Weight fp8;
        fp8.data = static_cast<const std::uint8_t*>(tensor(device, key + ".weight"));
        fp8.scales = values(device, fp8_row_scales(description));
        weight.format = fp8;
        break;
      }
    }
    if (description.has_bias) {
      weight.bias = tensor(device, key + ".bias");
      weight.bias_dtype = description.bias_dtype;
    }
    return weight;
  }

 private:
  // Every tensor of a layer starts on a cache line (and a vector load).
  static constexpr std::size_t kTensorAlignment = 64;
  // Room for the alignment of a layer's tensors (a few dozen at most).
  static constexpr std::size_t kLayerSlack = 64 * kTensorAlignment;

  const ModelDescription& model_;
  kernels::Backend& backend_;
  std::vector<kernels::DeviceBuffer>& buffers_;
  std::vector<std::int64_t>& device_bytes_;
  const LoadOptions& options_;
  std::int64_t done_ = 0;
  std::int64_t total_ = 0;
  kernels::DeviceBuffer layer_;
  std::size_t layer_used_ = 0;
};

}  // namespace

LoadedModel LoadedModel::load(const ModelDescription& model, kernels::Backend& backend,
                              std::span<const int> module_devices, const LoadOptions& options) {
  const std::size_t layer_count = model.layers.size();
  if (module_devices.size() != layer_count + 2) {
    throw std::invalid_argument("a placement needs one device per module (" +
                                std::to_string(layer_count + 2) + ")");
  }
  LoadedModel loaded;
  Uploader upload(model, backend, loaded.buffers_, loaded.device_bytes, options);

  loaded.head_device = module_devices.back();
  // A tied table is stored once, with the head; the lookup runs there too.
  loaded.embedding_device = model.head_tied ? loaded.head_device : module_devices.front();
  loaded.embedding = upload.dense(loaded.embedding_device, model.embedding_name + ".weight");

  for (std::size_t i = 0; i < layer_count; ++i) {
    const int device = module_devices[i + 1];
    const LayerDescription& description = model.layers[i];
    LoadedLayer layer;
    layer.device = device;
    upload.begin_layer(device, description.device_bytes());
    layer.attention_norm = upload.norm(device, description.attention_norm);
    layer.attention_output_norm = upload.norm(device, description.attention_output_norm);
    layer.mlp_norm = upload.norm(device, description.mlp_norm);
    layer.mlp_output_norm = upload.norm(device, description.mlp_output_norm);
    layer.q_norm = upload.norm(device, description.q_norm);
    layer.k_norm = upload.norm(device, description.k_norm);
    if (description.qkv) {
      layer.qkv = upload.linear(device, *description.qkv);
    } else {
      layer.q = upload.linear(device, description.q);
      layer.k = upload.linear(device, description.k);
      layer.v = upload.linear(device, description.v);
    }
    layer.o = upload.linear(device, description.o);
    if (description.router) {
      layer.router = upload.linear(device, *description.router);
      for (const ExpertDescription& expert : description.experts) {
        layer.experts.push_back(LoadedExpert{upload.linear(device, expert.gate),
                                             upload.linear(device, expert.up),
                                             upload.linear(device, expert.down)});
      }
    } else {
      if (description.gate_up) {
        layer.gate_up = upload.linear(device, *description.gate_up);
      } else {
        layer.gate = upload.linear(device, description.gate);
        layer.up = upload.linear(device, description.up);
      }
      layer.down = upload.linear(device, description.down);
    }
    upload.end_layer();
    loaded.layers.push_back(std::move(layer));
  }

  loaded.final_norm = upload.norm(loaded.head_device, model.final_norm);
  if (model.head_tied) {
    loaded.head.in_features = model.config.hidden_size;
    loaded.head.out_features = model.config.vocab_size;
    loaded.head.format = loaded.embedding;
  } else {
    loaded.head = upload.linear(loaded.head_device, model.head);
  }
  return loaded;
}

}  // namespace quire::engine
