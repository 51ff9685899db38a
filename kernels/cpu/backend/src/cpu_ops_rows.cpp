// Row movements of the CPU backend: the column slices that split a fused
// projection's output (Phi-3's qkv_proj and gate_up_proj), and the gathers
// and weighted scatters that route tokens to the experts of a mixture and
// their outputs back.

#include <algorithm>
#include <stdexcept>
#include <string>

#include "quire/kernels/cpu/cpu_backend.h"

namespace quire::kernels {
namespace {

// Rows per parallel chunk so each holds roughly 16K elements of work.
std::int64_t grain_for(std::int64_t cols) {
  return std::max<std::int64_t>(1, 16384 / std::max<std::int64_t>(cols, 1));
}

// A row index from device memory: the CPU can see it before anything is
// written, so a bad one throws here rather than reading or writing outside.
// There is no row count to check the top against; negative is always wrong.
void check_rows(const std::int32_t* rows, std::int64_t count, const char* op) {
  for (std::int64_t i = 0; i < count; ++i) {
    if (rows[i] < 0) {
      throw std::out_of_range(std::string(op) + ": row index " + std::to_string(rows[i]) + " at " +
                              std::to_string(i) + " is negative");
    }
  }
}

}  // namespace

void CpuBackend::copy_columns(int device, const float* x, std::int64_t rows, std::int64_t width,
                              std::int64_t first, std::int64_t cols, float* out) {
  check_device(device);
  if (first < 0 || cols < 0 || first + cols > width) {
    throw std::invalid_argument("columns [" + std::to_string(first) + ", " +
                                std::to_string(first + cols) + ") lie outside rows " +
                                std::to_string(width) + " wide");
  }
  pool_.parallel_for(rows, grain_for(cols), [&](std::int64_t begin, std::int64_t end) {
    for (std::int64_t r = begin; r < end; ++r)
      std::copy_n(x + r * width + first, cols, out + r * cols);
  });
}

void CpuBackend::gather_rows(int device, const float* x, std::int64_t cols,
                             const std::int32_t* rows, std::int64_t count, float* out) {
  check_device(device);
  check_rows(rows, count, "gather_rows");
  pool_.parallel_for(count, grain_for(cols), [&](std::int64_t begin, std::int64_t end) {
    for (std::int64_t i = begin; i < end; ++i)
      std::copy_n(x + std::int64_t{rows[i]} * cols, cols, out + i * cols);
  });
}

void CpuBackend::scatter_add_rows(int device, float* x, std::int64_t cols, const float* y,
                                  const std::int32_t* rows, const float* weights,
                                  std::int64_t count) {
  check_device(device);
  check_rows(rows, count, "scatter_add_rows");
  // The rows of one call are distinct, so the chunks write disjoint rows.
  pool_.parallel_for(count, grain_for(cols), [&](std::int64_t begin, std::int64_t end) {
    for (std::int64_t i = begin; i < end; ++i) {
      float* target = x + std::int64_t{rows[i]} * cols;
      const float* source = y + i * cols;
      const float weight = weights[i];
      // A product, then a sum, each rounded (the baseline build has no FMA);
      // the CUDA kernel rounds them the same way.
      for (std::int64_t c = 0; c < cols; ++c)
        target[c] += weight * source[c];
    }
  });
}

}  // namespace quire::kernels
