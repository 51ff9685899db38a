// GPTQ's layout on CUDA, 4 or 8 bits (GPTQ, and the AWQ and compressed-tensors
// integer weights repacked into it at load): a fused dequantizing product for
// a few input rows (decode), and FP16 dequantization of column ranges for
// cuBLAS (prefill).
//
// qweight [K / P, N] (P = 32 / bits values per word) is read once, in storage
// order; each lane owns one output column, so a warp's load of a word row is
// 32 consecutive words. Input row k belongs to group g_idx[k] (act-order) or
// k / group_size; every weight is (q - zero[g, n]) * scale[g, n], computed
// exactly in FP32 as the CPU's dequantize() does. A lane keeps the zero and
// scale of the last group it saw, so without act-order they are loaded once
// per group.

#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>

#include "gptq_zero_point.cuh"
#include "linear_common.cuh"
#include "quire/kernels/cuda/cuda_error.h"

namespace quire::kernels::cuda {
namespace {

using namespace linear_detail;

template <int Bits>
inline constexpr int kPerWord = 32 / Bits;
template <int Bits>
inline constexpr std::uint32_t kMask = (1u << Bits) - 1u;

// The zero point and scale of the current group for one column.
template <int Bits>
struct GroupCursor {
  int group = -1;
  float scale = 0.0f;
  float offset = 0.0f;  // 2^23 + zero, for centered()

