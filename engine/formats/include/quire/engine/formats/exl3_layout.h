#pragma once

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "quire/engine/formats/layer_tensors.h"
#include "quire/kernels/linear_weight.h"

namespace quire::engine::formats {

// The tensors of one EXL3 layer "<key>.trellis" etc., as exllamav3 writes
// them (modules/quant/exl3.py, exl3_lib/quantize.py). Kp and Np are the
// inputs and outputs padded to multiples of 128.
struct Exl3Tensors {
  TensorView trellis;              // I16 [Kp / 16, Np / 16, 16 * bits]
  std::optional<TensorView> suh;   // F16 [Kp]
  std::optional<TensorView> svh;   // F16 [Np]
  std::optional<TensorView> su;    // I16 [Kp / 16]: packed signs, older converters
  std::optional<TensorView> sv;    // I16 [Np / 16]
  std::optional<TensorView> mcg;   // I32 scalar: the MCG codebook's multiplier
  std::optional<TensorView> mul1;  // I32 scalar: the MUL1 codebook's multiplier
  std::optional<TensorView> bias;  // F16, BF16 or F32 [N] or [Np]
};

// The tensor names an EXL3 layer may have after its key; any other tensor
// under the key is a part of the format Quire does not know.
inline constexpr std::string_view kExl3TensorSuffixes[] = {"trellis", "suh", "svh",  "su",
                                                           "sv",      "mcg", "mul1", "bias"};

struct Exl3Layout {
  std::int64_t in_features = 0;   // K
  std::int64_t out_features = 0;  // N
  std::int64_t padded_in = 0;     // Kp
  std::int64_t padded_out = 0;    // Np
  int bits = 0;                   // K of the trellis code, 1 to 8
  kernels::Exl3Codebook codebook = kernels::Exl3Codebook::three_inst;
  // FP16 signs unpacked from su / sv where the files hold those instead of
  // suh / svh; empty otherwise.
  std::vector<std::uint16_t> suh;
  std::vector<std::uint16_t> svh;

  // Trellis bits per weight of K x N (padding and the scale vectors counted).
  double bits_per_weight() const;
};

// Inputs or outputs as the converter pads them: rounded up to a multiple of
// 128, the Hadamard rotations' block.
constexpr std::int64_t exl3_padded(std::int64_t features) {
  return (features + 127) / 128 * 128;
}

// "3INST", "MCG" or "MUL1", as exllamav3 names them.
const char* exl3_codebook_name(kernels::Exl3Codebook codebook);

// Checks the tensors against each other and against the layer's shape:
// trellis is I16 [Kp / 16, Np / 16, 16 * bits] with bits 1 to 8, Kp and Np the
// layer's inputs and outputs rounded up to 128 (the converter's padding);
// suh / svh (or the packed su / sv) match them and are finite; at most one
// of mcg and mul1, holding exllamav3's multiplier; the bias has N or Np
// elements. Without `shape`, K and N are Kp and Np (or N the bias's).
// Throws ModelError naming `key`, the tensor and what was expected.
Exl3Layout describe_exl3(std::string_view key, const Exl3Tensors& tensors,
                         const LinearShape& shape = {});

// A weight descriptor over host-resident tensors, for the CPU backend. It
// points into the tensors' bytes (and the layout's unpacked signs, which must
// outlive it); throws std::invalid_argument when a tensor is not aligned for
// its element type (copy it first).
kernels::LinearWeight host_linear_weight(const Exl3Layout& layout, const Exl3Tensors& tensors);

}  // namespace quire::engine::formats
