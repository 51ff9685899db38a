#include "kv_scales_support.h"

#include <QFile>
#include <QJsonDocument>
#include <cstring>
#include <stdexcept>

#include "quire/engine/io/safetensors_file.h"
#include "quire/engine/io/safetensors_writer.h"
#include "quire/kernels/cpu/half.h"

namespace quire::test {

namespace fs = std::filesystem;

StoredTensors read_model_tensors(const fs::path& dir) {
  StoredTensors tensors;
  const engine::io::SafetensorsFile file =
      engine::io::SafetensorsFile::open(dir / "model.safetensors");
  for (const engine::io::TensorInfo& info : file.tensors()) {
    const std::span<const std::byte> data = file.data(info);
    tensors[info.name] = StoredTensor{info.dtype, info.shape, {data.begin(), data.end()}};
  }
  return tensors;
}

void write_model_tensors(const fs::path& dir, const StoredTensors& tensors) {
  engine::io::SafetensorsWriter writer;
  for (const auto& [name, tensor] : tensors)
    writer.add(name, tensor.dtype, tensor.shape, std::span<const std::byte>(tensor.bytes));
  writer.write(dir / "model.safetensors");
}

float rounded_to(kernels::DType dtype, float value) {
  if (dtype == kernels::DType::F16) return kernels::half_to_float(kernels::float_to_half(value));
  if (dtype == kernels::DType::BF16) return kernels::bf16_to_float(kernels::float_to_bf16(value));
  return value;
}

StoredTensor scale_tensor(kernels::DType dtype, std::vector<std::int64_t> shape,
                          const std::vector<float>& values) {
  StoredTensor tensor{dtype, std::move(shape), {}};
  tensor.bytes.resize(values.size() * kernels::dtype_size(dtype));
  for (std::size_t i = 0; i < values.size(); ++i) {
    if (dtype == kernels::DType::F32) {
      std::memcpy(tensor.bytes.data() + i * 4, &values[i], 4);
    } else {
      const std::uint16_t bits = dtype == kernels::DType::F16 ? kernels::float_to_half(values[i])
                                                              : kernels::float_to_bf16(values[i]);
      std::memcpy(tensor.bytes.data() + i * 2, &bits, 2);
    }
  }
  return tensor;
}

void set_quantization_config(const fs::path& dir, const QJsonObject& quantization) {
  const QString path = QString::fromStdString((dir / "config.json").string());
  QFile file(path);
  if (!file.open(QIODevice::ReadOnly)) throw std::runtime_error("cannot read config.json");
  QJsonObject config = QJsonDocument::fromJson(file.readAll()).object();
  file.close();
  if (quantization.isEmpty()) {
    config.remove(QStringLiteral("quantization_config"));
  } else {
    config[QStringLiteral("quantization_config")] = quantization;
  }
  if (!file.open(QIODevice::WriteOnly | QIODevice::Truncate)) {
    throw std::runtime_error("cannot write config.json");
  }
  file.write(QJsonDocument(config).toJson());
}

QJsonObject fp8_scheme(const QString& strategy) {
  return QJsonObject{{"num_bits", 8},       {"type", "float"},   {"strategy", strategy},
                     {"dynamic", false},    {"symmetric", true}, {"group_size", QJsonValue::Null},
                     {"observer", "minmax"}};
}

QJsonObject compressed_tensors_config(const QJsonObject& kv_cache_scheme) {
  return QJsonObject{{"quant_method", "compressed-tensors"},
                     {"format", "dense"},
                     {"quantization_status", "compressed"},
                     {"config_groups", QJsonObject{}},
                     {"kv_cache_scheme", kv_cache_scheme}};
}

void amplify_key_channels(const fs::path& dir, int layers, int rows, float factor) {
  StoredTensors tensors = read_model_tensors(dir);
  for (int layer = 0; layer < layers; ++layer) {
    StoredTensor& weight =
        tensors.at("model.layers." + std::to_string(layer) + ".self_attn.k_proj.weight");
    if (weight.dtype != kernels::DType::F16 && weight.dtype != kernels::DType::BF16) {
      throw std::runtime_error("amplify_key_channels takes FP16 or BF16 weights");
    }
    const auto columns = static_cast<std::size_t>(weight.shape.at(1));
    for (std::size_t i = 0; i < static_cast<std::size_t>(rows) * columns; ++i) {
      std::uint16_t bits = 0;
      std::memcpy(&bits, weight.bytes.data() + i * 2, 2);
      if (weight.dtype == kernels::DType::F16) {
        bits = kernels::float_to_half(kernels::half_to_float(bits) * factor);
      } else {
        bits = kernels::float_to_bf16(kernels::bf16_to_float(bits) * factor);
      }
      std::memcpy(weight.bytes.data() + i * 2, &bits, 2);
    }
  }
  write_model_tensors(dir, tensors);
}

void copy_model(const fs::path& from, const fs::path& to) {
  fs::copy(from, to, fs::copy_options::recursive);
}

}  // namespace quire::test
