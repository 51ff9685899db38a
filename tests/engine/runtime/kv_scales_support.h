#pragma once

// Checkpoints in llm-compressor's layout for the calibrated K/V scale tests,
// written from compressed-tensors' documented format rather than by Quire's
// own writer: the k_scale / v_scale tensors inside model.safetensors, beside
// the weights, and quantization_config.kv_cache_scheme in config.json.

#include <QJsonObject>
#include <filesystem>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "quire/kernels/dtype.h"

namespace quire::test {

struct StoredTensor {
  kernels::DType dtype = kernels::DType::F32;
  std::vector<std::int64_t> shape;
  std::vector<std::byte> bytes;
};
using StoredTensors = std::map<std::string, StoredTensor>;

// Every tensor of dir/model.safetensors, and the file rewritten from them.
StoredTensors read_model_tensors(const std::filesystem::path& dir);
void write_model_tensors(const std::filesystem::path& dir, const StoredTensors& tensors);

// A tensor of `values` in `dtype` (F32, F16 or BF16, rounded to nearest).
StoredTensor scale_tensor(kernels::DType dtype, std::vector<std::int64_t> shape,
                          const std::vector<float>& values);

// The value a float becomes in `dtype` and back.
float rounded_to(kernels::DType dtype, float value);

// config.json's quantization_config replaced by `quantization` (removed when empty).
void set_quantization_config(const std::filesystem::path& dir, const QJsonObject& quantization);

// llm-compressor's FP8 scheme: num_bits 8, float, `strategy`, static, symmetric.
QJsonObject fp8_scheme(const QString& strategy);
QJsonObject compressed_tensors_config(const QJsonObject& kv_cache_scheme);

// Multiplies output rows [0, rows) of every layer's k_proj (FP16 or BF16
// weights) by `factor`: a few key channels far larger than the rest, as
// real models' keys have.
void amplify_key_channels(const std::filesystem::path& dir, int layers, int rows, float factor);

// A copy of directory `from` at `to`.
void copy_model(const std::filesystem::path& from, const std::filesystem::path& to);

}  // namespace quire::test
