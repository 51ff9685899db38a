// Decode steps with AVX2, FMA and F16C: the query heads of one K/V head held
// in registers.
//
// The general kernel (attention_kernel.cpp) decodes each block of keys and
// values into float scratch and scores eight query rows at once, one per
// vector lane: right for prefill, where a block serves many tokens, but a
// decode step has one token, so the rows are only the few query heads of one
// K/V head (often 1 to 4 of the 8 lanes). Here a key is dotted with each
// row's query along the head dimension, and each value is added into the
// rows' sums held in registers. FP16 keys and values are widened as they are
// read; the other codings (FP8, Q8, Q4, and mixed ones) are decoded a block
// at a time into float scratch, in the stored domain as the general kernel
// decodes them (integer pages rotated: the query is rotated once and the sums
// rotated back at the end), the residual window's page from its FP16 mirror.
// The online softmax is the general kernel's, with the same exponential, and
// so is the soft-capping of scores (cap_scores).

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>
#include <type_traits>

#include "attention_kernel.h"
#include "attention_math.h"
#include "quire/kernels/cpu/simd.h"

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define QUIRE_HAVE_F16_DECODE_PATH 1
#endif

namespace quire::kernels::cpu_attention {

#ifdef QUIRE_HAVE_F16_DECODE_PATH

namespace {

#define QUIRE_F16_DECODE __attribute__((target("avx2,fma,f16c")))
#define QUIRE_F16_DECODE_INLINE QUIRE_F16_DECODE __attribute__((always_inline)) inline

// Query heads per K/V head that this kernel takes; more go the general way.
constexpr int kMaxDecodeRows = 8;
constexpr float kMinusInfinity = -std::numeric_limits<float>::infinity();

QUIRE_F16_DECODE_INLINE __m256 widen8(const std::uint16_t* p) {
  return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
}

// Keys and values already decoded to float.
QUIRE_F16_DECODE_INLINE __m256 widen8(const float* p) {
  return _mm256_loadu_ps(p);
}

QUIRE_F16_DECODE_INLINE float horizontal_sum(__m256 v) {
  const __m128 pair = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  const __m128 two = _mm_add_ps(pair, _mm_movehl_ps(pair, pair));
  return _mm_cvtss_f32(_mm_add_ss(two, _mm_movehdup_ps(two)));
}

// exp_nonpositive (attention_math.h) on eight values.
QUIRE_F16_DECODE_INLINE __m256 exp_nonpositive8(__m256 x) {
  using namespace exp_constants;
  x = _mm256_min_ps(_mm256_max_ps(x, _mm256_set1_ps(kLowest)), _mm256_setzero_ps());
  const __m256 round = _mm256_set1_ps(kRound);
  const __m256 n =
      _mm256_sub_ps(_mm256_add_ps(_mm256_mul_ps(x, _mm256_set1_ps(kLog2e)), round), round);
  const __m256 r = _mm256_sub_ps(_mm256_sub_ps(x, _mm256_mul_ps(n, _mm256_set1_ps(kLn2High))),
                                 _mm256_mul_ps(n, _mm256_set1_ps(kLn2Low)));
  __m256 p = _mm256_set1_ps(kPolynomial[0]);
  for (int i = 1; i < 6; ++i)
    p = _mm256_add_ps(_mm256_mul_ps(p, r), _mm256_set1_ps(kPolynomial[i]));
  p = _mm256_add_ps(_mm256_add_ps(_mm256_mul_ps(p, _mm256_mul_ps(r, r)), r), _mm256_set1_ps(1.0f));
  const __m256i shift = _mm256_slli_epi32(_mm256_cvtps_epi32(n), 23);
  return _mm256_castsi256_ps(_mm256_add_epi32(_mm256_castps_si256(p), shift));
}

struct DecodeItem {
  const AttentionCall& call;
  int kv_head = 0;
  std::int64_t token = 0;
  std::int32_t first = 0;  // keys [first, last]
  std::int32_t last = -1;
  std::int64_t partial_row = -1;
};

// The head vectors of one block of positions: where they are stored (what
// is prefetched), and where they are read as E (the stored FP16 vectors, or
// float scratch they are decoded into).
template <typename E>
struct BlockPointers {
  std::int32_t first = 0;
  int count = 0;
  const std::uint8_t* stored_keys[kKeyBlock];
  const std::uint8_t* stored_values[kKeyBlock];
  const E* keys[kKeyBlock];
  const E* values[kKeyBlock];
};

// Fetches key and value j of the next block into L2 (nothing where it has
// fewer), one key at a time among the arithmetic of the current block. Not
// into L1: one head's keys and values of a 64-key block are 16 KiB, and with
// the next block fetched beside it a 32 KiB L1 evicted the current block's
// values before they were added (decode of the 96M EXL2 4.0 shape after
// 4,096 tokens: 99 tokens/s fetching into L1, 172 into L2, 2-thread Zen 4).
// Nor all at once: 256 prefetches filled the miss buffers, and the current
// block's own loads waited behind them.
template <typename E>
QUIRE_F16_DECODE_INLINE void prefetch_head(const BlockPointers<E>& next, int j, std::size_t bytes) {
  if (j >= next.count) return;
  for (std::size_t offset = 0; offset < bytes; offset += 64) {
    _mm_prefetch(reinterpret_cast<const char*>(next.stored_keys[j]) + offset, _MM_HINT_T1);
    _mm_prefetch(reinterpret_cast<const char*>(next.stored_values[j]) + offset, _MM_HINT_T1);
  }
}

// scores[r][j] = q_r . k_j for the `count` keys of a block, two keys at a
// time so that the chains of multiply-adds overlap; the next block is
// fetched meanwhile (prefetch_head).
template <int R, typename E>
QUIRE_F16_DECODE void score_keys(const float* queries, const E* const* keys, int count, int dim,
                                 const BlockPointers<E>& next, std::size_t head_bytes,
                                 float (*scores)[kKeyBlock]) {
  int j = 0;
  for (; j + 2 <= count; j += 2) {
    prefetch_head(next, j, head_bytes);
    prefetch_head(next, j + 1, head_bytes);
    __m256 a[R], b[R];
#pragma GCC unroll 8
    for (int r = 0; r < R; ++r)
      a[r] = b[r] = _mm256_setzero_ps();
    for (int c = 0; c < dim; c += 8) {
      const __m256 ka = widen8(keys[j] + c);
      const __m256 kb = widen8(keys[j + 1] + c);
#pragma GCC unroll 8
      for (int r = 0; r < R; ++r) {
        const __m256 q = _mm256_loadu_ps(queries + r * dim + c);
        a[r] = _mm256_fmadd_ps(ka, q, a[r]);
        b[r] = _mm256_fmadd_ps(kb, q, b[r]);
      }
    }
#pragma GCC unroll 8
    for (int r = 0; r < R; ++r) {
      scores[r][j] = horizontal_sum(a[r]);
      scores[r][j + 1] = horizontal_sum(b[r]);
    }
  }
  for (; j < count; ++j) {
    prefetch_head(next, j, head_bytes);
    __m256 a[R];
#pragma GCC unroll 8
    for (int r = 0; r < R; ++r)
      a[r] = _mm256_setzero_ps();
    for (int c = 0; c < dim; c += 8) {
      const __m256 k = widen8(keys[j] + c);
#pragma GCC unroll 8
      for (int r = 0; r < R; ++r)
        a[r] = _mm256_fmadd_ps(k, _mm256_loadu_ps(queries + r * dim + c), a[r]);
    }
#pragma GCC unroll 8
    for (int r = 0; r < R; ++r)
      scores[r][j] = horizontal_sum(a[r]);
  }
}

// sums[r][c] = sums[r][c] * correction[r] + sum_j weights[r][j] * v_j[c] for
// W vectors of columns from `column` on, the sums in registers throughout.
template <int R, int W, typename E>
QUIRE_F16_DECODE_INLINE void add_values(const float (*weights)[kKeyBlock], const E* const* values,
                                        int count, int column, int dim, const float* correction,
                                        float* sums) {
  __m256 acc[R][W];
#pragma GCC unroll 8
  for (int r = 0; r < R; ++r) {
    const __m256 scale = _mm256_set1_ps(correction[r]);
#pragma GCC unroll 8
    for (int w = 0; w < W; ++w)
      acc[r][w] = _mm256_mul_ps(_mm256_loadu_ps(sums + r * dim + column + 8 * w), scale);
  }
  for (int j = 0; j < count; ++j) {
    __m256 v[W];
#pragma GCC unroll 8
    for (int w = 0; w < W; ++w)
      v[w] = widen8(values[j] + column + 8 * w);
#pragma GCC unroll 8
    for (int r = 0; r < R; ++r) {
      const __m256 weight = _mm256_broadcast_ss(&weights[r][j]);
#pragma GCC unroll 8
      for (int w = 0; w < W; ++w)
        acc[r][w] = _mm256_fmadd_ps(weight, v[w], acc[r][w]);
    }
  }
#pragma GCC unroll 8
  for (int r = 0; r < R; ++r) {
#pragma GCC unroll 8
    for (int w = 0; w < W; ++w)
      _mm256_storeu_ps(sums + r * dim + column + 8 * w, acc[r][w]);
  }
}

// As many columns per pass as keep R * W sums in registers.
template <int R, typename E>
QUIRE_F16_DECODE void add_block_values(const float (*weights)[kKeyBlock], const E* const* values,
                                       int count, int dim, const float* correction, float* sums) {
  constexpr int W = R == 1 ? 4 : (R <= 3 ? 3 : (R <= 5 ? 2 : 1));
  int column = 0;
  for (; column + 8 * W <= dim; column += 8 * W)
    add_values<R, W, E>(weights, values, count, column, dim, correction, sums);
  for (; column < dim; column += 8)
    add_values<R, 1, E>(weights, values, count, column, dim, correction, sums);
}

// Where the head vectors of positions [first, first + count) are stored.
void head_pointers(const cpu_kv::Plane& plane, const std::int32_t* table, int page_size,
                   int num_pages, int head, std::int32_t first, int count,
                   const std::uint8_t** out) {
  for (int j = 0; j < count; ++j) {
    const std::int32_t position = first + j;
    const std::int32_t page = table[position / page_size];
    if (page < 0 || page >= num_pages) {
      throw std::out_of_range("page table entry " + std::to_string(page) + " is not a page");
    }
    out[j] = plane.head_data(page, position % page_size, head);
  }
}

// E = std::uint16_t: FP16 keys and values read where they are stored;
// float: decoded into s.keys and s.values a block at a time.
template <int R, typename E>
QUIRE_F16_DECODE void attend_rows(const DecodeItem& item, AttentionScratch& s) {
  const AttentionCall& call = item.call;
  const int dim = call.dim;
  const std::size_t size = std::size_t(R) * std::size_t(dim);
  if (s.queries.size() < size) s.queries.resize(size);
  if (s.sums.size() < size) s.sums.resize(size);
  float* queries = s.queries.data();
  float* sums = s.sums.data();
  const int first_head = item.kv_head * call.group;
#pragma GCC unroll 8
  for (int r = 0; r < R; ++r) {
    const float* source = call.query + (item.token * call.heads + first_head + r) * dim;
    for (int i = 0; i < dim; ++i)
      queries[r * dim + i] = source[i] * call.scale;
    if (cpu_kv::is_integer(call.keys.coding)) rotate_back(queries + r * dim, dim);
  }
  std::fill(sums, sums + size, 0.0f);
  float maximum[R], total[R], correction[R];
#pragma GCC unroll 8
  for (int r = 0; r < R; ++r) {
    maximum[r] = kMinusInfinity;
    total[r] = 0.0f;
  }

  const TokenBatch& batch = *call.batch;
  const std::int32_t sequence = batch.token_sequence[item.token];
  const std::int32_t* table = batch.block_tables + std::int64_t{sequence} * batch.max_pages;
  alignas(32) float weights[R][kKeyBlock];
  // The head vectors of this block and the next: the next block's are
  // prefetched while this one is computed, since consecutive positions lie a
  // token's K/V of every head apart (and pages anywhere), a pattern the
  // hardware prefetcher follows poorly.
  BlockPointers<E> blocks[2];
  const auto locate = [&](std::int32_t start, BlockPointers<E>& block) {
    block.first = std::max(start, item.first);
    block.count = std::min(start + kKeyBlock - 1, item.last) - block.first + 1;
    if (block.count <= 0) return;
    head_pointers(call.keys, table, call.page_size, call.num_pages, item.kv_head, block.first,
                  block.count, block.stored_keys);
    head_pointers(call.values, table, call.page_size, call.num_pages, item.kv_head, block.first,
                  block.count, block.stored_values);
    for (int j = 0; j < block.count; ++j) {
      if constexpr (std::is_same_v<E, std::uint16_t>) {
        block.keys[j] = reinterpret_cast<const std::uint16_t*>(block.stored_keys[j]);
        block.values[j] = reinterpret_cast<const std::uint16_t*>(block.stored_values[j]);
      } else {
        block.keys[j] = s.keys.data() + std::size_t(j) * std::size_t(dim);
        block.values[j] = s.values.data() + std::size_t(j) * std::size_t(dim);
      }
    }
  };
  const std::size_t stored_bytes = std::max(call.keys.head_bytes(), call.values.head_bytes());
  const cpu_kv::Mirrored mirror = cpu_kv::mirrored_of(batch, call.keys.mirror_slots, sequence);
  if constexpr (!std::is_same_v<E, std::uint16_t>) {
    const std::size_t block_size = std::size_t(kKeyBlock) * std::size_t(dim);
    if (s.keys.size() < block_size) s.keys.resize(block_size);
    if (s.values.size() < block_size) s.values.resize(block_size);
  }
  std::int32_t start = item.first - item.first % kKeyBlock;
  if (start <= item.last) {
    locate(start, blocks[0]);
    for (int j = 0; j < blocks[0].count; ++j)
      prefetch_head(blocks[0], j, stored_bytes);
  }
  for (int current = 0; start <= item.last; start += kKeyBlock, current ^= 1) {
    const BlockPointers<E>& block = blocks[current];
    blocks[current ^ 1].count = 0;
    if (start + kKeyBlock <= item.last) locate(start + kKeyBlock, blocks[current ^ 1]);
    const int count = block.count;
    if constexpr (!std::is_same_v<E, std::uint16_t>) {
      decode_positions(call.keys, mirror, table, call.page_size, call.num_pages, item.kv_head,
                       block.first, count, s.keys.data());
      decode_positions(call.values, mirror, table, call.page_size, call.num_pages, item.kv_head,
                       block.first, count, s.values.data());
    }
    const E* const* values = block.values;
    score_keys<R, E>(queries, block.keys, count, dim, blocks[current ^ 1], stored_bytes, weights);
#pragma GCC unroll 8
    for (int r = 0; r < R; ++r) {
      float* row = weights[r];
      if (call.softcap > 0.0f) cap_scores(row, count, call.softcap);
      const float grown = std::max(maximum[r], *std::max_element(row, row + count));
      correction[r] = grown == maximum[r] ? 1.0f : std::exp(maximum[r] - grown);
      maximum[r] = grown;
      const __m256 base = _mm256_set1_ps(grown);
      __m256 sum8 = _mm256_setzero_ps();
      int j = 0;
      for (; j + 8 <= count; j += 8) {
        const __m256 weight = exp_nonpositive8(_mm256_sub_ps(_mm256_loadu_ps(row + j), base));
        _mm256_storeu_ps(row + j, weight);
        sum8 = _mm256_add_ps(sum8, weight);
      }
      float sum = horizontal_sum(sum8);
      for (; j < count; ++j) {
        row[j] = exp_nonpositive(row[j] - grown);
        sum += row[j];
      }
      total[r] = total[r] * correction[r] + sum;
    }
    add_block_values<R, E>(weights, values, count, dim, correction, sums);
  }

#pragma GCC unroll 8

  for (int r = 0; r < R; ++r) {
    const float* row = sums + r * dim;
    if (item.partial_row >= 0) {
      const std::int64_t at = item.partial_row + r;
      std::copy(row, row + dim, call.partial_values + at * dim);
      call.partial_max[at] = maximum[r];
      call.partial_sum[at] = total[r];
      continue;
    }
    // As finish() in attention_kernel.cpp: rotated back from integer
    // pages, then divided by the total.
    if (cpu_kv::is_integer(call.values.coding)) rotate_back(sums + r * dim, dim);
    const float inverse = total[r] > 0.0f ? 1.0f / total[r] : 0.0f;
    float* target = call.out + (item.token * call.heads + first_head + r) * dim;
    for (int i = 0; i < dim; ++i)
      target[i] = row[i] * inverse;
  }
}

}  // namespace

bool fp16_decode_supported() {
  static const bool supported =
      __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && processor_has_f16c();
  return supported;
}

namespace {

template <typename E>
void attend_group_rows(int group, const DecodeItem& decode, AttentionScratch& scratch) {
  switch (group) {
    case 1:
      attend_rows<1, E>(decode, scratch);
      break;
    case 2:
      attend_rows<2, E>(decode, scratch);
      break;
    case 3:
      attend_rows<3, E>(decode, scratch);
      break;
    case 4:
      attend_rows<4, E>(decode, scratch);
      break;
    case 5:
      attend_rows<5, E>(decode, scratch);
      break;
    case 6:
      attend_rows<6, E>(decode, scratch);
      break;
    case 7:
      attend_rows<7, E>(decode, scratch);
      break;
    default:
      attend_rows<8, E>(decode, scratch);
      break;
  }
}

}  // namespace

bool attend_decode_rows(const AttentionCall& call, const AttentionItem& item,
                        AttentionScratch& scratch) {
  if (call.group > kMaxDecodeRows || call.dim % 8 != 0 || !fp16_decode_supported()) return false;
  const AttentionPlan& plan = *call.plan;
  const QueryBlock& block = plan.blocks[std::size_t(item.block)];
  if (block.end - block.begin != 1) return false;
  const std::int64_t token = plan.order[std::size_t(block.begin)];
  // The item's keys, within the token's own range (its window and position).
  const DecodeItem decode{call,
                          item.kv_head,
                          token,
                          std::max(item.first_key, plan.first[std::size_t(token)]),
                          std::min(item.last_key, last_visible_position(*call.batch, token)),
                          item.partial_row};
  if (call.keys.coding == KvCoding::Fp16 && call.values.coding == KvCoding::Fp16) {
    attend_group_rows<std::uint16_t>(call.group, decode, scratch);
  } else {
    attend_group_rows<float>(call.group, decode, scratch);
  }
  return true;
}

#else

bool fp16_decode_supported() {
  return false;
}

bool attend_decode_rows(const AttentionCall&, const AttentionItem&, AttentionScratch&) {
  return false;
}

#endif

}  // namespace quire::kernels::cpu_attention
