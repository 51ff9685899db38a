// CUDA kernels for the row movements of row_ops.h: one block per row (looping
// when there are more rows than blocks), its threads along the columns. The
// weighted scatter rounds its product and its sum separately, as the CPU
// does, rather than fusing them into one FMA.

#include <cuda_runtime.h>

#include <algorithm>

#include "quire/kernels/cuda/cuda_error.h"
#include "row_ops.h"

namespace quire::kernels::cuda {
namespace {

constexpr int kThreads = 256;
// Row kernels loop over rows, so the grid never needs to exceed this.
constexpr std::int64_t kMaxRowBlocks = 65535;

__global__ void __launch_bounds__(kThreads)
    copy_columns_kernel(const float* __restrict__ x, std::int64_t rows, std::int64_t width,
                        std::int64_t first, std::int64_t cols, float* __restrict__ out) {
  for (std::int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
    const float* source = x + r * width + first;
    for (std::int64_t c = threadIdx.x; c < cols; c += blockDim.x)
      out[r * cols + c] = source[c];
  }
}

__global__ void __launch_bounds__(kThreads)
    gather_rows_kernel(const float* __restrict__ x, std::int64_t cols,
                       const std::int32_t* __restrict__ rows, std::int64_t count,
                       float* __restrict__ out) {
  for (std::int64_t i = blockIdx.x; i < count; i += gridDim.x) {
    const std::int32_t row = rows[i];  // the same for the whole block
    for (std::int64_t c = threadIdx.x; c < cols; c += blockDim.x)
      out[i * cols + c] = row >= 0 ? x[std::int64_t{row} * cols + c] : 0.0f;
  }
}

__global__ void __launch_bounds__(kThreads)
    scatter_add_rows_kernel(float* __restrict__ x, std::int64_t cols, const float* __restrict__ y,
                            const std::int32_t* __restrict__ rows,
                            const float* __restrict__ weights, std::int64_t count) {
  for (std::int64_t i = blockIdx.x; i < count; i += gridDim.x) {
    const std::int32_t row = rows[i];
    if (row < 0) continue;  // the same for the whole block
    const float weight = weights[i];
    float* target = x + std::int64_t{row} * cols;
    for (std::int64_t c = threadIdx.x; c < cols; c += blockDim.x)
      target[c] = __fadd_rn(target[c], __fmul_rn(weight, y[i * cols + c]));
  }
}

unsigned row_blocks(std::int64_t rows) {
  return static_cast<unsigned>(std::min(rows, kMaxRowBlocks));
}

cudaStream_t as_stream(Stream stream) {
  return static_cast<cudaStream_t>(stream);
}

}  // namespace

void launch_copy_columns(const float* x, std::int64_t rows, std::int64_t width, std::int64_t first,
                         std::int64_t cols, float* out, Stream stream) {
  if (rows == 0 || cols == 0) return;
  copy_columns_kernel<<<row_blocks(rows), kThreads, 0, as_stream(stream)>>>(x, rows, width, first,
                                                                            cols, out);
  check(cudaGetLastError(), "copy_columns");
}

void launch_gather_rows(const float* x, std::int64_t cols, const std::int32_t* rows,
                        std::int64_t count, float* out, Stream stream) {
  if (count == 0 || cols == 0) return;
  gather_rows_kernel<<<row_blocks(count), kThreads, 0, as_stream(stream)>>>(x, cols, rows, count,
                                                                            out);
  check(cudaGetLastError(), "gather_rows");
}

void launch_scatter_add_rows(float* x, std::int64_t cols, const float* y, const std::int32_t* rows,
                             const float* weights, std::int64_t count, Stream stream) {
  if (count == 0 || cols == 0) return;
  scatter_add_rows_kernel<<<row_blocks(count), kThreads, 0, as_stream(stream)>>>(x, cols, y, rows,
                                                                                 weights, count);
  check(cudaGetLastError(), "scatter_add_rows");
}

}  // namespace quire::kernels::cuda
