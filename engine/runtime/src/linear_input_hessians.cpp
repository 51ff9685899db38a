#include "quire/engine/runtime/linear_input_hessians.h"

#include <initializer_list>
#include <utility>

#include "quire/engine/runtime/model_runtime.h"

namespace quire::engine {

LinearInputHessians::LinearInputHessians(ModelRuntime& runtime) : runtime_(runtime) {
  const LoadedModel& loaded = runtime.loaded();
  // Projections sharing an input, each with its module name; the first adds.
  using Named = std::pair<const kernels::LinearWeight*, std::string>;
  const auto share = [&](std::initializer_list<Named> members) {
    if (members.begin()->first->in_features <= 0) return;  // fused or absent
    const std::size_t index = sums_.size();
    const std::int64_t inputs = members.begin()->first->in_features;
    sums_.push_back({inputs, 0, std::vector<double>(std::size_t(inputs * inputs), 0.0)});
    recorded_by_[members.begin()->first] = index;
    for (const auto& [weight, name] : members)
      by_module_[name] = index;
  };
  for (std::size_t i = 0; i < loaded.layers.size(); ++i) {
    const LoadedLayer& layer = loaded.layers[i];
    const std::string prefix = "model.layers." + std::to_string(i) + ".";
    share({{&layer.q, prefix + "self_attn.q_proj"},
           {&layer.k, prefix + "self_attn.k_proj"},
           {&layer.v, prefix + "self_attn.v_proj"}});
    share({{&layer.o, prefix + "self_attn.o_proj"}});
    share({{&layer.gate, prefix + "mlp.gate_proj"}, {&layer.up, prefix + "mlp.up_proj"}});
    share({{&layer.down, prefix + "mlp.down_proj"}});
  }
  share({{&loaded.head, "lm_head"}});
  runtime_.forward().set_linear_observer(
      [this](const kernels::LinearWeight& weight, int device, const float* input,
             std::int64_t rows) { record(weight, device, input, rows); });
}

LinearInputHessians::~LinearInputHessians() {
  runtime_.forward().set_linear_observer({});
}

void LinearInputHessians::observe(std::span<const cache::TokenId> tokens) {
  runtime_.prefill(tokens, false);
  tokens_ += static_cast<std::int64_t>(tokens.size());
}

const LinearInputHessian* LinearInputHessians::find(const std::string& module) const {
  const auto found = by_module_.find(module);
  if (found == by_module_.end()) return nullptr;
  const LinearInputHessian& hessian = sums_[found->second];
  return hessian.rows > 0 ? &hessian : nullptr;
}

void LinearInputHessians::record(const kernels::LinearWeight& weight, int device,
                                 const float* input, std::int64_t rows) {
  const auto found = recorded_by_.find(&weight);
  if (found == recorded_by_.end()) return;
  LinearInputHessian& hessian = sums_[found->second];
  const std::int64_t k = hessian.inputs;
  host_.resize(static_cast<std::size_t>(rows * k));
  runtime_.backend().copy(host_.data(), -1, input, device, host_.size() * sizeof(float));
  // The upper triangle, row by row; mirrored once per call.
  double* sum = hessian.sum.data();
  for (std::int64_t r = 0; r < rows; ++r) {
    const float* x = host_.data() + r * k;
    for (std::int64_t i = 0; i < k; ++i) {
      const double xi = x[i];
      double* out = sum + i * k;
      for (std::int64_t j = i; j < k; ++j)
        out[j] += xi * double(x[j]);
    }
  }
  for (std::int64_t i = 0; i < k; ++i) {
    for (std::int64_t j = i + 1; j < k; ++j)
      sum[j * k + i] = sum[i * k + j];
  }
  hessian.rows += rows;
}

}  // namespace quire::engine
