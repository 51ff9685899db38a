// Dense FP16, BF16 and F32 weights and FP8 (E4M3) ones ([N, K], row-major)
// on CUDA: the fused product for a few input rows, and FP8 weights' FP16
// copies for cuBLAS. Both operands are contiguous along K, so a
// warp reads four weight rows with its lanes side by side along K (16 bytes
// per lane where the rows are aligned) and sums across lanes at the end.
// Widening is exact and the sums are FP32, as on the CPU.

#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>

#include "linear_common.cuh"
#include "quire/kernels/cuda/cuda_error.h"

namespace quire::kernels::cuda {
namespace {

using namespace linear_detail;

// Output rows per warp: each input vector loaded serves all four.
constexpr int kOutputs = 4;
constexpr int kBlockOutputs = kWarps * kOutputs;

// Elements per 16-byte load.
template <DType Type>
constexpr int kVector = Type == DType::F32       ? 4
                        : Type == DType::F8_E4M3 ? 16
                                                 : 8;

// 16 bytes of weights, kept in the caches (fp32 variant) or streamed past
// them with an evict-first hint (half2 variant: each weight is read once per
// product, and the inputs and partial sums should keep the cache).
template <bool Streaming>
__device__ __forceinline__ uint4 load16(const void* at) {
  if constexpr (Streaming) return __ldcs(static_cast<const uint4*>(at));
  return __ldg(static_cast<const uint4*>(at));
}

// V consecutive weights from element i on (aligned to V elements when V > 1).
template <DType Type, int V, bool Streaming>
__device__ __forceinline__ void load_weights(const void* data, std::int64_t i, float* out) {
  if constexpr (V == 1) {
    if constexpr (Type == DType::F32) {
      out[0] = __ldg(static_cast<const float*>(data) + i);
    } else if constexpr (Type == DType::F8_E4M3) {
      out[0] = e4m3_value(__ldg(static_cast<const unsigned char*>(data) + i));
    } else {
      const unsigned short bits = __ldg(static_cast<const unsigned short*>(data) + i);
      out[0] = Type == DType::F16 ? __half2float(__ushort_as_half(bits))
                                  : __uint_as_float(static_cast<unsigned>(bits) << 16);
    }
  } else if constexpr (Type == DType::F32) {
    load4(static_cast<const float*>(data) + i, out);
  } else if constexpr (Type == DType::F8_E4M3) {
    const uint4 packed = load16<Streaming>(static_cast<const unsigned char*>(data) + i);
    const unsigned words[4] = {packed.x, packed.y, packed.z, packed.w};
#pragma unroll
    for (int j = 0; j < 8; ++j) {
      const float2 pair =
          e4m3_pair(static_cast<unsigned short>(words[j / 2] >> (16 * (j % 2)) & 0xffffu));
      out[2 * j] = pair.x;
      out[2 * j + 1] = pair.y;
    }
  } else {
    const uint4 packed = load16<Streaming>(static_cast<const unsigned short*>(data) + i);
    const unsigned words[4] = {packed.x, packed.y, packed.z, packed.w};
#pragma unroll
    for (int j = 0; j < 4; ++j) {
      // Little-endian: the element with the lower index is the low half.
      if constexpr (Type == DType::F16) {
        out[2 * j] =
            __half2float(__ushort_as_half(static_cast<unsigned short>(words[j] & 0xffffu)));
        out[2 * j + 1] =
            __half2float(__ushort_as_half(static_cast<unsigned short>(words[j] >> 16)));
      } else {
        out[2 * j] = __uint_as_float(words[j] << 16);
        out[2 * j + 1] = __uint_as_float(words[j] & 0xffff0000u);
      }
    }
  }
}

template <int V>
__device__ __forceinline__ void load_inputs(const float* x, float* out) {
  if constexpr (V == 1) {
    out[0] = __ldg(x);
  } else {
#pragma unroll
    for (int i = 0; i < V; i += 4)
      load4(x + i, out + i);
  }
}

// Grid (tiles of kBlockOutputs outputs, splits); four warps per block, each
// with kOutputs consecutive outputs. Split s takes an even share of the K/V
// vectors of each row; lanes take them in turn.
// Explicitly one resident block at least: without it ptxas held the
// many-row shapes to 80 or 96 registers and spilled.
template <DType Type, int V, int Rows, bool Streaming>
__global__ void __launch_bounds__(kThreads, 1)
    dense_matvec_kernel(const void* __restrict__ weight, std::int64_t in,
                        const float* __restrict__ x, std::int64_t x_stride, Epilogue e) {
  static_assert(kOutputs * Rows <= 32, "one lane stores each sum");
  const int lane = static_cast<int>(threadIdx.x & 31u);
  const int warp = static_cast<int>(threadIdx.x >> 5);
  const std::int64_t n0 = (std::int64_t{blockIdx.x} * kWarps + warp) * kOutputs;
  const int split = static_cast<int>(blockIdx.y);
  const int splits = static_cast<int>(gridDim.y);
  const std::int64_t vectors = in / V;
  const std::int64_t first = vectors * split / splits;
  const std::int64_t last = vectors * (split + 1) / splits;
  bool present[kOutputs];
#pragma unroll
  for (int o = 0; o < kOutputs; ++o)
    present[o] = n0 + o < e.out_features;
  float acc[kOutputs][Rows] = {};
  // Streaming keeps two iterations' loads in flight.
#pragma unroll(Streaming ? 2 : 1)
  for (std::int64_t v = first + lane; v < last; v += 32) {
    const std::int64_t k = v * V;
    float w[kOutputs][V];
#pragma unroll
    for (int o = 0; o < kOutputs; ++o) {
      if (present[o]) {
        load_weights<Type, V, Streaming>(weight, (n0 + o) * in + k, w[o]);
      } else {
#pragma unroll
        for (int i = 0; i < V; ++i)
          w[o][i] = 0.0f;
      }
    }
#pragma unroll
    for (int r = 0; r < Rows; ++r) {
      float inputs[V];
      load_inputs<V>(x + r * x_stride + k, inputs);
#pragma unroll
      for (int o = 0; o < kOutputs; ++o) {
#pragma unroll
        for (int i = 0; i < V; ++i)
          acc[o][r] = __fmaf_rn(w[o][i], inputs[i], acc[o][r]);
      }
    }
  }
  // Butterfly sums: afterwards every lane holds every total, and lane
  // o * Rows + r stores output o of row r.
#pragma unroll
  for (int o = 0; o < kOutputs; ++o) {
#pragma unroll
    for (int r = 0; r < Rows; ++r) {
#pragma unroll
      for (int offset = 16; offset > 0; offset /= 2)
        acc[o][r] = __fadd_rn(acc[o][r], __shfl_xor_sync(kFullMask, acc[o][r], offset));
    }
  }
#pragma unroll
  for (int o = 0; o < kOutputs; ++o) {
#pragma unroll
    for (int r = 0; r < Rows; ++r) {
      if (lane == o * Rows + r && present[o]) store(e, split, r, n0 + o, acc[o][r]);
    }
  }
  finish_split_tile(e, std::int64_t{blockIdx.x} * kBlockOutputs, kBlockOutputs);
}

template <DType Type, int V, int Rows>
void launch_shape(const MatvecCall& call, const void* weight, cudaStream_t stream) {
  const std::int64_t tiles = ceil_div(call.out_features, kBlockOutputs);
  const int splits = matvec_splits(call, tiles, ceil_div(call.in_features / V, 32));
  const dim3 grid(static_cast<unsigned>(tiles), static_cast<unsigned>(splits));
  // Streaming serves the 16-byte loads; F32 weights keep the cached path.
  bool streamed = false;
  if constexpr (V > 1 && Type != DType::F32) {
    if (call.variant != LinearVariant::fp32) {
      dense_matvec_kernel<Type, V, Rows, true><<<grid, kThreads, 0, stream>>>(
          weight, call.in_features, call.x, call.x_stride, make_epilogue(call, splits));
      streamed = true;
    }
  }
  if (!streamed) {
    dense_matvec_kernel<Type, V, Rows, false><<<grid, kThreads, 0, stream>>>(
        weight, call.in_features, call.x, call.x_stride, make_epilogue(call, splits));
  }
  check(cudaGetLastError(),
        Type == DType::F8_E4M3 ? "linear: FP8 product" : "linear: dense product");
}

template <DType Type, int V>
void launch_vector(const MatvecCall& call, const void* weight, cudaStream_t stream) {
  with_row_count(call.rows, [&](auto rows) {
    launch_shape<Type, V, decltype(rows)::value>(call, weight, stream);
  });
}

// 16-byte loads where every weight row starts on a 16-byte boundary; one
// element at a time otherwise (a weight at an odd offset, or K not a multiple
// of the vector).
template <DType Type>
void launch_type(const MatvecCall& call, const void* weight, cudaStream_t stream) {
  const bool aligned =
      reinterpret_cast<std::uintptr_t>(weight) % 16 == 0 && call.in_features % kVector<Type> == 0;
  if (aligned) {
    launch_vector<Type, kVector<Type>>(call, weight, stream);
  } else {
    launch_vector<Type, 1>(call, weight, stream);
  }
}

// Grid (tiles of kThreads inputs, weight rows): one thread per value; block
// row y of the grid takes weight rows n0 + y, n0 + y + gridDim.y, ...
__global__ void __launch_bounds__(kThreads)
    fp8_dequantize_kernel(const unsigned char* __restrict__ data, std::int64_t in, std::int64_t n0,
                          std::int64_t n1, __half* __restrict__ out, std::int64_t ld) {
  const std::int64_t k = std::int64_t{blockIdx.x} * blockDim.x + threadIdx.x;
  if (k >= in) return;
  for (std::int64_t n = n0 + blockIdx.y; n < n1; n += gridDim.y)
    out[(n - n0) * ld + k] = __float2half_rn(e4m3_value(__ldg(data + n * in + k)));
}

}  // namespace

void launch_fp8_matvec(const MatvecCall& call, const Fp8Weight& weight, Stream stream) {
  MatvecCall scaled = call;
  scaled.column_scales = weight.scales;
  launch_type<DType::F8_E4M3>(scaled, weight.data, static_cast<cudaStream_t>(stream));
}

void launch_fp8_dequantize(const Fp8Weight& weight, std::int64_t in_features, std::int64_t n0,
                           std::int64_t n1, void* w, std::int64_t ld, Stream stream) {
  if (n1 <= n0 || in_features == 0) return;
  const dim3 grid(ceil_div(in_features, kThreads),
                  static_cast<unsigned>(std::min<std::int64_t>(n1 - n0, 65535)));
  fp8_dequantize_kernel<<<grid, kThreads, 0, static_cast<cudaStream_t>(stream)>>>(
      weight.data, in_features, n0, n1, static_cast<__half*>(w), ld);
  check(cudaGetLastError(), "linear: FP8 weights to FP16");
}

void launch_dense_matvec(const MatvecCall& call, const DenseWeight& weight, Stream stream) {
  const auto cuda_stream = static_cast<cudaStream_t>(stream);
  switch (weight.dtype) {
    case DType::F32:
      return launch_type<DType::F32>(call, weight.data, cuda_stream);
    case DType::F16:
      return launch_type<DType::F16>(call, weight.data, cuda_stream);
    default:
      return launch_type<DType::BF16>(call, weight.data, cuda_stream);
  }
}

}  // namespace quire::kernels::cuda
