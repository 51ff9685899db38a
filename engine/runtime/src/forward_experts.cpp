// The sparse MLP of Mixtral and Qwen3-MoE. The router's scores come to the
// host (a few floats per token), which picks each token's experts as
// transformers does -- softmax over every expert in FP32, the top k, their
// weights renormalized where the model asks -- and groups the tokens by
// expert. Each chosen expert then runs once over its rows: a prefill
// multiplies each expert's weights once for all the tokens routed to it, and
// a decode step reads only the experts its token chose.

#include <algorithm>
#include <cmath>
#include <numeric>
#include <vector>

#include "gated_activation.h"
#include "quire/engine/runtime/forward_pass.h"

namespace quire::engine {
namespace {

struct Route {
  std::vector<std::int32_t> rows;  // by expert, each expert's rows in order
  std::vector<float> weights;
  std::vector<std::int64_t> first;  // per expert, its first entry; experts + 1 values
};

Route route(const std::vector<float>& scores, std::int64_t tokens, const MixtureOfExperts& moe) {
  const int experts = moe.experts;
  const int k = moe.experts_per_token;
  std::vector<std::vector<std::pair<std::int32_t, float>>> by_expert(
      static_cast<std::size_t>(experts));
  std::vector<float> probabilities(static_cast<std::size_t>(experts));
  std::vector<int> order(static_cast<std::size_t>(experts));
  for (std::int64_t t = 0; t < tokens; ++t) {
    const float* row = scores.data() + t * experts;
    const float highest = *std::max_element(row, row + experts);
    float sum = 0.0f;
    for (int e = 0; e < experts; ++e) {
      probabilities[static_cast<std::size_t>(e)] = std::exp(row[e] - highest);
      sum += probabilities[static_cast<std::size_t>(e)];
    }
    for (float& p : probabilities)
      p /= sum;
    // The k most probable, the lower index first among equals.
    std::iota(order.begin(), order.end(), 0);
    std::partial_sort(order.begin(), order.begin() + k, order.end(), [&](int a, int b) {
      const float pa = probabilities[static_cast<std::size_t>(a)];
      const float pb = probabilities[static_cast<std::size_t>(b)];
      return pa > pb || (pa == pb && a < b);
    });
    float chosen = 0.0f;
    for (int j = 0; j < k; ++j)
      chosen += probabilities[static_cast<std::size_t>(order[static_cast<std::size_t>(j)])];
    for (int j = 0; j < k; ++j) {
      const int e = order[static_cast<std::size_t>(j)];
      float weight = probabilities[static_cast<std::size_t>(e)];
      if (moe.normalize_top_k) weight /= chosen;
      by_expert[static_cast<std::size_t>(e)].emplace_back(static_cast<std::int32_t>(t), weight);
    }
  }
  Route result;
  result.first.push_back(0);
  for (const auto& entries : by_expert) {
    for (const auto& [row, weight] : entries) {
      result.rows.push_back(row);
      result.weights.push_back(weight);
    }
    result.first.push_back(static_cast<std::int64_t>(result.rows.size()));
  }
  return result;
}

}  // namespace

void ForwardPass::run_experts(const LoadedLayer& layer, Scratch& s, std::int64_t count,
                              float* out) {
  const ModelConfig& c = model_.config;
  const int d = layer.device;
  const std::int64_t hidden = c.hidden_size;
  const std::int64_t inner = c.moe.intermediate_size;
  const float* h = s.h.as<float>();

  linear(d, h, token_segments_, *layer.router, s.router.as<float>());
  std::vector<float> scores(static_cast<std::size_t>(count * c.moe.experts));
  backend_.copy(scores.data(), -1, s.router.data(), d, scores.size() * sizeof(float));
  const Route routes = route(scores, count, c.moe);
  backend_.copy(s.route_rows.data(), d, routes.rows.data(), -1, routes.rows.size() * 4);
  backend_.copy(s.route_weights.data(), d, routes.weights.data(), -1, routes.weights.size() * 4);

  float* gate = s.gate.as<float>();
  float* up = s.up.as<float>();
  float* expert_in = s.expert_in.as<float>();
  float* expert_out = s.expert_out.as<float>();
  const kernels::GatedActivation activation = detail::gated_activation_of(c.activation);
  for (std::size_t e = 0; e < layer.experts.size(); ++e) {
    const std::int64_t first = routes.first[e];
    const std::int64_t rows = routes.first[e + 1] - first;
    if (rows == 0) continue;  // never read: no token chose it
    const LoadedExpert& expert = layer.experts[e];
    const std::int32_t* indices = s.route_rows.as<std::int32_t>() + first;
    backend_.gather_rows(d, h, hidden, indices, rows, expert_in);
    // The expert's rows (its tokens in order) cut as the step's are.
    std::vector<std::int32_t> row_sequence(static_cast<std::size_t>(rows));
    for (std::int64_t r = 0; r < rows; ++r) {
      row_sequence[static_cast<std::size_t>(r)] = token_sequence_[static_cast<std::size_t>(
          routes.rows[static_cast<std::size_t>(first + r)])];
    }
    const std::vector<RowSegment> segments =
        row_segments(row_sequence, sequence_kind_, backend_.invariant_decode_rows());
    const kernels::LinearWeight* gate_up[] = {&expert.gate, &expert.up};
    float* const gate_up_out[] = {gate, up};
    linear_many(d, expert_in, segments, gate_up, gate_up_out);
    backend_.gated_activation(d, activation, gate, up, rows * inner, gate);
    linear(d, gate, segments, expert.down, expert_out);
    backend_.scatter_add_rows(d, out, hidden, expert_out, indices,
                              s.route_weights.as<float>() + first, rows);
  }
}

}  // namespace quire::engine
