#pragma once

#include <memory>
#include <optional>
#include <span>
#include <vector>

#include "quire/cache/cache_format.h"
#include "quire/cache/types.h"
#include "quire/engine/runtime/model_description.h"
#include "quire/kernels/backend.h"

namespace quire::engine::selfcheck {

// What one backend computed for the check's prompt and its continuation.
struct ModelTrace {
  std::vector<std::vector<float>> prompt_rows;  // the logits of every prompt position
  // decision_rows[i] chose generated token i: the prompt's last row, then
  // the row of each decode step.
  std::vector<std::vector<float>> decision_rows;
  std::vector<cache::TokenId> best;  // the best token of each decision row
};

// Cache pages of this many tokens and prefill chunks of as many, so that a
// prompt of 40 tokens spans three pages and three chunks.
inline constexpr int kCheckPageSize = 16;

// The cache a trace runs with: FP16, or a coding with the residual window
// (one FP16 mirror slot), so that a coded cache's attention and its mirrors
// are compared too.
struct TraceCache {
  cache::CacheFormat format = cache::CacheFormat::FP16;
  int residual_window = 0;
};

// Runs the prompt in page-aligned chunks (every row of logits), then
// `generated - 1` decode steps of one token. Each step is fed the best token
// of the step before, or `fed[i - 1]` when given (the reference's tokens, so
// that the candidate's steps see the same context). `device` puts the whole
// model on that device; -1 leaves placement to the planner.
ModelTrace run_trace(const std::shared_ptr<const ModelDescription>& model,
                     kernels::Backend& backend, int device, std::span<const cache::TokenId> prompt,
                     int generated, const TraceCache& cache = {},
                     std::optional<std::span<const cache::TokenId>> fed = std::nullopt);

// The index of the largest value (the first of equal ones).
cache::TokenId best_token(std::span<const float> row);

}  // namespace quire::engine::selfcheck
