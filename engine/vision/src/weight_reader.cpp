#include "weight_reader.h"

#include <cstring>
#include <span>

#include "quire/engine/model_error.h"
#include "quire/kernels/cpu/half.h"

namespace quire::engine::vision::detail {
namespace {

using kernels::DType;

// What each format stores in place of a dense ".weight".
constexpr const char* kQuantizedSuffixes[] = {".q_weight", ".qweight", ".trellis",
                                              ".weight_packed"};

std::vector<float> widen(std::span<const std::byte> bytes, DType dtype) {
  const std::size_t count = bytes.size() / kernels::dtype_size(dtype);
  std::vector<float> values(count);
  if (dtype == DType::F32) {
    std::memcpy(values.data(), bytes.data(), bytes.size());
    return values;
  }
  for (std::size_t i = 0; i < count; ++i) {
    std::uint16_t bits = 0;
    std::memcpy(&bits, bytes.data() + 2 * i, 2);
    values[i] = dtype == DType::BF16 ? kernels::bf16_to_float(bits) : kernels::half_to_float(bits);
  }
  return values;
}

}  // namespace

void check_tower_tensor_present(const io::ModelTensors& tensors, const std::string& name) {
  if (tensors.contains(name)) return;
  const std::string where = tensors.directory().string() + ": ";
  if (name.ends_with(".weight")) {
    const std::string base = name.substr(0, name.size() - 7);
    for (const char* suffix : kQuantizedSuffixes) {
      if (tensors.contains(base + suffix)) {
        throw ModelError(where + base + " is quantized (" + base + suffix +
                         "); Quire runs the vision tower from FP16, BF16 or FP32 weights, as "
                         "the published conversions keep it");
      }
    }
  }
  throw ModelError(where + "the vision tower has no tensor " + name +
                   "; the download is incomplete or does not match config.json's vision_config");
}

void count_tower_tensor(const io::ModelTensors& tensors, const std::string& name,
                        const std::vector<std::int64_t>& shape, bool widened,
                        VisionTensorSummary& summary) {
  const io::ModelTensors::Located located =
      tensors.require(name, {DType::F16, DType::BF16, DType::F32}, shape);
  const auto elements = static_cast<std::int64_t>(located.info->elements());
  const auto bytes = static_cast<std::int64_t>(located.info->bytes);
  summary.parameters += elements;
  summary.bytes += bytes;
  summary.memory_bytes += widened ? 4 * elements : bytes;
}

std::vector<float> WeightReader::floats(const std::string& name) const {
  const io::ModelTensors::Located located = tensors_.get(name);
  return widen(located.file->data(*located.info), located.info->dtype);
}

LayerNormWeights WeightReader::layer_norm(const std::string& key) const {
  return {floats(key + ".weight"), floats(key + ".bias")};
}

DenseLinear WeightReader::linear(const std::string& key, bool with_bias) const {
  const io::ModelTensors::Located located = tensors_.get(key + ".weight");
  const std::span<const std::byte> bytes = located.file->data(*located.info);
  DenseLinear linear;
  linear.dtype = located.info->dtype;
  linear.out_features = located.info->shape.front();
  linear.in_features = located.info->elements() / linear.out_features;
  linear.weight.assign(bytes.begin(), bytes.end());
  if (with_bias) linear.bias = floats(key + ".bias");
  return linear;
}

DenseLinear WeightReader::transposed(const std::string& name) const {
  const io::ModelTensors::Located located = tensors_.get(name);
  const std::span<const std::byte> bytes = located.file->data(*located.info);
  const std::int64_t rows = located.info->shape[0];
  const std::int64_t columns = located.info->shape[1];
  const std::size_t size = kernels::dtype_size(located.info->dtype);
  DenseLinear linear;
  linear.dtype = located.info->dtype;
  linear.in_features = rows;
  linear.out_features = columns;
  linear.weight.resize(bytes.size());
  for (std::int64_t r = 0; r < rows; ++r) {
    for (std::int64_t c = 0; c < columns; ++c) {
      std::memcpy(linear.weight.data() + std::size_t(c * rows + r) * size,
                  bytes.data() + std::size_t(r * columns + c) * size, size);
    }
  }
  return linear;
}

}  // namespace quire::engine::vision::detail