  __device__ __forceinline__ void move(const GptqWeight& w, std::int64_t columns, int g,
                                       std::int64_t n, bool active) {
    if (g == group) return;
    group = g;
    if (!active) return;
    scale = widen(w.scales, w.scale_dtype, g * columns + n);
    const std::uint32_t zero = gptq_zero_point<Bits>(w, columns, g, n);
    offset = kMagic + static_cast<float>(zero);
  }
};

// The group of input row k. check_group_indices has verified g_idx once per
// buffer; the clamp keeps a buffer that changed since then inside the tensors.
__device__ __forceinline__ int group_of(const GptqWeight& w, int k) {
  if (w.g_idx != nullptr) return min(max(__ldg(w.g_idx + k), 0), w.groups - 1);
  return k / w.group_size;
}

// Grid (column tiles of 32, splits); four warps per block. Split s takes an
// even share of the K / P word rows, which its warps take in turn.
// Explicitly one resident block at least: without it ptxas held the
// many-row shapes to fewer registers and spilled.
template <int Bits, int Rows, bool kGroupIndex>
__global__ void __launch_bounds__(kThreads, 1)
    gptq_matvec_kernel(GptqWeight w, int in_features, const float* __restrict__ x,
                       std::int64_t x_stride, Epilogue e) {
  constexpr int P = kPerWord<Bits>;
  const int lane = static_cast<int>(threadIdx.x & 31u);
  const int warp = static_cast<int>(threadIdx.x >> 5);
  const std::int64_t columns = e.out_features;
  const std::int64_t n = std::int64_t{blockIdx.x} * 32 + lane;
  const bool active = n < columns;
  const int split = static_cast<int>(blockIdx.y);
  const int splits = static_cast<int>(gridDim.y);
  const int word_rows = in_features / P;
  const auto first = static_cast<int>(std::int64_t{word_rows} * split / splits);
  const auto last = static_cast<int>(std::int64_t{word_rows} * (split + 1) / splits);
  GroupCursor<Bits> cursor;
  float sums[Rows] = {};
  for (int kw = first + warp; kw < last; kw += kWarps) {
    const std::uint32_t word = active ? __ldg(w.qweight + kw * columns + n) : 0u;
    const int k0 = kw * P;
    float inputs[Rows][P];
#pragma unroll
    for (int r = 0; r < Rows; ++r) {
#pragma unroll
      for (int i = 0; i < P; i += 4)
        load4(x + r * x_stride + k0 + i, inputs[r] + i);
    }
    // Without act-order the rows of a word usually share one group, and one
    // division serves them all.
    int word_group = -1;
    if constexpr (!kGroupIndex) {
      const int g = k0 / w.group_size;
      if (g == (k0 + P - 1) / w.group_size) word_group = g;
    }
#pragma unroll
    for (int v = 0; v < P; ++v) {
      int g = word_group;
      if constexpr (kGroupIndex) {
        g = group_of(w, k0 + v);
      } else {
        if (g < 0) g = (k0 + v) / w.group_size;
      }
      cursor.move(w, columns, g, n, active);  // g is the same in every lane
      const float weight =
          __fmul_rn(centered((word >> (Bits * v)) & kMask<Bits>, cursor.offset), cursor.scale);
#pragma unroll
      for (int r = 0; r < Rows; ++r)
        sums[r] = __fmaf_rn(inputs[r][v], weight, sums[r]);
    }
  }
  reduce_warps_and_store<Rows>(sums, e, split, n, active);
}

// Grid (column tiles of kThreads, word rows): one thread per column; each
// block row of the grid takes word rows blockIdx.y, blockIdx.y + gridDim.y, ...
template <int Bits>
__global__ void __launch_bounds__(kThreads)
    gptq_dequantize_kernel(GptqWeight w, int in_features, std::int64_t columns, std::int64_t n0,
                           std::int64_t n1, __half* __restrict__ out, std::int64_t ld) {
  constexpr int P = kPerWord<Bits>;
  const std::int64_t n = n0 + std::int64_t{blockIdx.x} * blockDim.x + threadIdx.x;
  if (n >= n1) return;
  GroupCursor<Bits> cursor;
  for (int kw = static_cast<int>(blockIdx.y); kw < in_features / P;
       kw += static_cast<int>(gridDim.y)) {
    const std::uint32_t word = __ldg(w.qweight + kw * columns + n);
#pragma unroll
    for (int v = 0; v < P; ++v) {
      const int k = kw * P + v;
      cursor.move(w, columns, group_of(w, k), n, true);
      const float weight =
          __fmul_rn(centered((word >> (Bits * v)) & kMask<Bits>, cursor.offset), cursor.scale);
      out[k * ld + (n - n0)] = __float2half_rn(weight);
    }
  }
}

template <int Bits, int Rows>
void launch_bits(const MatvecCall& call, const GptqWeight& weight, cudaStream_t stream) {
  const std::int64_t tiles = ceil_div(call.out_features, 32);
  const int splits =
      matvec_splits(call, tiles, ceil_div(call.in_features / kPerWord<Bits>, kWarps));
  const dim3 grid(static_cast<unsigned>(tiles), static_cast<unsigned>(splits));
  const auto in = static_cast<int>(call.in_features);
  const Epilogue epilogue = make_epilogue(call, splits);
  if (weight.g_idx != nullptr) {
    gptq_matvec_kernel<Bits, Rows, true>
        <<<grid, kThreads, 0, stream>>>(weight, in, call.x, call.x_stride, epilogue);
  } else {
    gptq_matvec_kernel<Bits, Rows, false>
        <<<grid, kThreads, 0, stream>>>(weight, in, call.x, call.x_stride, epilogue);
  }
  check(cudaGetLastError(), "linear: GPTQ product");
}

template <int Rows>
void launch_rows(const MatvecCall& call, const GptqWeight& weight, cudaStream_t stream) {
  if (weight.bits == 8) {
    launch_bits<8, Rows>(call, weight, stream);
  } else {
    launch_bits<4, Rows>(call, weight, stream);
  }
}

}  // namespace

void launch_gptq_matvec(const MatvecCall& call, const GptqWeight& weight, Stream stream) {
  if (call.variant != LinearVariant::fp32 && gptq_half2_applies(call, weight)) {
    return launch_gptq_matvec_half2(call, weight, stream);
  }
  const auto cuda_stream = static_cast<cudaStream_t>(stream);
  with_row_count(call.rows,
                 [&](auto rows) { launch_rows<decltype(rows)::value>(call, weight, cuda_stream); });
}

void launch_gptq_dequantize(const GptqWeight& weight, std::int64_t in_features,
                            std::int64_t out_features, std::int64_t n0, std::int64_t n1, void* w,
                            std::int64_t ld, Stream stream) {
  if (n1 <= n0) return;
  const std::int64_t word_rows = in_features * weight.bits / 32;
  const dim3 grid(ceil_div(n1 - n0, kThreads),
                  static_cast<unsigned>(std::min<std::int64_t>(word_rows, 1024)));
  const auto cuda_stream = static_cast<cudaStream_t>(stream);
  if (weight.bits == 8) {
    gptq_dequantize_kernel<8><<<grid, kThreads, 0, cuda_stream>>>(
        weight, static_cast<int>(in_features), out_features, n0, n1, static_cast<__half*>(w), ld);
  } else {
    gptq_dequantize_kernel<4><<<grid, kThreads, 0, cuda_stream>>>(
        weight, static_cast<int>(in_features), out_features, n0, n1, static_cast<__half*>(w), ld);
  }
  check(cudaGetLastError(), "linear: dequantize GPTQ weights");
}

}  // namespace quire::kernels::cuda
