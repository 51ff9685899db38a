#pragma once

// Private to the CPU backend: 512-bit versions of the two products of the
// attention kernel (attention_kernel.cpp), for processors with AVX-512 where
// wide_vectors_allowed() (simd.h) says so. The data layouts are those of the
// 256-bit code: queries [dim][kLanes] per lane group, scores and weights
// [key][kLanes], keys and values [key][dim], sums [row][dim].

#include <cstdint>

namespace quire::kernels::cpu_attention {

// score_block for two lane groups at once (a and b): each query vector of
// 16 rows meets a key value broadcast once, which halves the loads and
// instructions per multiply-add. Keys from `begin` (a multiple of 8) up to
// the next multiple of 8 at or after `end` are scored.
void score_two_groups_wide(const float* queries_a, const float* queries_b, const float* keys,
                           int dim, int begin, int end, float* scores_a, float* scores_b);

// accumulate_four_rows over `columns` columns, a multiple of 32.
void accumulate_four_rows_wide(const float* weights, const float* values, int dim, int begin,
                               int end, const float* correction, float* sums, int columns);

// softmax_block of one lane group, two keys to a register: the same
// function, its sums taken in another order.
void softmax_block_wide(float* scores, int begin, int end, std::int32_t position,
                        const std::int32_t* first, const std::int32_t* last, float* maximum,
                        float* total, float* correction);

}  // namespace quire::kernels::cpu_attention
