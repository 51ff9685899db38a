#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "quire/kernels/cpu/thread_pool.h"
#include "quire/kernels/linear_weight.h"

namespace quire::kernels {

// out[rows, N] = x[rows, K] W^T + bias, accumulated in FP32, with every pointer
// of `weight` in host memory. Quantized weights are decoded tile by tile inside
// the product, never expanded into a full copy. Work is spread over `pool` by
// output columns, and by rows when there are many. Throws std::invalid_argument
// for a descriptor that cannot be right (missing pointers, groups that do not
// cover K, a bit width or dtype the format does not have). `out` must not
// overlap `x`. Decode rows (ProductRows) of EXL2 weights take 8-bit inputs
// where the processor has AVX2, for any number of rows up to the few-row
// limit; prompt rows keep the float and 16-bit products.
void linear(ThreadPool& pool, const float* x, std::int64_t rows, const LinearWeight& weight,
            float* out, ProductRows kind = ProductRows::prompt);

// Products of up to this many decode rows of FP16 or EXL2 weights give each
// row the bits it gets alone (the few-row kernels); more rows go through the
// batched products, which sum in another order.
inline constexpr std::int64_t kInvariantDecodeRows = 16;

// out[i] = x W_i^T + bias_i for several weights over the same input (a
// layer's q, k and v projections, or gate and up): decode steps of EXL2
// weights share one parallel loop, so that small products fill the threads
// together. Results equal those of linear() for each weight. `outs` must not
// overlap `x` or each other.
void linear_many(ThreadPool& pool, const float* x, std::int64_t rows,
                 std::span<const LinearWeight* const> weights, std::span<float* const> outs,
                 ProductRows kind = ProductRows::prompt);

// The weight as a dense [N, K] row-major FP32 matrix (the bias is not applied):
// the reference the products are tested against, and a debugging aid. Checks
// the descriptor like linear().
std::vector<float> dequantize(const LinearWeight& weight);

// Which instruction-set path each kind of product takes on this processor:
// (product, path) pairs such as ("batched (prefill) products", "AVX2+FMA,
// 6x16 register blocks"), so that a benchmark says what it measured.
std::vector<std::pair<std::string, std::string>> linear_kernel_paths();

}  // namespace quire::kernels
