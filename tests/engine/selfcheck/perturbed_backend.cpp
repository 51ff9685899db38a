#include "perturbed_backend.h"

#include <stdexcept>
#include <variant>

namespace quire::test {

std::vector<kernels::DeviceInfo> PerturbedBackend::devices() const {
  std::vector<kernels::DeviceInfo> devices = ForwardingBackend::devices();
  for (kernels::DeviceInfo& device : devices) {
    device.name = "Fake GPU " + std::to_string(device.index);
    device.architecture = architecture;
  }
  return devices;
}

void PerturbedBackend::forward(int, const char* op, const std::function<void()>& work) {
  if (faults.failing_op == op) throw std::runtime_error("the fake device failed");
  work();
}

void PerturbedBackend::perturb(int device, std::int64_t rows, const kernels::LinearWeight& weight,
                               float* out) const {
  if (faults.linear_scale == 1.0f || faults.mirrored_attention) return;
  if (faults.decode_only && rows != 1) return;
  if (faults.device >= 0 && faults.device != device) return;
  if (faults.fp8_only && !std::holds_alternative<kernels::Fp8Weight>(weight.format)) return;
  if (faults.exl3_only && !std::holds_alternative<kernels::Exl3Weight>(weight.format)) return;
  const std::int64_t count = rows * weight.out_features;
  for (std::int64_t i = 0; i < count; ++i)
    out[i] *= faults.linear_scale;
}

void PerturbedBackend::linear(int device, const float* x, std::int64_t rows,
                              const kernels::LinearWeight& weight, float* out,
                              kernels::ProductRows kind) {
  ++linear_calls;
  ForwardingBackend::linear(device, x, rows, weight, out, kind);
  perturb(device, rows, weight, out);
}

void PerturbedBackend::linear_many(int device, const float* x, std::int64_t rows,
                                   std::span<const kernels::LinearWeight* const> weights,
                                   std::span<float* const> outs, kernels::ProductRows kind) {
  ++linear_calls;
  ForwardingBackend::linear_many(device, x, rows, weights, outs, kind);
  for (std::size_t i = 0; i < weights.size(); ++i)
    perturb(device, rows, *weights[i], outs[i]);
}

void PerturbedBackend::paged_attention(int device, const kernels::KvLayerView& layer,
                                       const kernels::TokenBatch& batch, const float* query,
                                       const kernels::AttentionParams& params, float* out) {
  ForwardingBackend::paged_attention(device, layer, batch, query, params, out);
  if (!faults.mirrored_attention || batch.mirrored == nullptr || layer.mirrors.slot_count == 0)
    return;
  const std::int64_t count = batch.tokens * params.heads * layer.layout.head_dim;
  for (std::int64_t i = 0; i < count; ++i)
    out[i] *= faults.linear_scale;
}

}  // namespace quire::test
