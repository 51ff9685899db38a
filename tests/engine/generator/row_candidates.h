#pragma once

// What the forward pass hands the sampler for one row of logits (its top-k
// candidates, tail statistics and the tokens the sampler's penalties touch),
// made on the host from a full row, for the suites that compare the
// candidate path with sampling the whole row.

#include <cstdint>
#include <vector>

#include "quire/engine/generator/sampler.h"
#include "quire/kernels/top_logits.h"

namespace quire::test {

// The candidates and their storage, kept alive together.
struct RowCandidates {
  std::vector<float> values;
  std::vector<std::int32_t> ids;
  kernels::TopLogitsStats stats;
  std::vector<std::int32_t> adjusted;
  std::vector<float> gathered;
  engine::LogitCandidates view;
};

// The top `k` of `row` (clamped to what the kernel takes) as `sampler` would
// get them. `tail_error` scales the tail sum by (1 + tail_error): a device's
// sum may be off by up to kTopLogitsTailSumTolerance either way.
void make_row_candidates(const std::vector<float>& row, int k, engine::Sampler& sampler,
                         const std::vector<std::int32_t>& context, RowCandidates& out,
                         double tail_error = 0);

}  // namespace quire::test
