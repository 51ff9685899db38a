#pragma once

#include <cstdint>

#include "quire/kernels/dtype.h"

// Launchers of the CUDA elementwise and row-wise ops, with the CPU backend's
// semantics (kernels/cpu/backend/src/cpu_ops_basic.cpp). Arguments are checked
// by CudaBackend before they get here; all pointers are device pointers and the
// work is queued on `stream` (a cudaStream_t), so this header needs no CUDA.

namespace quire::kernels::cuda {

using Stream = void*;

// Kernels that find bad inputs they cannot throw for report them in ints of
// mapped host memory, which CudaBackend reads after its waits: word 0 becomes
// nonzero, word 1 holds the offending token id, word 2 the vocabulary size.
inline constexpr int kDeviceErrorWords = 3;

// A token id outside [0, vocab) gives a row of zeros and a report in `errors`.
void launch_embedding(const void* table, DType dtype, std::int64_t vocab, std::int64_t hidden,
                      const std::int32_t* tokens, std::int64_t count, float* out, int* errors,
                      Stream stream);
void launch_rms_norm(const float* x, const void* weight, DType dtype, float eps, std::int64_t rows,
                     std::int64_t cols, float* out, Stream stream);
// RopeParams' M-RoPE layout (backend.h), which device code cannot include:
// all zero, one position per token; else three per token and each
// frequency rotated by its axis's.
struct RopeSections {
  int t = 0, h = 0, w = 0;
  bool interleaved = false;
};
void launch_rope(float* x, std::int64_t tokens, int heads, int head_dim,
                 const std::int32_t* positions, const float* inv_freq, int rotary_dim,
                 float attention_factor, RopeSections sections, Stream stream);
// GatedActivation (backend.h), which device code cannot include.
enum class GateActivation : std::uint8_t { Silu, GeluTanh };
void launch_gated_activation(GateActivation activation, const float* gate, const float* up,
                             std::int64_t count, float* out, Stream stream);
void launch_add(float* x, const float* y, std::int64_t count, Stream stream);
// cap > 0.
void launch_soft_cap(float* x, std::int64_t count, float cap, Stream stream);
void launch_scale(float* x, std::int64_t count, float factor, Stream stream);

// cudaSuccess when the current device can run this library's kernels;
// cudaErrorNoKernelImageForDevice when it was built for other architectures.
int kernel_image_status();

}  // namespace quire::kernels::cuda
