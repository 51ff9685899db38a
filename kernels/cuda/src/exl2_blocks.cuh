#pragma once

// What both EXL2 decode products (linear_exl2.cu in FP32, linear_exl2_half2.cu
// in half2) read the same way: the group table, the group scales with
// exllamav2's FP16 roundings.

#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdint>

#include "linear_common.cuh"

namespace quire::kernels::cuda::linear_detail {

struct Group {
  int bits;
  int rows;
  int first_row;
  int q_row;
};

__device__ __forceinline__ Group load_group(const Exl2DeviceWeight& w, int g) {
  const int4 packed = __ldg(static_cast<const int4*>(w.groups) + g);
  return Group{packed.x, packed.y, packed.z, packed.w};
}

// The scale of group g at column n, with exllamav2's FP16 roundings. The
// multiplications are exact in FP32 (a power of two; at most 8 by 11
// significant bits), so only the two FP16 roundings shape the result.
__device__ __forceinline__ float group_scale(const Exl2DeviceWeight& w, int g, std::int64_t n) {
  const std::uint32_t word = __ldg(w.q_scale + g * (w.columns / 8) + n / 8);
  const int qs = static_cast<int>((word >> (4 * (n % 8))) & 15u) + 1;
  const float max_scale = __half2float(__ushort_as_half(__ldg(w.q_scale_max + g)));
  const float divided = __half2float(__float2half_rn(__fmul_rn(max_scale, 1.0f / 256.0f)));
  return __half2float(__float2half_rn(__fmul_rn(static_cast<float>(qs * qs), divided)));
}

}  // namespace quire::kernels::cuda::linear_detail
