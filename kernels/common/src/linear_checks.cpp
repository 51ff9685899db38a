#include "quire/kernels/linear_checks.h"

#include <stdexcept>
#include <string>
#include <variant>

namespace quire::kernels {
namespace {

[[noreturn]] void reject(const std::string& what) {
  throw std::invalid_argument("linear weight: " + what);
}

bool is_float_type(DType type) {
  return type == DType::F16 || type == DType::BF16 || type == DType::F32;
}

void check_dense(const DenseWeight& dense) {
  if (dense.data == nullptr) reject("dense weight without data");
  if (!is_float_type(dense.dtype)) {
    reject("dense weight of dtype " + std::string(dtype_name(dense.dtype)));
  }
}

void check_exl2(const LinearWeight& weight, const Exl2Weight& exl2) {
  if (!exl2.q_weight || !exl2.q_scale || !exl2.q_scale_max || !exl2.perm) {
    reject("EXL2 weight with a missing tensor");
  }
  const std::int64_t columns = exl2_q_columns(weight, exl2);
  if (columns % 8 != 0 || columns < weight.out_features) {
    reject("EXL2 q_weight has " + std::to_string(columns) + " columns for " +
           std::to_string(weight.out_features) + " outputs");
  }
  if (exl2.groups.empty()) reject("EXL2 weight without groups");
  std::int64_t row = 0;
  std::int64_t q_row = 0;
  for (const Exl2Group& group : exl2.groups) {
    const int bits = group.bits;
    if (bits < 2 || bits > 8 || bits == 7)
      reject("EXL2 group of " + std::to_string(bits) + " bits");
    if (group.rows <= 0 || (group.rows * bits) % 32 != 0) {
      reject("EXL2 group of " + std::to_string(group.rows) + " rows at " + std::to_string(bits) +
             " bits does not fill whole words");
    }
    if (group.first_row != row || group.q_row != q_row) reject("EXL2 groups are not contiguous");
    row += group.rows;
    q_row += group.rows * bits / 32;
  }
  if (row != weight.in_features) {
    reject("EXL2 groups cover " + std::to_string(row) + " of " +
           std::to_string(weight.in_features) + " input rows");
  }
}

void check_gptq(const LinearWeight& weight, const GptqWeight& gptq) {
  if (!gptq.qweight || !gptq.scales) reject("GPTQ weight with a missing tensor");
  if (gptq.bits != 4 && gptq.bits != 8) {
    reject("GPTQ weight of " + std::to_string(gptq.bits) + " bits (4 and 8 are run)");
  }
  if (gptq.scale_dtype != DType::F16 && gptq.scale_dtype != DType::BF16 &&
      gptq.scale_dtype != DType::F32) {
    reject("GPTQ scales of dtype " + std::string(dtype_name(gptq.scale_dtype)));
  }
  if (weight.in_features % 8 != 0 || weight.out_features % 8 != 0) {
    reject("GPTQ weight of " + std::to_string(weight.in_features) + " x " +
           std::to_string(weight.out_features) + " (both must be multiples of 8)");
  }
  if (gptq.groups <= 0 || gptq.group_size <= 0) reject("GPTQ weight without groups");
  if (gptq.g_idx == nullptr && (weight.in_features - 1) / gptq.group_size >= gptq.groups) {
    reject("GPTQ groups of " + std::to_string(gptq.group_size) + " rows do not cover " +
           std::to_string(weight.in_features) + " inputs with " + std::to_string(gptq.groups) +
           " groups");
  }
}

void check_exl3(const LinearWeight& weight, const Exl3Weight& exl3) {
  if (!exl3.trellis || !exl3.suh || !exl3.svh) reject("EXL3 weight with a missing tensor");
  if (exl3.bits < 1 || exl3.bits > 8) {
    reject("EXL3 weight of " + std::to_string(exl3.bits) + " bits (1 to 8 are defined)");
  }
  const auto padding_fits = [](std::int64_t features, std::int64_t padded) {
    return padded % 128 == 0 && padded >= features && padded - features < 128;
  };
  if (!padding_fits(weight.in_features, exl3.padded_in) ||
      !padding_fits(weight.out_features, exl3.padded_out)) {
    reject("EXL3 weight padded to " + std::to_string(exl3.padded_in) + " x " +
           std::to_string(exl3.padded_out) + " for " + std::to_string(weight.in_features) + " x " +
           std::to_string(weight.out_features) + " (each must be rounded up to a multiple of 128)");
  }
  if (exl3.codebook != Exl3Codebook::three_inst && exl3.codebook != Exl3Codebook::mcg &&
      exl3.codebook != Exl3Codebook::mul1) {
    reject("EXL3 weight of an unknown codebook");
  }
}

}  // namespace

std::int64_t exl2_q_columns(const LinearWeight& weight, const Exl2Weight& exl2) {
  return exl2.q_columns == 0 ? weight.out_features : exl2.q_columns;
}

void check_linear_descriptor(const LinearWeight& weight) {
  if (weight.in_features <= 0 || weight.out_features <= 0) {
    reject("shape " + std::to_string(weight.out_features) + " x " +
           std::to_string(weight.in_features));
  }
  if (weight.bias != nullptr && !is_float_type(weight.bias_dtype)) {
    reject("bias of dtype " + std::string(dtype_name(weight.bias_dtype)));
  }
  // get_if rather than std::visit, whose bad_variant_access type information
  // would join the exported symbols of the CUDA plugin that links this.
  if (const auto* dense = std::get_if<DenseWeight>(&weight.format)) check_dense(*dense);
  if (const auto* exl2 = std::get_if<Exl2Weight>(&weight.format)) check_exl2(weight, *exl2);
  if (const auto* gptq = std::get_if<GptqWeight>(&weight.format)) check_gptq(weight, *gptq);
  if (const auto* exl3 = std::get_if<Exl3Weight>(&weight.format)) check_exl3(weight, *exl3);
  if (const auto* fp8 = std::get_if<Fp8Weight>(&weight.format)) {
    if (fp8->data == nullptr || fp8->scales == nullptr) reject("FP8 weight with a missing tensor");
  }
}

void check_gptq_group_indices(const std::int32_t* g_idx, std::int64_t count, int groups) {
  for (std::int64_t k = 0; k < count; ++k) {
    if (g_idx[k] < 0 || g_idx[k] >= groups) {
      reject("GPTQ g_idx[" + std::to_string(k) + "] = " + std::to_string(g_idx[k]) +
             " is not one of the " + std::to_string(groups) + " groups");
    }
  }
}

}  // namespace quire::kernels
