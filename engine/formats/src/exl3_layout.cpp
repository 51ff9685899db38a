#include "quire/engine/formats/exl3_layout.h"

#include <cmath>
#include <cstring>
#include <sstream>
#include <string>

#include "host_pointers.h"
#include "quire/kernels/cpu/exl3_trellis.h"
#include "quire/kernels/cpu/half.h"
#include "tensor_checks.h"

namespace quire::engine::formats {
namespace {

using kernels::DType;
using kernels::Exl3Codebook;
using std::to_string;

std::string hex(std::uint32_t value) {
  std::ostringstream out;
  out << "0x" << std::uppercase << std::hex << value;
  return out.str();
}

// Kp or Np from the trellis against what config.json says of the layer.
std::int64_t features_of(const detail::LayerChecks& checks, std::int64_t padded,
                         std::int64_t configured, const char* side, const char* tiles) {
  if (padded % 128 != 0) {
    checks.fail("trellis has " + to_string(padded / 16) + " tiles of 16 " + side + " (" +
                to_string(padded) + "), not a multiple of 128: the Hadamard rotations work on " +
                "blocks of 128, so converters pad to them");
  }
  if (configured > 0 && exl3_padded(configured) != padded) {
    checks.fail_config("trellis holds " + to_string(padded) + " " + side + " (" + tiles +
                       "), but the layer has " + to_string(configured) + ", which pads to " +
                       to_string(exl3_padded(configured)));
  }
  return configured > 0 ? configured : padded;
}

// FP16 [count] signs and scales, or their packed form: I16 [count / 16], bit
// b of word i the sign of element 16 i + b (set: -1), as exllamav3's
// pack_signs writes and unpack_bf reads them.
std::vector<std::uint16_t> read_signs(const detail::LayerChecks& checks,
                                      const std::optional<TensorView>& unpacked,
                                      const std::optional<TensorView>& packed, const char* name,
                                      const char* packed_name, std::int64_t count) {
  if (unpacked) {
    checks.expect(name, *unpacked, {DType::F16}, 1);
    if (unpacked->shape[0] != count) {
      checks.fail(std::string(name) + " has " + to_string(unpacked->shape[0]) +
                  " values; the trellis has " + to_string(count) +
                  (std::string(name) == "suh" ? " (padded) inputs" : " (padded) outputs"));
    }
    for (std::int64_t i = 0; i < count; ++i) {
      const float value = kernels::half_to_float(detail::read_u16(*unpacked, i));
      if (!std::isfinite(value)) {
        checks.fail(std::string(name) + "[" + to_string(i) + "] is not a finite number");
      }
    }
    return {};
  }
  if (!packed) {
    checks.fail(std::string("there is no ") + name + " (nor the packed " + packed_name +
                ") beside the trellis");
  }
  checks.expect(packed_name, *packed, {DType::I16}, 1);
  if (packed->shape[0] * 16 != count) {
    checks.fail(std::string(packed_name) + " has " + to_string(packed->shape[0]) +
                " words of 16 signs for " + to_string(count) + " values");
  }
  std::vector<std::uint16_t> signs(static_cast<std::size_t>(count));
  for (std::int64_t i = 0; i < count; ++i) {
    const std::uint16_t word = detail::read_u16(*packed, i / 16);
    signs[static_cast<std::size_t>(i)] = ((word >> (i % 16)) & 1u) != 0 ? 0xbc00 : 0x3c00;
  }
  return signs;
}

// The codebook from the multiplier tensors: neither means 3INST.
Exl3Codebook read_codebook(const detail::LayerChecks& checks, const Exl3Tensors& tensors) {
  if (tensors.mcg && tensors.mul1) {
    checks.fail("both mcg and mul1 are present; a tensor has one codebook");
  }
  const std::optional<TensorView>& flag = tensors.mcg ? tensors.mcg : tensors.mul1;
  if (!flag) return Exl3Codebook::three_inst;
  const char* name = tensors.mcg ? "mcg" : "mul1";
  const std::uint32_t expected =
      tensors.mcg ? kernels::kExl3McgMultiplier : kernels::kExl3Mul1Multiplier;
  if (flag->dtype != DType::I32 || flag->elements() != 1) {
    checks.fail(std::string(name) + " has dtype " + std::string(kernels::dtype_name(flag->dtype)) +
                " and shape " + format_shape(flag->shape) +
                "; it should hold the codebook's multiplier as one I32");
  }
  std::uint32_t multiplier = 0;
  std::memcpy(&multiplier, flag->bytes.data(), 4);
  if (multiplier != expected) {
    checks.fail(std::string(name) + " holds the multiplier " + hex(multiplier) + ", but the " +
                (tensors.mcg ? "MCG" : "MUL1") + " codebook multiplies by " + hex(expected) +
                "; Quire knows no other codebook (a newer exllamav3 may)");
  }
  return tensors.mcg ? Exl3Codebook::mcg : Exl3Codebook::mul1;
}

}  // namespace

const char* exl3_codebook_name(Exl3Codebook codebook) {
  switch (codebook) {
    case Exl3Codebook::three_inst:
      return "3INST";
    case Exl3Codebook::mcg:
      return "MCG";
    case Exl3Codebook::mul1:
      return "MUL1";
  }
  return "?";
}

double Exl3Layout::bits_per_weight() const {
  const double trellis = double(padded_in) * double(padded_out) * bits;
  const double scales = 16.0 * double(padded_in + padded_out);
  return (trellis + scales) / (double(in_features) * double(out_features));
}

Exl3Layout describe_exl3(std::string_view key, const Exl3Tensors& tensors,
                         const LinearShape& shape) {
  const detail::LayerChecks checks(key, "EXL3");
  checks.expect("trellis", tensors.trellis, {DType::I16}, 3);
  const std::vector<std::int64_t>& dims = tensors.trellis.shape;
  Exl3Layout layout;
  if (dims[2] % 16 != 0 || dims[2] / 16 < kernels::kExl3MinBits ||
      dims[2] / 16 > kernels::kExl3MaxBits) {
    checks.fail("trellis has shape " + format_shape(dims) +
                "; its last dimension must be 16 x the bits per weight, 1 to 8 (16 to 128)");
  }
  layout.bits = static_cast<int>(dims[2] / 16);
  if (dims[0] == 0 || dims[1] == 0) {
    checks.fail("trellis has shape " + format_shape(dims) + "; a layer needs inputs and outputs");
  }
  if (dims[0] > (std::int64_t{1} << 26) || dims[1] > (std::int64_t{1} << 26)) {
    checks.fail("trellis has shape " + format_shape(dims) + ", more tiles than Quire supports");
  }
  layout.padded_in = dims[0] * 16;
  layout.padded_out = dims[1] * 16;
  layout.in_features = features_of(checks, layout.padded_in, shape.in_features, "inputs",
                                   "its first dimension times 16");
  std::int64_t outputs = shape.out_features;
  if (outputs <= 0 && tensors.bias && tensors.bias->shape.size() == 1) {
    outputs = tensors.bias->shape[0];
  }
  layout.out_features =
      features_of(checks, layout.padded_out, outputs, "outputs", "its second dimension times 16");
  layout.suh = read_signs(checks, tensors.suh, tensors.su, "suh", "su", layout.padded_in);
  layout.svh = read_signs(checks, tensors.svh, tensors.sv, "svh", "sv", layout.padded_out);
  layout.codebook = read_codebook(checks, tensors);
  if (tensors.bias) {
    checks.expect("bias", *tensors.bias, {DType::F16, DType::BF16, DType::F32}, 1);
    const std::int64_t count = tensors.bias->shape[0];
    if (count != layout.out_features && count != layout.padded_out) {
      checks.fail("bias has " + to_string(count) + " elements for " +
                  to_string(layout.out_features) + " outputs (" + to_string(layout.padded_out) +
                  " padded)");
    }
  }
  return layout;
}

kernels::LinearWeight host_linear_weight(const Exl3Layout& layout, const Exl3Tensors& tensors) {
  kernels::Exl3Weight exl3;
  exl3.trellis = detail::host_pointer<std::uint16_t>(tensors.trellis, "trellis");
  exl3.suh = layout.suh.empty() ? detail::host_pointer<std::uint16_t>(*tensors.suh, "suh")
                                : layout.suh.data();
  exl3.svh = layout.svh.empty() ? detail::host_pointer<std::uint16_t>(*tensors.svh, "svh")
                                : layout.svh.data();
  exl3.bits = layout.bits;
  exl3.codebook = layout.codebook;
  exl3.padded_in = layout.padded_in;
  exl3.padded_out = layout.padded_out;
  kernels::LinearWeight weight;
  weight.in_features = layout.in_features;
  weight.out_features = layout.out_features;
  weight.format = exl3;
  detail::set_host_bias(weight, tensors.bias);
  return weight;
}

}  // namespace quire::engine::formats
