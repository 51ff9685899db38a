#pragma once

#include <cstddef>
#include <cstdint>

#include "quire/kernels/dtype.h"
#include "quire/kernels/linear_weight.h"

// Launchers of the CUDA linear-layer kernels (linear_*.cu), with the CPU
// backend's semantics (kernels/cpu/linear). LinearRunner checks the arguments
// and owns the scratch memory before anything gets here; all pointers are
// device pointers and the work is queued on `stream` (a cudaStream_t), so this
// header needs no CUDA.

namespace quire::kernels::cuda {

using Stream = void*;

// The fused kernels multiply at most this many input rows per pass over the
// weight: each row has its own accumulators in registers.
inline constexpr int kMatvecMaxRows = 8;

// Which kernels the fused products use, chosen by QUIRE_CUDA_LINEAR so that
// one GPU run can compare them (cuda_linear.h):
// - fp32: weights decoded exactly and multiplied in FP32, as the CPU does.
// - half2: EXL2 and GPTQ (4 and 8 bits, groups in row order) unpacked two
//   weights at a time into half2 and multiplied in half2 within 32-row
//   blocks (half2_unpack.h); dense and FP8 weights streamed past the caches
//   (evict-first) with two vectors in flight per lane.
// - half2x4: half2, with four adjacent EXL2 columns per lane (one 16-byte
//   load per word row) in products of up to 4 rows.
// - dp4a: half2x4, with EXL2's 2-, 4- and 8-bit groups multiplied by 8-bit
//   inputs (scaled per 32-row block) with dp4a (dp4a_unpack.h).
enum class LinearVariant { fp32, half2, half2x4, dp4a };

// One product of the fused kernels: out[rows, N] = x W^T (+ bias), FP32.
struct MatvecCall {
  // [rows, x_stride], 16-byte aligned with x_stride % 4 == 0, so that four
  // consecutive inputs are one aligned vector load.
  const float* x = nullptr;
  std::int64_t x_stride = 0;
  int rows = 0;  // 1..kMatvecMaxRows
  std::int64_t in_features = 0;
  std::int64_t out_features = 0;
  float* out = nullptr;  // [rows, out_features]
  const void* bias = nullptr;
  DType bias_dtype = DType::F32;
  // Each output column's sum multiplied by column_scales[n] before the bias
  // is added (FP8 weights' scales), or nothing.
  const float* column_scales = nullptr;
  // When there are too few output columns to occupy the GPU, the input
  // dimension is split too: each split writes its partial sums here
  // ([splits, rows, N]) and the last block of each column tile to finish
  // adds them in split order, so results do not change from run to run as
  // atomic additions would. The blocks of a tile count themselves in
  // tile_counters[tile], which is zero before and after every product.
  float* partials = nullptr;
  std::int64_t partial_capacity = 0;  // floats
  unsigned* tile_counters = nullptr;  // matvec_counter_capacity entries
  int sm_count = 1;
  LinearVariant variant = LinearVariant::fp32;
};

// Floats of partial sums that any product may need on a GPU of `sm_count`
// multiprocessors (see matvec_splits in linear_inputs.cu).
std::int64_t matvec_partial_capacity(int sm_count);
// Tile counters that any split product may need (split products have fewer
// column tiles than this).
std::int64_t matvec_counter_capacity(int sm_count);

// An EXL2 weight as the kernels read it: the host's group list uploaded as
// int4 {bits, rows, first_row, q_row} per group, and the permutation whose
// entry k names the input row that quantized row k multiplies.
struct Exl2DeviceWeight {
  const std::int32_t* perm = nullptr;  // none: the identity
  const std::uint32_t* q_weight = nullptr;
  const std::uint32_t* q_scale = nullptr;
  const std::uint16_t* q_scale_max = nullptr;
  const void* groups = nullptr;  // int4 [group_count]
  int group_count = 0;
  std::int64_t columns = 0;  // row length of q_weight (N or the padded N)
};

// The fused products for at most kMatvecMaxRows rows. The EXL2 kernel reads
// its inputs through the weight's permutation itself, so for EXL2 `x` need
// not be aligned.
void launch_dense_matvec(const MatvecCall& call, const DenseWeight& weight, Stream stream);
void launch_exl2_matvec(const MatvecCall& call, const Exl2DeviceWeight& weight, Stream stream);
void launch_gptq_matvec(const MatvecCall& call, const GptqWeight& weight, Stream stream);
// The half2 products, which the two above call for LinearVariant::half2 and
// half2x4 (GPTQ only where gptq_half2_applies).
void launch_exl2_matvec_half2(const MatvecCall& call, const Exl2DeviceWeight& weight,
                              Stream stream);
bool gptq_half2_applies(const MatvecCall& call, const GptqWeight& weight);
void launch_gptq_matvec_half2(const MatvecCall& call, const GptqWeight& weight, Stream stream);
// FP8 weights: the dense kernel over E4M3 codes, each column's sum times its
// scale (the call's column_scales are the weight's).
void launch_fp8_matvec(const MatvecCall& call, const Fp8Weight& weight, Stream stream);

// FP16 copies of output columns [n0, n1) of a quantized weight for cuBLAS:
// w[k * ld + n - n0] for input row k (EXL2: quantized row k, whose input is
// perm[k]), rounded from the CPU's exact FP32 value.
void launch_exl2_dequantize(const Exl2DeviceWeight& weight, std::int64_t n0, std::int64_t n1,
                            void* w, std::int64_t ld, Stream stream);
void launch_gptq_dequantize(const GptqWeight& weight, std::int64_t in_features,
                            std::int64_t out_features, std::int64_t n0, std::int64_t n1, void* w,
                            std::int64_t ld, Stream stream);
// FP16 copies of weight rows (output columns) [n0, n1) of an FP8 weight,
// unscaled: w[(n - n0) * ld + k] for k < K. Every E4M3 value is an FP16
// value, so the copy is exact; the scales are applied to the products
// (launch_finish_outputs).
void launch_fp8_dequantize(const Fp8Weight& weight, std::int64_t in_features, std::int64_t n0,
                           std::int64_t n1, void* w, std::int64_t ld, Stream stream);

// EXL3, decode (linear_exl3.cu): the input rotation into `rotated` (device
// scratch of exl3_rotated_bytes(Kp) bytes), then the fused product with the
// output rotation, svh and bias in its epilogue. The call's split partial
// sums are rows of Np, not N.
std::size_t exl3_rotated_bytes(std::int64_t padded_in);
void launch_exl3_matvec(const MatvecCall& call, const Exl3Weight& weight, void* rotated,
                        Stream stream);

// EXL3, prefill (exl3_reconstruct.cu), around a cuBLAS product in FP16:
// - the rotated inputs H(x * suh) of each row (Hadamard unnormalized) in
//   FP16, out[r * Kp + k], scaled by a power of two as launch_convert_inputs
//   scales, whose inverse goes to row_scales[r];
// - W^'s columns [n0, n1) (multiples of 16) in FP16, exactly:
//   w[k * ld + n - n0] for k < Kp;
// - the outputs from cuBLAS's products[r * ld + n - n0] for n in [n0, n1)
//   (n1 - n0 a multiple of 128): the output rotation, the 1/128 both
//   unnormalized rotations leave, row_scales, svh and the bias, into
//   out[r * N + n] for n < N.
void launch_exl3_rotate_inputs(const float* x, std::int64_t rows, std::int64_t in_features,
                               const Exl3Weight& weight, void* out, float* row_scales,
                               Stream stream);
void launch_exl3_reconstruct(const Exl3Weight& weight, std::int64_t n0, std::int64_t n1, void* w,
                             std::int64_t ld, Stream stream);
void launch_exl3_finish_outputs(const float* products, std::int64_t ld, std::int64_t rows,
                                const float* row_scales, const Exl3Weight& weight, std::int64_t n0,
                                std::int64_t n1, float* out, std::int64_t out_features,
                                const void* bias, DType bias_dtype, Stream stream);

// out[r * stride + k] = x[r * K + k] for k < K, and zero for k in [K, stride):
// rows aligned for the dense and GPTQ kernels' vector loads.
void launch_gather_inputs(const float* x, std::int64_t rows, std::int64_t in_features, float* out,
                          std::int64_t stride, Stream stream);
// out[r * stride + k] = x[r * K + perm[k]] (x[r * K + k] without perm) for
// k < K and zero for k in [K, stride), in `type` (F16 or BF16), each row multiplied by a
// power of two that brings its largest magnitude into [2^14, 2^15): no input
// overflows FP16, and the scaling itself is exact. row_scales[r] receives the
// inverse factor, which launch_finish_outputs applies to the products.
void launch_convert_inputs(const float* x, std::int64_t rows, std::int64_t in_features,
                           const std::int32_t* perm, DType type, void* out, std::int64_t stride,
                           float* row_scales, Stream stream);
// out[r, n] = out[r, n] * row_scales[r] * column_scales[n] + bias[n], each
// part optional, rounded after each step.
void launch_finish_outputs(float* out, std::int64_t rows, std::int64_t out_features,
                           const float* row_scales, const float* column_scales, const void* bias,
                           DType bias_dtype, Stream stream);

}  // namespace quire::kernels::cuda
