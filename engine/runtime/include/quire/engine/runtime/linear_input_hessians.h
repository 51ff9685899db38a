#pragma once

#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <vector>

#include "quire/cache/types.h"
#include "quire/kernels/linear_weight.h"

namespace quire::engine {

class ModelRuntime;

// The sum of x^T x over the inputs x a linear layer saw: the Hessian of
// its output error, which GPTQ-style quantizers (EXL3's LDLQ) weigh the
// weight's errors by.
struct LinearInputHessian {
  std::int64_t inputs = 0;  // K
  std::int64_t rows = 0;    // inputs summed
  std::vector<double> sum;  // [K, K], row-major, symmetric
};

// Watches the inputs of every decoder layer's projections and of the head
// while a runtime computes text, and sums x^T x for each. Projections that
// read the same input (q, k and v; gate and up) share one sum. Observes
// what is computed, so a window already in the cache adds nothing; run
// distinct text. Install one per runtime (without step graphs); it detaches
// when destroyed.
class LinearInputHessians {
 public:
  explicit LinearInputHessians(ModelRuntime& runtime);
  ~LinearInputHessians();
  LinearInputHessians(const LinearInputHessians&) = delete;
  LinearInputHessians& operator=(const LinearInputHessians&) = delete;

  // Runs `tokens` as one sequence (ModelRuntime::prefill) and observes it.
  void observe(std::span<const cache::TokenId> tokens);

  // The sum for a projection by its module name as Hugging Face names it
  // ("model.layers.3.self_attn.k_proj", "lm_head"), or null for one that
  // saw no input.
  const LinearInputHessian* find(const std::string& module) const;
  std::int64_t tokens_observed() const { return tokens_; }

 private:
  void record(const kernels::LinearWeight& weight, int device, const float* input,
              std::int64_t rows);

  ModelRuntime& runtime_;
  // The sum each projection's input goes to, and the one projection per
  // sum that adds to it (the first of those sharing an input).
  std::map<std::string, std::size_t> by_module_;
  std::map<const kernels::LinearWeight*, std::size_t> recorded_by_;
  std::vector<LinearInputHessian> sums_;
  std::vector<float> host_;
  std::int64_t tokens_ = 0;
};

}  // namespace quire::engine
