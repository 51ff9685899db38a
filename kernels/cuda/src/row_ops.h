#pragma once

#include <cstdint>

// Launchers of the CUDA row movements, with the CPU backend's semantics
// (kernels/cpu/backend/src/cpu_ops_rows.cpp): the column slices of a fused
// projection's output, and the gathers and weighted scatters of a mixture of
// experts. CudaBackend checks the arguments it can see first; all pointers
// are device pointers and the work is queued on `stream` (a cudaStream_t), so
// this header needs no CUDA.

namespace quire::kernels::cuda {

using Stream = void*;

// out[r, 0:cols] = x[r, first : first + cols] for r < rows, x's rows `width` wide.
void launch_copy_columns(const float* x, std::int64_t rows, std::int64_t width, std::int64_t first,
                         std::int64_t cols, float* out, Stream stream);
// out[i, :] = x[rows[i], :]. A negative rows[i] gives a row of zeros (the
// CPU backend throws for it; a kernel cannot).
void launch_gather_rows(const float* x, std::int64_t cols, const std::int32_t* rows,
                        std::int64_t count, float* out, Stream stream);
// x[rows[i], :] += weights[i] * y[i, :], rows distinct. A negative rows[i]
// is skipped (the CPU backend throws for it).
void launch_scatter_add_rows(float* x, std::int64_t cols, const float* y, const std::int32_t* rows,
                             const float* weights, std::int64_t count, Stream stream);

}  // namespace quire::kernels::cuda
