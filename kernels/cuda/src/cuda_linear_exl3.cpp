// LinearRunner's EXL3 products (Exl3Weight). Decode: the input rotation
// into fragments and the fused product (linear_exl3.cu), kMatvecMaxRows rows
// at a time. Prefill: rotated FP16 inputs, W^ reconstructed in FP16 a range
// of columns at a time (exact), cuBLAS, and the output rotation from a
// scratch of products into the outputs (exl3_reconstruct.cu). The padding
// of both dimensions stays inside the kernels and scratch buffers: x has K
// columns and out N.

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdint>

#include "cublas_library.h"
#include "cuda_linear.h"
#include "linear_ops.h"

namespace quire::kernels::cuda {
namespace {

// As cuda_linear.cpp's pieces: each cuBLAS operand (the FP16 inputs of a
// range of rows, the FP16 weights of a range of columns, and here the FP32
// products of both) within this size, and rows per cuBLAS call within its
// int dimensions.
constexpr std::int64_t kPieceBytes = std::int64_t{64} << 20;
constexpr std::int64_t kMaxRows = std::int64_t{1} << 20;
// Output rotations work on whole blocks of this many columns.
constexpr std::int64_t kRotationColumns = 128;

}  // namespace

void LinearRunner::exl3_fused_product(const float* x, std::int64_t rows, const LinearWeight& weight,
                                      const Exl3Weight& exl3, float* out) {
  MatvecCall call;
  call.in_features = weight.in_features;
  call.out_features = weight.out_features;
  call.bias = weight.bias;
  call.bias_dtype = weight.bias_dtype;
  call.sm_count = sm_count_;
  call.partial_capacity = matvec_partial_capacity(sm_count_);
  call.partials = static_cast<float*>(
      scratch(partials_, static_cast<std::size_t>(call.partial_capacity) * sizeof(float)));
  call.tile_counters = tile_counters();
  // The inputs are read one by one into the rotation, aligned or not.
  void* rotated = scratch(inputs_, exl3_rotated_bytes(exl3.padded_in));
  for (std::int64_t r0 = 0; r0 < rows; r0 += kMatvecMaxRows) {
    call.rows = static_cast<int>(std::min<std::int64_t>(kMatvecMaxRows, rows - r0));
    call.x = x + r0 * weight.in_features;
    call.x_stride = weight.in_features;
    call.out = out + r0 * weight.out_features;
    launch_exl3_matvec(call, exl3, rotated, stream_);
  }
}

void LinearRunner::cublas_exl3(Cublas& blas, const float* x, std::int64_t rows,
                               const LinearWeight& weight, const Exl3Weight& exl3, float* out) {
  const std::int64_t in = weight.in_features;
  const std::int64_t out_features = weight.out_features;
  const std::int64_t padded_in = exl3.padded_in;
  const std::int64_t padded_out = exl3.padded_out;

  // All columns when W^ fits in one piece, else whole rotation blocks.
  std::int64_t column_chunk = padded_out;
  if (padded_in * column_chunk * 2 > kPieceBytes) {
    column_chunk = std::max(kRotationColumns,
                            kPieceBytes / (padded_in * 2) / kRotationColumns * kRotationColumns);
  }
  // Rows whose FP16 inputs and FP32 products each fit in a piece.
  const std::int64_t row_chunk = std::clamp<std::int64_t>(
      std::min(kPieceBytes / (padded_in * 2), kPieceBytes / (column_chunk * 4)), 1, kMaxRows);
  const std::int64_t chunk_rows = std::min(rows, row_chunk);

  auto* row_scales =
      static_cast<float*>(scratch(row_scales_, static_cast<std::size_t>(rows) * sizeof(float)));
  void* inputs = scratch(inputs_, static_cast<std::size_t>(chunk_rows * padded_in * 2));
  void* weights = scratch(weights_, static_cast<std::size_t>(padded_in * column_chunk * 2));
  auto* products = static_cast<float*>(
      scratch(products_, static_cast<std::size_t>(chunk_rows * column_chunk) * sizeof(float)));

  const bool rotated_once = rows <= row_chunk;
  if (rotated_once) {
    launch_exl3_rotate_inputs(x, rows, in, exl3, inputs, row_scales, stream_);
  }
  for (std::int64_t n0 = 0; n0 < padded_out; n0 += column_chunk) {
    const std::int64_t columns = std::min(column_chunk, padded_out - n0);
    launch_exl3_reconstruct(exl3, n0, n0 + columns, weights, columns, stream_);
    for (std::int64_t r0 = 0; r0 < rows; r0 += row_chunk) {
      const std::int64_t count = std::min(row_chunk, rows - r0);
      if (!rotated_once) {
        launch_exl3_rotate_inputs(x + r0 * in, count, in, exl3, inputs, row_scales + r0, stream_);
      }
      blas.gemm(false, static_cast<int>(columns), static_cast<int>(count),
                static_cast<int>(padded_in), weights, static_cast<int>(columns), inputs,
                static_cast<int>(padded_in), DType::F16, products, static_cast<int>(columns));
      launch_exl3_finish_outputs(products, columns, count, row_scales + r0, exl3, n0, n0 + columns,
                                 out + r0 * out_features, out_features, weight.bias,
                                 weight.bias_dtype, stream_);
    }
  }
}

}  // namespace quire::kernels::cuda
