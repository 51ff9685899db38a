#pragma once

#include <cstdint>

// What a sampler needs from a row of logits when it does not fetch the whole
// row: the k highest logits with their ids, and a few numbers about the rest.
// Backend::top_logits produces them on the device that holds the logits; the
// functions here are the reference on host memory, and the CPU backend's op.
namespace quire::kernels {

// The most logits one row may return; the CUDA op sorts them in shared memory.
inline constexpr int kMaxTopLogits = 1024;

// The CUDA op's tail sum differs from this file's by at most this much,
// relative: its FP32 expf terms (2 ulps) are added in double, against the
// host's exp in double. Samplers that use the sum widen their margins by it.
inline constexpr double kTopLogitsTailSumTolerance = 1e-5;

// Per row. The ranking is by logit, highest first, ties to the lower id; NaN
// ranks below -inf, so the k returned are NaN only when the row holds fewer
// than k other values.
struct TopLogitsStats {
  // Over the tokens ranked after the k returned whose logit is neither NaN
  // nor -inf: the sum of exp((logit - values[0]) * inv_temperature). 0 when
  // values[0] (the row's maximum) is not finite.
  float tail_sum = 0;
  std::int32_t finite = 0;  // tokens whose logit is neither NaN nor -inf (+inf counts)
  std::int32_t nans = 0;    // tokens whose logit is NaN
  std::int32_t reserved = 0;
};

// Throws std::invalid_argument unless 1 <= k <= min(vocab, kMaxTopLogits)
// and rows >= 0.
void check_top_logits(std::int64_t rows, std::int64_t vocab, int k);

// Row r of logits [rows, vocab] gives values[r * k ..], ids[r * k ..] (the k
// highest, ranked) and stats[r]; inv_temperatures[r] scales its tail sum.
// Host memory throughout.
void top_logits_host(const float* logits, std::int64_t rows, std::int64_t vocab, int k,
                     const float* inv_temperatures, float* values, std::int32_t* ids,
                     TopLogitsStats* stats);

// out[i] = logits[rows[i] * vocab + ids[i]], or NaN where rows[i] lies outside
// [0, row_count) or ids[i] outside [0, vocab). Host memory throughout.
void gather_logits_host(const float* logits, std::int64_t row_count, std::int64_t vocab,
                        const std::int32_t* rows, const std::int32_t* ids, std::int64_t count,
                        float* out);

}  // namespace quire::kernels
