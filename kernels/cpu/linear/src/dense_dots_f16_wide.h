#pragma once

// 512-bit twins of the AVX2 FP16 dot-product kernels of dense_dots_f16.cpp
// (one_dot, row_dots), giving the same bits. Callers check
// wide_vectors_allowed() and F16C first; x86-64 with GCC or Clang only.

#include <cstdint>

namespace quire::kernels::linear_detail {

#if defined(__x86_64__) && defined(__GNUC__)
// `next`: a row fetched into L1 meanwhile (nullptr: none).
void one_dot_wide(const float* x, const std::uint16_t* w, const std::uint16_t* next,
                  std::int64_t k_count, float* out);
// row_dots<inputs> for 1 to 4 inputs.
void row_dots_wide(int inputs, const float* x, std::int64_t x_stride, const std::uint16_t* w,
                   const std::uint16_t* next, std::int64_t k_count, float* out);
// The same sums for kBlockOutputs weight rows (k_count apart) at once:
// out[o * kBlockOutputs + r] for weight row o and input r (1 to 4 inputs);
// `next`: the next block's first row, its rows fetched into L2 meanwhile.
inline constexpr int kBlockOutputs = 4;
void block_dots_wide(int inputs, const float* x, std::int64_t x_stride, const std::uint16_t* w,
                     const std::uint16_t* next, std::int64_t k_count, float* out);
#endif

}  // namespace quire::kernels::linear_detail
