// CUDA kernels for embedding, RMSNorm, RoPE, gated activations, residual
// adds, soft-capping and scaling. Each follows the CPU reference's arithmetic
// step by step, with explicitly rounded operations (__fmul_rn and friends) so
// that nvcc cannot fuse a multiply and an add into an FMA the CPU does not do.
// RMSNorm, the gated activations and add may run in place (output aliasing an
// input, as on the CPU), so their pointers are not __restrict__.

#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>

#include "elementwise_ops.h"
#include "quire/kernels/cuda/cuda_error.h"

namespace quire::kernels::cuda {
namespace {

constexpr int kThreads = 256;
constexpr unsigned kFullMask = 0xffffffffu;
// Row kernels loop over rows, so the grid never needs to exceed this.
constexpr std::int64_t kMaxRowBlocks = 65535;

// Element i of a dense FP16/BF16/F32 vector, widened exactly to FP32.
template <DType Type>
__device__ float widen(const void* data, std::int64_t i) {
  if constexpr (Type == DType::F32) {
    return static_cast<const float*>(data)[i];
  } else if constexpr (Type == DType::F16) {
    return __half2float(__ushort_as_half(static_cast<const unsigned short*>(data)[i]));
  } else {
    return __uint_as_float(static_cast<unsigned>(static_cast<const unsigned short*>(data)[i])
                           << 16);
  }
}

// One block per token row (looping when there are more rows than blocks). A
// token id outside the vocabulary gets a row of zeros, and is reported in
// `errors` (kDeviceErrorWords) for the host to throw at its next wait: the
// host checks ids before launching, except while recording a CUDA graph.
template <DType Type>
__global__ void __launch_bounds__(kThreads)
    embedding_kernel(const void* __restrict__ table, std::int64_t vocab, std::int64_t hidden,
                     const std::int32_t* __restrict__ tokens, std::int64_t count,
                     float* __restrict__ out, int* errors) {
  for (std::int64_t t = blockIdx.x; t < count; t += gridDim.x) {
    const std::int32_t id = tokens[t];
    if (id < 0 || id >= vocab) {  // the same for the whole block
      // Plain stores to host memory (atomics there depend on the bus): with
      // several bad ids, one of them is reported, whole.
      if (threadIdx.x == 0) {
        errors[1] = id;
        errors[2] = static_cast<int>(vocab);
        errors[0] = 1;
      }
      for (std::int64_t c = threadIdx.x; c < hidden; c += blockDim.x)
        out[t * hidden + c] = 0.0f;
      continue;
    }
    const std::int64_t base = std::int64_t{id} * hidden;
    for (std::int64_t c = threadIdx.x; c < hidden; c += blockDim.x) {
      out[t * hidden + c] = widen<Type>(table, base + c);
    }
  }
}

// Sum over the block, returned to every thread. The CPU sums squares in
// double; so does this, so only the order of the additions differs.
__device__ double block_sum(double value) {
  __shared__ double partial[32];
  const unsigned lane = threadIdx.x & 31u, warp = threadIdx.x >> 5;
  for (int offset = 16; offset > 0; offset /= 2)
    value += __shfl_xor_sync(kFullMask, value, offset);
  if (lane == 0) partial[warp] = value;
  __syncthreads();
  if (warp == 0) {
    value = lane < (blockDim.x + 31) / 32 ? partial[lane] : 0.0;
    for (int offset = 16; offset > 0; offset /= 2)
      value += __shfl_xor_sync(kFullMask, value, offset);
    if (lane == 0) partial[0] = value;
  }
  __syncthreads();
  const double total = partial[0];
  // The next row's reduction overwrites `partial`; everyone must have read it.
  __syncthreads();
  return total;
}

// RMSNorm: one block of kNormThreads per row, each thread's loads issued
// kNormUnroll at a time before any is used. A decode step normalizes one row
// on one multiprocessor, so what it waits on is the number of round trips to
// memory per thread: for 4096 columns one per pass, where a 256-thread loop
// made sixteen.
constexpr int kNormThreads = 1024;
constexpr int kNormUnroll = 4;

template <DType Type>
__global__ void __launch_bounds__(kNormThreads)
    rms_norm_kernel(const float* x, const void* __restrict__ weight, float eps, std::int64_t rows,
                    std::int64_t cols, float* out) {
  const std::int64_t step = blockDim.x;
  for (std::int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
    const float* row = x + r * cols;
    double sum = 0.0;
    for (std::int64_t c0 = threadIdx.x; c0 < cols; c0 += kNormUnroll * step) {
      float values[kNormUnroll];
#pragma unroll
      for (int u = 0; u < kNormUnroll; ++u) {
        const std::int64_t c = c0 + u * step;
        values[u] = c < cols ? row[c] : 0.0f;
      }
#pragma unroll
      for (int u = 0; u < kNormUnroll; ++u) {
        const double value = values[u];
        sum += value * value;  // exact: a float's square fits in a double
      }
    }
    sum = block_sum(sum);
    // As the CPU (and Hugging Face): mean in double, normalize in FP32.
    const float mean = __double2float_rn(sum / static_cast<double>(cols));
    const float inverse = __fdiv_rn(1.0f, __fsqrt_rn(__fadd_rn(mean, eps)));
    for (std::int64_t c0 = threadIdx.x; c0 < cols; c0 += kNormUnroll * step) {
      float values[kNormUnroll], weights[kNormUnroll];
#pragma unroll
      for (int u = 0; u < kNormUnroll; ++u) {
        const std::int64_t c = c0 + u * step;
        values[u] = c < cols ? row[c] : 0.0f;
        weights[u] = c < cols ? widen<Type>(weight, c) : 0.0f;
      }
#pragma unroll
      for (int u = 0; u < kNormUnroll; ++u) {
        const std::int64_t c = c0 + u * step;
        if (c < cols) out[r * cols + c] = __fmul_rn(weights[u], __fmul_rn(values[u], inverse));
      }
    }
  }
}

// RoPE: one block per token. The angles depend on the token and the pair
// index only, so the block computes each pair's cosine and sine once into
// shared memory (up to kMaxRopeTable pairs; wider heads compute them per
// item), and its threads then rotate every head's pairs with two loads and
// four products each. Angles are rounded to FP32 first and their cosine and
// sine taken in double, as the CPU does.
constexpr int kRopeThreads = 1024;
constexpr int kMaxRopeTable = 256;

__device__ __forceinline__ void rope_factors(float position, const float* inv_freq, int i,
                                             float factor, float& c, float& s) {
  const float angle = __fmul_rn(position, inv_freq[i]);
  double sine = 0.0, cosine = 0.0;
  sincos(static_cast<double>(angle), &sine, &cosine);
  c = __fmul_rn(__double2float_rn(cosine), factor);
  s = __fmul_rn(__double2float_rn(sine), factor);
}

// Token t's position for frequency i: its one position, or with M-RoPE the
// id of the frequency's axis (rope_axis in backend.h).
__device__ __forceinline__ float rope_position(const std::int32_t* positions, std::int64_t t, int i,
                                               const RopeSections& sections) {
  if (sections.t + sections.h + sections.w == 0) return static_cast<float>(positions[t]);
  int axis = 0;
  if (sections.interleaved) {
    if (i % 3 == 1 && i < 3 * sections.h) axis = 1;
    if (i % 3 == 2 && i < 3 * sections.w) axis = 2;
  } else if (i >= sections.t) {
    axis = i < sections.t + sections.h ? 1 : 2;
  }
  return static_cast<float>(positions[3 * t + axis]);
}

__global__ void __launch_bounds__(kRopeThreads)
    rope_kernel(float* __restrict__ x, std::int64_t tokens, int heads, int head_dim,
                const std::int32_t* __restrict__ positions, const float* __restrict__ inv_freq,
                int half, float factor, RopeSections sections) {
  __shared__ float cosines[kMaxRopeTable], sines[kMaxRopeTable];
  const bool tabled = half <= kMaxRopeTable;
  for (std::int64_t t = blockIdx.x; t < tokens; t += gridDim.x) {
    if (tabled) {
      for (int i = static_cast<int>(threadIdx.x); i < half; i += static_cast<int>(blockDim.x))
        rope_factors(rope_position(positions, t, i, sections), inv_freq, i, factor, cosines[i],
                     sines[i]);
      __syncthreads();
    }
    for (int item = static_cast<int>(threadIdx.x); item < heads * half;
         item += static_cast<int>(blockDim.x)) {
      const int h = item / half, i = item % half;
      float c = 0.0f, s = 0.0f;
      if (tabled) {
        c = cosines[i];
        s = sines[i];
      } else {
        rope_factors(rope_position(positions, t, i, sections), inv_freq, i, factor, c, s);
      }
      float* v = x + (t * heads + h) * head_dim;
      const float a = v[i], b = v[i + half];
      v[i] = __fsub_rn(__fmul_rn(a, c), __fmul_rn(b, s));
      v[i + half] = __fadd_rn(__fmul_rn(b, c), __fmul_rn(a, s));
    }
    // The next token's factors overwrite the table.
    if (tabled) __syncthreads();
  }
}

// gelu_pytorch_tanh's constants: sqrt(2 / pi) and the cubic term's weight.
constexpr float kSqrt2OverPi = 0.797884560802865355f;
constexpr float kGeluCubic = 0.044715f;

template <GateActivation Activation>
__global__ void __launch_bounds__(kThreads)
    gated_activation_kernel(const float* gate, const float* up, std::int64_t count, float* out) {
  const std::int64_t stride = std::int64_t{gridDim.x} * blockDim.x;
  for (std::int64_t i = std::int64_t{blockIdx.x} * blockDim.x + threadIdx.x; i < count;
       i += stride) {
    const float g = gate[i];
    if constexpr (Activation == GateActivation::Silu) {
      out[i] = __fmul_rn(__fdiv_rn(g, __fadd_rn(1.0f, expf(-g))), up[i]);
    } else {
      // 0.5 x (1 + tanh(u)) as x sigmoid(2u), the CPU's form (cpu_ops_basic.cpp).
      const float u = __fmul_rn(kSqrt2OverPi,
                                __fadd_rn(g, __fmul_rn(kGeluCubic, __fmul_rn(__fmul_rn(g, g), g))));
      out[i] = __fmul_rn(__fdiv_rn(g, __fadd_rn(1.0f, expf(__fmul_rn(-2.0f, u)))), up[i]);
    }
  }
}

__global__ void __launch_bounds__(kThreads)
    add_kernel(float* x, const float* y, std::int64_t count) {
  const std::int64_t stride = std::int64_t{gridDim.x} * blockDim.x;
  for (std::int64_t i = std::int64_t{blockIdx.x} * blockDim.x + threadIdx.x; i < count;
       i += stride) {
    x[i] = __fadd_rn(x[i], y[i]);
  }
}

__global__ void __launch_bounds__(kThreads)
    soft_cap_kernel(float* __restrict__ x, std::int64_t count, float cap) {
  const std::int64_t stride = std::int64_t{gridDim.x} * blockDim.x;
  for (std::int64_t i = std::int64_t{blockIdx.x} * blockDim.x + threadIdx.x; i < count;
       i += stride) {
    x[i] = __fmul_rn(cap, tanhf(__fdiv_rn(x[i], cap)));
  }
}

__global__ void __launch_bounds__(kThreads)
    scale_kernel(float* __restrict__ x, std::int64_t count, float factor) {
  const std::int64_t stride = std::int64_t{gridDim.x} * blockDim.x;
  for (std::int64_t i = std::int64_t{blockIdx.x} * blockDim.x + threadIdx.x; i < count;
       i += stride) {
    x[i] = __fmul_rn(x[i], factor);
  }
}

unsigned row_blocks(std::int64_t rows) {
  return static_cast<unsigned>(std::min(rows, kMaxRowBlocks));
}

// Grid-stride kernels need no more than a few waves of blocks.
unsigned element_blocks(std::int64_t count) {
  return static_cast<unsigned>(std::min<std::int64_t>((count + kThreads - 1) / kThreads, 65535));
}

cudaStream_t as_stream(Stream stream) {
  return static_cast<cudaStream_t>(stream);
}

}  // namespace

void launch_embedding(const void* table, DType dtype, std::int64_t vocab, std::int64_t hidden,
                      const std::int32_t* tokens, std::int64_t count, float* out, int* errors,
                      Stream stream) {
  if (count == 0 || hidden == 0) return;
  const unsigned blocks = row_blocks(count);
  switch (dtype) {
    case DType::F32:
      embedding_kernel<DType::F32><<<blocks, kThreads, 0, as_stream(stream)>>>(
          table, vocab, hidden, tokens, count, out, errors);
      break;
    case DType::F16:
      embedding_kernel<DType::F16><<<blocks, kThreads, 0, as_stream(stream)>>>(
          table, vocab, hidden, tokens, count, out, errors);
      break;
    default:
      embedding_kernel<DType::BF16><<<blocks, kThreads, 0, as_stream(stream)>>>(
          table, vocab, hidden, tokens, count, out, errors);
      break;
  }
  check(cudaGetLastError(), "embedding");
}

void launch_rms_norm(const float* x, const void* weight, DType dtype, float eps, std::int64_t rows,
                     std::int64_t cols, float* out, Stream stream) {
  if (rows == 0 || cols == 0) return;
  const unsigned blocks = row_blocks(rows);
  switch (dtype) {
    case DType::F32:
      rms_norm_kernel<DType::F32>
          <<<blocks, kNormThreads, 0, as_stream(stream)>>>(x, weight, eps, rows, cols, out);
      break;
    case DType::F16:
      rms_norm_kernel<DType::F16>
          <<<blocks, kNormThreads, 0, as_stream(stream)>>>(x, weight, eps, rows, cols, out);
      break;
    default:
      rms_norm_kernel<DType::BF16>
          <<<blocks, kNormThreads, 0, as_stream(stream)>>>(x, weight, eps, rows, cols, out);
      break;
  }
  check(cudaGetLastError(), "rms_norm");
}

void launch_rope(float* x, std::int64_t tokens, int heads, int head_dim,
                 const std::int32_t* positions, const float* inv_freq, int rotary_dim,
                 float attention_factor, RopeSections sections, Stream stream) {
  if (tokens == 0 || heads == 0) return;
  rope_kernel<<<row_blocks(tokens), kRopeThreads, 0, as_stream(stream)>>>(
      x, tokens, heads, head_dim, positions, inv_freq, rotary_dim / 2, attention_factor, sections);
  check(cudaGetLastError(), "rope");
}

void launch_gated_activation(GateActivation activation, const float* gate, const float* up,
                             std::int64_t count, float* out, Stream stream) {
  if (count == 0) return;
  const unsigned blocks = element_blocks(count);
  if (activation == GateActivation::Silu) {
    gated_activation_kernel<GateActivation::Silu>
        <<<blocks, kThreads, 0, as_stream(stream)>>>(gate, up, count, out);
  } else {
    gated_activation_kernel<GateActivation::GeluTanh>
        <<<blocks, kThreads, 0, as_stream(stream)>>>(gate, up, count, out);
  }
  check(cudaGetLastError(), "gated_activation");
}

void launch_add(float* x, const float* y, std::int64_t count, Stream stream) {
  if (count == 0) return;
  add_kernel<<<element_blocks(count), kThreads, 0, as_stream(stream)>>>(x, y, count);
  check(cudaGetLastError(), "add");
}

void launch_soft_cap(float* x, std::int64_t count, float cap, Stream stream) {
  if (count == 0) return;
  soft_cap_kernel<<<element_blocks(count), kThreads, 0, as_stream(stream)>>>(x, count, cap);
  check(cudaGetLastError(), "soft_cap");
}

void launch_scale(float* x, std::int64_t count, float factor, Stream stream) {
  if (count == 0) return;
  scale_kernel<<<element_blocks(count), kThreads, 0, as_stream(stream)>>>(x, count, factor);
  check(cudaGetLastError(), "scale");
}

int kernel_image_status() {
  cudaFuncAttributes attributes{};
  const cudaError_t status = cudaFuncGetAttributes(&attributes, add_kernel);
  // Leave no sticky "last error" behind for the next launch check to find.
  if (status != cudaSuccess) cudaGetLastError();
  return status;
}

}  // namespace quire::kernels::cuda
