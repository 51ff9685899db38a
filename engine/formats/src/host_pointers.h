#pragma once

// Typed pointers into host-resident tensors, for descriptors the CPU backend
// reads in place.

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>

#include "quire/engine/formats/layer_tensors.h"
#include "quire/kernels/linear_weight.h"

namespace quire::engine::formats::detail {

template <typename T>
const T* host_pointer(const TensorView& view, const char* name) {
  if (reinterpret_cast<std::uintptr_t>(view.bytes.data()) % alignof(T) != 0) {
    throw std::invalid_argument(std::string(name) + " is not aligned for its element type");
  }
  return reinterpret_cast<const T*>(view.bytes.data());
}

inline void set_host_bias(kernels::LinearWeight& weight, const std::optional<TensorView>& bias) {
  if (!bias) return;
  weight.bias_dtype = bias->dtype;
  weight.bias = bias->dtype == kernels::DType::F32
                    ? static_cast<const void*>(host_pointer<float>(*bias, "bias"))
                    : static_cast<const void*>(host_pointer<std::uint16_t>(*bias, "bias"));
}

}  // namespace quire::engine::formats::detail
