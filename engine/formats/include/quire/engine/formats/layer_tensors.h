#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "quire/kernels/dtype.h"

namespace quire::engine::formats {

// One tensor of a layer in host memory, as a model file holds it. `bytes` must
// hold exactly product(shape) * dtype_size(dtype) bytes; it may sit at any
// alignment (safetensors does not align its tensors).
struct TensorView {
  kernels::DType dtype = kernels::DType::F32;
  std::vector<std::int64_t> shape;
  std::span<const std::byte> bytes;

  std::int64_t elements() const;
};

// What the caller knows of a layer's shape from config.json; 0 leaves a
// dimension to be taken from the tensors.
struct LinearShape {
  std::int64_t in_features = 0;   // K
  std::int64_t out_features = 0;  // N
};

// A tensor produced by a writer, named by its suffix after the layer key
// ("q_weight" for "<key>.q_weight"), ready for io::SafetensorsWriter::add.
struct NamedTensor {
  std::string suffix;
  kernels::DType dtype = kernels::DType::F32;
  std::vector<std::int64_t> shape;
  std::vector<std::byte> bytes;
};

// "[64, 32]"
std::string format_shape(std::span<const std::int64_t> shape);

}  // namespace quire::engine::formats
