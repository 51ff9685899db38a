#pragma once

#include <string>

#include "quire/kernels/backend.h"

namespace quire::engine::selfcheck {

// The outcome of comparing a backend with the CPU on a tiny random model.
struct SelfCheckResult {
  bool passed = false;
  // False when the comparison could not be carried to its end (an error on
  // the candidate, such as a CUDA error or a device out of memory, or on the
  // way to it): then nothing is known about the results, only that this run
  // cannot trust the backend.
  bool completed = false;
  std::string summary;  // one line, for a status line or standard error
  std::string details;  // several lines, for a log a user can attach to a report
};

struct ComparisonOptions {
  // Named in the details, so that a log says which Quire produced it.
  std::string quire_version;
  // The CUDA backend rounds prefill products' inputs to FP16 (about 1e-3 of
  // a product's scale); a wrong position, page or layer moves logits by their
  // own size. Relative to the row's largest |logit| (at least 1).
  float tolerance = 1e-2f;
};

// Runs a tiny random model (written into a temporary directory and removed
// afterwards) on every device of `candidate` in turn and on `reference`:
// with FP16 weights and an FP16 cache, again with a Q8 cache whose open page
// is read from the residual window's FP16 copy, and with FP8 weights where
// both backends take them. Each is a
// prompt of 40 tokens in page-aligned chunks over several pages, with the
// logits of every position compared, then 16 greedy tokens, where each decode
// step of the candidate is fed the reference's tokens so that every step's
// logits and best token can be compared. Only a near tie (the two tokens'
// reference logits within the tolerance) may pick another token. Never
// throws for what happens on the candidate: that is the result.
SelfCheckResult compare_backends(kernels::Backend& candidate, kernels::Backend& reference,
                                 const ComparisonOptions& options = {});

}  // namespace quire::engine::selfcheck
