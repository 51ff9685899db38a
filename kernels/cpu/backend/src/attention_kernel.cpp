// The per-item kernel of CPU paged attention. The hot loops (scoring a key
// block, the softmax update, summing values; decoding the block is in
// attention_decode_block.cpp) are separate small
// functions, cloned per processor (simd.h), with fixed-size inner loops: GCC
// at -O2 vectorizes only loops whose trip count fits the vector width, and
// keeps a tile's sums in registers only in a function this small.
//
// Integer pages hold each 32-element group rotated by an orthonormal Hadamard
// transform H. Since H is symmetric and its own inverse, q . (H r) = (H q) . r
// and sum_j p_j (H r_j) = H (sum_j p_j r_j): the query is rotated once, scores
// and the weighted sum of values are taken on the stored levels directly, and
// the sum is rotated back once at the end.

#include "attention_kernel.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <utility>

#include "attention_math.h"
#include "attention_wide.h"
#include "quire/kernels/cpu/hadamard.h"
#include "quire/kernels/cpu/simd.h"

namespace quire::kernels::cpu_attention {
namespace {

using cpu_kv::Plane;

constexpr float kMinusInfinity = -std::numeric_limits<float>::infinity();
// Keys scored together against one lane group of queries.
constexpr int kKeyTile = 8;
static_assert(kKeyBlock % kKeyTile == 0);

// Eight floats, one lane group: GCC's vector type, so that each clone gets
// its own registers (one AVX register, or two SSE ones).
typedef float LaneVector __attribute__((vector_size(kLanes * sizeof(float))));
// The same at any float's address, for loads and stores.
typedef float LaneVectorAt __attribute__((vector_size(kLanes * sizeof(float)), aligned(4)));

// References, not values: a function returning a vector type would have a
// different calling convention in each clone.
QUIRE_CPU_INLINE const LaneVectorAt& lanes_at(const float* at) {
  return *reinterpret_cast<const LaneVectorAt*>(at);
}

QUIRE_CPU_INLINE LaneVectorAt& lanes_at(float* at) {
  return *reinterpret_cast<LaneVectorAt*>(at);
}

// scores[j][lane] = keys[j] . queries[lane] for j in [begin, end), begin a
// multiple of kKeyTile; keys and scores have rows up to the next multiple.
// Eight keys at a time keep eight independent sums: with four, each
// multiply-add waited on the one before it in its chain (about half the
// processor's multiply-add rate). Written with vector types because GCC
// spilled a plain [8][8] array to the stack.
QUIRE_CPU_CLONES void score_block(const float* __restrict queries, const float* __restrict keys,
                                  int dim, int begin, int end, float* __restrict scores) {
  for (int j = begin; j < end; j += kKeyTile) {
    const float* __restrict k = keys + j * dim;
    LaneVector sum[kKeyTile];
    for (int t = 0; t < kKeyTile; ++t)
      sum[t] = LaneVector{};
    for (int i = 0; i < dim; ++i) {
      const LaneVector q = lanes_at(queries + i * kLanes);
#pragma GCC unroll 8
      for (int t = 0; t < kKeyTile; ++t)
        sum[t] += k[t * dim + i] * q;
    }
    for (int t = 0; t < kKeyTile; ++t)
      lanes_at(scores + (j + t) * kLanes) = sum[t];
  }
}

// The online softmax step of one lane group over scores [begin, end] of the
// block whose first key is at `position`: keys outside a row's [first, last]
// get weight 0; the others exp(score - the row's new maximum). Writes how
// much each row's earlier sums shrink.
QUIRE_CPU_CLONES void softmax_block(float* __restrict scores, int begin, int end,
                                    std::int32_t position, const std::int32_t* __restrict first,
                                    const std::int32_t* __restrict last, float* __restrict maximum,
                                    float* __restrict total, float* __restrict correction) {
  float block_max[kLanes];
  for (int lane = 0; lane < kLanes; ++lane)
    block_max[lane] = kMinusInfinity;
  for (int j = begin; j <= end; ++j) {
    const std::int32_t key = position + j;
    for (int lane = 0; lane < kLanes; ++lane) {
      const bool valid = (first[lane] <= key) & (key <= last[lane]);
      const float score = choose(valid, scores[j * kLanes + lane], kMinusInfinity);
      block_max[lane] = choose(score > block_max[lane], score, block_max[lane]);
    }
  }
  float base[kLanes];
  for (int lane = 0; lane < kLanes; ++lane) {
    const float grown = std::max(maximum[lane], block_max[lane]);
    correction[lane] = grown == maximum[lane] ? 1.0f : std::exp(maximum[lane] - grown);
    maximum[lane] = grown;
    // A row without keys so far keeps weight 0 everywhere; any finite base does.
    base[lane] = grown == kMinusInfinity ? 0.0f : grown;
  }
  float sum[kLanes] = {};
  for (int j = begin; j <= end; ++j) {
    const std::int32_t key = position + j;
    for (int lane = 0; lane < kLanes; ++lane) {
      const bool valid = (first[lane] <= key) & (key <= last[lane]);
      const float weight =
          choose(valid, exp_nonpositive(scores[j * kLanes + lane] - base[lane]), 0.0f);
      scores[j * kLanes + lane] = weight;
      sum[lane] += weight;
    }
  }
  for (int lane = 0; lane < kLanes; ++lane)
    total[lane] = total[lane] * correction[lane] + sum[lane];
}

}  // namespace

// Eight scores to a step, so that the baseline clone vectorizes the loop too
// (GCC at -O2 vectorizes only fixed trip counts); the rest one at a time.
QUIRE_CPU_CLONES void cap_scores(float* __restrict scores, int count, float cap) {
  int i = 0;
  for (; i + kLanes <= count; i += kLanes) {
    for (int lane = 0; lane < kLanes; ++lane)
      scores[i + lane] = soft_cap_score(scores[i + lane], cap);
  }
  for (; i < count; ++i)
    scores[i] = soft_cap_score(scores[i], cap);
}

namespace {

template <int Width>
QUIRE_CPU_INLINE int accumulate_columns(const float* __restrict weights,
                                        const float* __restrict values, int dim, int begin, int end,
                                        float correction, float* __restrict sums, int column) {
  for (; column + Width <= dim; column += Width) {
    float sum[Width];
    for (int i = 0; i < Width; ++i)
      sum[i] = sums[column + i] * correction;
    for (int j = begin; j <= end; ++j) {
      const float weight = weights[j * kLanes];
      const float* __restrict value = values + j * dim + column;
#pragma GCC unroll 64
      for (int i = 0; i < Width; ++i)
        sum[i] += weight * value[i];
    }
    for (int i = 0; i < Width; ++i)
      sums[column + i] = sum[i];
  }
  return column;
}

// sums = sums * correction + sum over j in [begin, end] of weights[j * kLanes]
// * values[j] on the columns from `column` on: one row's update, its weights
// strided by the lane group.
QUIRE_CPU_CLONES void accumulate_values(const float* __restrict weights,
                                        const float* __restrict values, int dim, int begin, int end,
                                        float correction, float* __restrict sums, int column) {
  // 64 columns: eight AVX vectors of sums hide the latency of the additions.
  // (GCC 12 keeps 16 or 32 columns in scalar registers; 8 it vectorizes.)
  column = accumulate_columns<64>(weights, values, dim, begin, end, correction, sums, column);
  column = accumulate_columns<8>(weights, values, dim, begin, end, correction, sums, column);
  accumulate_columns<1>(weights, values, dim, begin, end, correction, sums, column);
}

// The same for four rows of a lane group (lanes [0, 4) of `weights`) over
// their common key range, on the first `columns` columns (a multiple of 16).
// Each value vector loaded feeds four rows' multiply-adds, where the one-row
// loop loaded a value for every multiply-add and waited on its loads. A key
// outside a row's own range has weight 0 there (softmax_block).
QUIRE_CPU_CLONES void accumulate_four_rows(const float* __restrict weights,
                                           const float* __restrict values, int dim, int begin,
                                           int end, const float* __restrict correction,
                                           float* __restrict sums, int columns) {
  constexpr int kRows = 4;
  for (int column = 0; column < columns; column += 2 * kLanes) {
    LaneVector sum[kRows][2];
    for (int r = 0; r < kRows; ++r) {
      for (int h = 0; h < 2; ++h)
        sum[r][h] = lanes_at(sums + r * dim + column + h * kLanes) * correction[r];
    }
    for (int j = begin; j <= end; ++j) {
      const LaneVector low = lanes_at(values + j * dim + column);
      const LaneVector high = lanes_at(values + j * dim + column + kLanes);
      const float* __restrict weight = weights + j * kLanes;
#pragma GCC unroll 4
      for (int r = 0; r < kRows; ++r) {
        sum[r][0] += weight[r] * low;
        sum[r][1] += weight[r] * high;
      }
    }
    for (int r = 0; r < kRows; ++r) {
      for (int h = 0; h < 2; ++h)
        lanes_at(sums + r * dim + column + h * kLanes) = sum[r][h];
    }
  }
}

void rotate_groups(float* values, int dim) {
  for (int g = 0; g < dim / 32; ++g)
    hadamard32(values + g * 32);
}

// Normalizes a row's sum of values into the output, rotating it back from
// integer pages.
void finish(const AttentionCall& call, std::int64_t token, int head, const float* sums, float total,
            std::vector<float>& row) {
  const int dim = call.dim;
  const float inverse = total > 0.0f ? 1.0f / total : 0.0f;
  std::copy(sums, sums + dim, row.begin());
  if (cpu_kv::is_integer(call.values.coding)) rotate_groups(row.data(), dim);
  float* target = call.out + (token * call.heads + head) * dim;
  for (int i = 0; i < dim; ++i)
    target[i] = row[std::size_t(i)] * inverse;
}

template <typename T>
void ensure(std::vector<T>& buffer, std::size_t size) {
  if (buffer.size() < size) buffer.resize(size);
}

}  // namespace

void attend(const AttentionCall& call, const AttentionItem& item, AttentionScratch& s) {
  if (attend_decode_rows(call, item, s)) return;
  const AttentionPlan& plan = *call.plan;
  const QueryBlock& block = plan.blocks[std::size_t(item.block)];
  const TokenBatch& batch = *call.batch;
  const int dim = call.dim;
  const int rows = static_cast<int>(block.end - block.begin) * call.group;
  const int groups = (rows + kLanes - 1) / kLanes;
  const auto size = [](int a, int b) { return static_cast<std::size_t>(a) * std::size_t(b); };
  ensure(s.queries, size(groups * kLanes, dim));
  ensure(s.keys, size(kKeyBlock, dim));
  ensure(s.values, size(kKeyBlock, dim));
  ensure(s.weights, size(groups * kLanes, kKeyBlock));
  ensure(s.sums, size(rows, dim));
  ensure(s.row, size(1, dim));
  for (auto* buffer : {&s.maximum, &s.total, &s.correction})
    ensure(*buffer, size(groups, kLanes));
  ensure(s.first, size(groups, kLanes));
  ensure(s.last, size(groups, kLanes));

  // Row r is token r / group of the block and query head r % group of the
  // item's K/V head. Queries are scaled here, and rotated for integer keys.
  const bool rotated_keys = cpu_kv::is_integer(call.keys.coding);
  for (int r = 0; r < groups * kLanes; ++r) {
    float* q = s.row.data();
    if (r < rows) {
      const std::int64_t token = plan.order[std::size_t(block.begin + r / call.group)];
      const int head = item.kv_head * call.group + r % call.group;
      const float* source = call.query + (token * call.heads + head) * dim;
      std::copy(source, source + dim, q);
      if (rotated_keys) rotate_groups(q, dim);
      s.first[std::size_t(r)] = plan.first[std::size_t(token)];
      s.last[std::size_t(r)] = last_visible_position(batch, token);
    } else {
      std::fill(q, q + dim, 0.0f);
      s.first[std::size_t(r)] = 1;  // no keys
      s.last[std::size_t(r)] = 0;
    }
    float* target = s.queries.data() + size(r / kLanes * dim, kLanes) + r % kLanes;
    for (int i = 0; i < dim; ++i)
      target[i * kLanes] = q[i] * call.scale;
    s.maximum[std::size_t(r)] = kMinusInfinity;
    s.total[std::size_t(r)] = 0.0f;
  }
  std::fill(s.sums.begin(), s.sums.begin() + std::ptrdiff_t(size(rows, dim)), 0.0f);

  const std::int32_t* table = batch.block_tables + std::int64_t{block.sequence} * batch.max_pages;
  const cpu_kv::Mirrored mirror =
      cpu_kv::mirrored_of(batch, call.keys.mirror_slots, block.sequence);
  for (std::int32_t start = item.first_key - item.first_key % kKeyBlock; start <= item.last_key;
       start += kKeyBlock) {
    const std::int32_t first = std::max(start, item.first_key);
    const std::int32_t last = std::min(start + kKeyBlock - 1, item.last_key);
    const int count = last - first + 1;
    decode_positions(call.keys, mirror, table, call.page_size, call.num_pages, item.kv_head, first,
                     count, s.keys.data());
    decode_positions(call.values, mirror, table, call.page_size, call.num_pages, item.kv_head,
                     first, count, s.values.data());
    // The keys of this block that some row of lane group g attends to; empty
    // when begin > end.
    const auto key_range = [&](int g) {
      const int lanes = std::min(kLanes, rows - g * kLanes);
      const std::int32_t* row_first = s.first.data() + g * kLanes;
      const std::int32_t* row_last = s.last.data() + g * kLanes;
      const std::int32_t group_first = *std::min_element(row_first, row_first + lanes);
      const std::int32_t group_last = *std::max_element(row_last, row_last + lanes);
      return std::pair{std::max(first, group_first) - first, std::min(last, group_last) - first};
    };
    const auto queries_of = [&](int g) { return s.queries.data() + size(g * dim, kLanes); };
    const auto weights_of = [&](int g) { return s.weights.data() + size(g * kKeyBlock, kLanes); };
    for (int g = 0; g < groups; ++g) {
      const auto [begin, end] = key_range(g);
      if (call.wide && g + 1 < groups) {
        // Two groups in one pass over their keys together; a group scores
        // keys outside its own range, which its softmax then ignores.
        const auto [next_begin, next_end] = key_range(g + 1);
        if (next_begin <= next_end) {
          const int low = begin <= end ? std::min(begin, next_begin) : next_begin;
          const int high = begin <= end ? std::max(end, next_end) : next_end;
          score_two_groups_wide(queries_of(g), queries_of(g + 1), s.keys.data(), dim,
                                low - low % kKeyTile, high + 1, weights_of(g), weights_of(g + 1));
          ++g;
          continue;
        }
      }
      if (begin <= end) {
        score_block(queries_of(g), s.keys.data(), dim, begin - begin % kKeyTile, end + 1,
                    weights_of(g));
      }
    }
    for (int g = 0; g < groups; ++g) {
      const int lanes = std::min(kLanes, rows - g * kLanes);
      const std::int32_t* row_first = s.first.data() + g * kLanes;
      const std::int32_t* row_last = s.last.data() + g * kLanes;
      const auto [begin, end] = key_range(g);
      if (begin > end) continue;
      float* weights = weights_of(g);
      // Capped in place, before the softmax masks keys and takes its maximum.
      if (call.softcap > 0.0f)
        cap_scores(weights + begin * kLanes, (end - begin + 1) * kLanes, call.softcap);
      if (call.wide) {
        softmax_block_wide(weights, begin, end, first, row_first, row_last,
                           s.maximum.data() + g * kLanes, s.total.data() + g * kLanes,
                           s.correction.data() + g * kLanes);
      } else {
        softmax_block(weights, begin, end, first, row_first, row_last,
                      s.maximum.data() + g * kLanes, s.total.data() + g * kLanes,
                      s.correction.data() + g * kLanes);
      }
      const float* correction = s.correction.data() + g * kLanes;
      float* sums = s.sums.data() + size(g * kLanes, dim);
      // Whole quads of rows together on the columns in whole 16s (32s with
      // 512-bit registers); the rest (rows, then columns) one row at a time.
      const int quad_width = call.wide ? 4 * kLanes : 2 * kLanes;
      const int quad_columns = dim / quad_width * quad_width;
      const int quad_rows = quad_columns > 0 ? lanes / 4 * 4 : 0;
      for (int lane = 0; lane < quad_rows; lane += 4) {
        const std::int32_t quad_first = *std::min_element(row_first + lane, row_first + lane + 4);
        const std::int32_t quad_last = *std::max_element(row_last + lane, row_last + lane + 4);
        const int quad_begin = std::max(first, quad_first) - first;
        const int quad_end = std::min(last, quad_last) - first;
        if (quad_begin > quad_end) continue;  // untouched: their corrections are 1
        if (call.wide) {
          accumulate_four_rows_wide(weights + lane, s.values.data(), dim, quad_begin, quad_end,
                                    correction + lane, sums + size(lane, dim), quad_columns);
        } else {
          accumulate_four_rows(weights + lane, s.values.data(), dim, quad_begin, quad_end,
                               correction + lane, sums + size(lane, dim), quad_columns);
        }
        if (quad_columns == dim) continue;
        for (int row = lane; row < lane + 4; ++row) {
          accumulate_values(weights + row, s.values.data(), dim, quad_begin, quad_end,
                            correction[row], sums + size(row, dim), quad_columns);
        }
      }
      for (int lane = quad_rows; lane < lanes; ++lane) {
        const int row_begin = std::max(first, row_first[lane]) - first;
        const int row_end = std::min(last, row_last[lane]) - first;
        if (row_begin > row_end) continue;  // untouched: its correction is 1
        accumulate_values(weights + lane, s.values.data(), dim, row_begin, row_end,
                          correction[lane], sums + size(lane, dim), 0);
      }
    }
  }

  for (int r = 0; r < rows; ++r) {
    const float* sums = s.sums.data() + size(r, dim);
    if (item.partial_row >= 0) {
      const std::int64_t at = item.partial_row + r;
      std::copy(sums, sums + dim, call.partial_values + at * dim);
      call.partial_max[at] = s.maximum[std::size_t(r)];
      call.partial_sum[at] = s.total[std::size_t(r)];
      continue;
    }
    const std::int64_t token = plan.order[std::size_t(block.begin + r / call.group)];
    finish(call, token, item.kv_head * call.group + r % call.group, sums, s.total[std::size_t(r)],
           s.row);
  }
}

void rotate_back(float* values, int dim) {
  rotate_groups(values, dim);
}

void merge_parts(const AttentionCall& call, const QueryBlock& block, int kv_head,
                 std::vector<float>& row) {
  const int dim = call.dim;
  const int rows = static_cast<int>(block.end - block.begin) * call.group;
  std::vector<float> sums(static_cast<std::size_t>(dim));
  for (int r = 0; r < rows; ++r) {
    std::fill(sums.begin(), sums.end(), 0.0f);
    float maximum = kMinusInfinity;
    float total = 0.0f;
    for (int part = 0; part < block.splits; ++part) {
      const AttentionItem& item =
          call.plan->items[std::size_t(block.first_item + kv_head * block.splits + part)];
      const std::int64_t at = item.partial_row + r;
      const float part_max = call.partial_max[at];
      if (part_max == kMinusInfinity) continue;  // none of the row's keys in this part
      const float grown = std::max(maximum, part_max);
      const float old_scale = std::exp(maximum - grown);
      const float part_scale = std::exp(part_max - grown);
      const float* values = call.partial_values + at * dim;
      for (int i = 0; i < dim; ++i)
        sums[std::size_t(i)] = sums[std::size_t(i)] * old_scale + values[i] * part_scale;
      total = total * old_scale + call.partial_sum[at] * part_scale;
      maximum = grown;
    }
    const std::int64_t token = call.plan->order[std::size_t(block.begin + r / call.group)];
    finish(call, token, kv_head * call.group + r % call.group, sums.data(), total, row);
  }
}

}  // namespace quire::kernels::cpu_attention
