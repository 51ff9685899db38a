#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

namespace quire::kernels {

// Element types of tensors in model files and device buffers. F8_E4M3 is
// the OCP 8-bit float with 4 exponent and 3 mantissa bits that FP8
// checkpoints store (PyTorch's float8_e4m3fn: no infinities, S.1111.111 is
// NaN, largest 448). I64 and I8 are what compressed-tensors checkpoints add:
// a weight's `weight_shape` (I64) and int8 weights and zero points (I8).
enum class DType : std::uint8_t { F32, F16, BF16, I32, I16, U8, F8_E4M3, I64, I8 };

constexpr std::size_t dtype_size(DType type) {
  switch (type) {
    case DType::I64:
      return 8;
    case DType::F32:
    case DType::I32:
      return 4;
    case DType::F16:
    case DType::BF16:
    case DType::I16:
      return 2;
    case DType::U8:
    case DType::I8:
    case DType::F8_E4M3:
      return 1;
  }
  return 0;
}

// safetensors spelling: "F32", "F16", "BF16", "I32", "I16", "U8", "F8_E4M3",
// "I64", "I8".
constexpr std::string_view dtype_name(DType type) {
  switch (type) {
    case DType::F32:
      return "F32";
    case DType::F16:
      return "F16";
    case DType::BF16:
      return "BF16";
    case DType::I32:
      return "I32";
    case DType::I16:
      return "I16";
    case DType::U8:
      return "U8";
    case DType::F8_E4M3:
      return "F8_E4M3";
    case DType::I64:
      return "I64";
    case DType::I8:
      return "I8";
  }
  return "?";
}

constexpr std::optional<DType> parse_dtype(std::string_view name) {
  for (DType type : {DType::F32, DType::F16, DType::BF16, DType::I32, DType::I16, DType::U8,
                     DType::F8_E4M3, DType::I64, DType::I8}) {
    if (dtype_name(type) == name) return type;
  }
  return std::nullopt;
}

}  // namespace quire::kernels
