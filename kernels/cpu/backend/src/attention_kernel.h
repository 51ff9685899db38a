#pragma once

// Private to the CPU backend: one work item of paged attention (attention_plan.h).
//
// An item walks its key range in blocks of kKeyBlock keys. Each block's keys
// and values are decoded once into float scratch; the item's query rows (its
// tokens times the query heads of its K/V head) are scored against them with
// small dense products and folded in with an online softmax: a running
// maximum and sum per row, and the row's accumulated values rescaled whenever
// its maximum grows. Rows are handled eight at a time, one per vector lane,
// with their queries transposed, so that scores, masks and exponentials are
// vector operations across rows. Where 512-bit registers may be used
// (attention_wide.h), two lane groups are scored together, the softmax takes
// two keys to a register and four rows' values are summed 64 columns at once.

#include <cstdint>
#include <vector>

#include "attention_plan.h"
#include "kv_access.h"

namespace quire::kernels::cpu_attention {

// Rows a group of lanes holds; rows are padded to a multiple.
inline constexpr int kLanes = 8;

// What every item of one call shares.
struct AttentionCall {
  cpu_kv::Plane keys;
  cpu_kv::Plane values;
  const TokenBatch* batch = nullptr;
  const AttentionPlan* plan = nullptr;
  int page_size = 0;
  int num_pages = 0;
  int heads = 0;
  int group = 0;  // query heads per K/V head
  int dim = 0;
  float scale = 0.0f;
  float softcap = 0.0f;          // AttentionParams::softcap; 0: none
  const float* query = nullptr;  // [tokens, heads, dim]
  float* out = nullptr;          // [tokens, heads, dim]
  // Split items: per partial row, the unnormalized sum of values (in the
  // stored domain), the maximum score and the sum of weights.
  float* partial_values = nullptr;
  float* partial_max = nullptr;
  float* partial_sum = nullptr;
  // Whether the 512-bit products run (attention_wide.h).
  bool wide = false;
};

// Buffers of one thread, grown to the largest item it meets.
struct AttentionScratch {
  std::vector<float> queries;  // [rows / kLanes][dim][kLanes], scaled (and rotated)
  std::vector<float> keys;     // [kKeyBlock][dim]
  std::vector<float> values;   // [kKeyBlock][dim]
  std::vector<float> weights;  // [rows / kLanes][kKeyBlock][kLanes]: scores, then weights
  std::vector<float> sums;     // [rows][dim]
  std::vector<float> maximum, total, correction;  // [rows]
  std::vector<std::int32_t> first, last;          // [rows]: each row's keys
  std::vector<float> row;                         // [dim]
};

void attend(const AttentionCall& call, const AttentionItem& item, AttentionScratch& scratch);

// A token's head vector of a page in its stored domain (integer codings:
// rotated), as attention reads it: what fill_mirror copies into a mirror.
void decode_stored(const cpu_kv::Plane& plane, int page, int slot, int head, float* out);

// Head vectors of positions [first, first + count) of one head into
// out[count][dim] as floats in the stored domain (integer codings: rotated),
// the positions of the mirrored page from its FP16 mirror.
void decode_positions(const cpu_kv::Plane& plane, cpu_kv::Mirrored mirror,
                      const std::int32_t* table, int page_size, int num_pages, int head,
                      std::int32_t first, int count, float* out);
// The inverse (and same) rotation integer pages store their groups in:
// a 32-point Hadamard transform of each group of `dim`.
void rotate_back(float* values, int dim);

// scores[i] = soft_cap_score(scores[i], cap) for i < count (attention_math.h):
// between scoring and the softmax in both kernels, when the call caps.
void cap_scores(float* scores, int count, float cap);

// The item of a decode step (one token), with AVX2, FMA and F16C
// (attention_decode_rows.cpp): FP16 keys and values widened as they are read,
// other codings decoded a block at a time; false, with nothing done, where
// the item or the processor does not fit it. attend() tries it first.
// Whether attend_decode_rows can run on this processor (AVX2, FMA, F16C).
bool fp16_decode_supported();
bool attend_decode_rows(const AttentionCall& call, const AttentionItem& item,
                        AttentionScratch& scratch);

// Merges the parts of one split block for one K/V head into the output.
void merge_parts(const AttentionCall& call, const QueryBlock& block, int kv_head,
                 std::vector<float>& row);

}  // namespace quire::kernels::cpu_attention
