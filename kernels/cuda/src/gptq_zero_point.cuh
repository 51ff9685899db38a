#pragma once

// The zero point of GPTQ group g at column n, as both GPTQ decode products
// (linear_gptq.cu, linear_gptq_half2.cu) and the CPU's dequantize() read it.

#include <cuda_runtime.h>

#include <cstdint>

#include "quire/kernels/linear_weight.h"

namespace quire::kernels::cuda::linear_detail {

template <int Bits>
__device__ __forceinline__ std::uint32_t gptq_zero_point(const GptqWeight& w, std::int64_t columns,
                                                         int g, std::int64_t n) {
  constexpr int kPerWord = 32 / Bits;
  // Symmetric weights store no zero points: their values carry the offset.
  if (w.qzeros == nullptr) return 1u << (Bits - 1);
  const std::uint32_t word = __ldg(w.qzeros + g * (columns / kPerWord) + n / kPerWord);
  const std::uint32_t code = (word >> (Bits * (n % kPerWord))) & ((1u << Bits) - 1u);
  // GPTQ v1 checkpoints store the zero point minus one.
  return code + (w.exact_zeros ? 0u : 1u);
}

}  // namespace quire::kernels::cuda::linear_detail
