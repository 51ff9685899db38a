#include "perturbed_backend.h"

#include <stdexcept>

namespace quire::test {

std::vector<kernels::DeviceInfo> PerturbedBackend::devices() const {
  std::vector<kernels::DeviceInfo> devices = inner_.devices();
  for (kernels::DeviceInfo& device : devices) {
    device.name = "Fake GPU " + std::to_string(device.index);
    device.architecture = architecture;
  }
  return devices;
}

void PerturbedBackend::maybe_fail(const char* op) const {
  if (faults.failing_op == op) throw std::runtime_error("the fake device failed");
}

void PerturbedBackend::perturb(int device, std::int64_t rows, std::int64_t count,
                               float* out) const {
  if (faults.linear_scale == 1.0f) return;
  if (faults.decode_only && rows != 1) return;
  if (faults.device >= 0 && faults.device != device) return;
  for (std::int64_t i = 0; i < count; ++i)
    out[i] *= faults.linear_scale;
}

kernels::DeviceBuffer PerturbedBackend::allocate(int device, std::size_t bytes,
                                                 std::string_view purpose) {
  return inner_.allocate(device, bytes, purpose);
}

void PerturbedBackend::copy(void* destination, int destination_device, const void* source,
                            int source_device, std::size_t bytes) {
  inner_.copy(destination, destination_device, source, source_device, bytes);
}

void PerturbedBackend::fill_zero(int device, void* data, std::size_t bytes) {
  inner_.fill_zero(device, data, bytes);
}

void PerturbedBackend::synchronize(int device) {
  inner_.synchronize(device);
}

void PerturbedBackend::embedding(int device, const kernels::DenseWeight& table, std::int64_t vocab,
                                 std::int64_t hidden, const std::int32_t* tokens,
                                 std::int64_t count, float* out) {
  inner_.embedding(device, table, vocab, hidden, tokens, count, out);
}

void PerturbedBackend::rms_norm(int device, const float* x, const kernels::DenseWeight& weight,
                                float eps, std::int64_t rows, std::int64_t cols, float* out) {
  inner_.rms_norm(device, x, weight, eps, rows, cols, out);
}

void PerturbedBackend::linear(int device, const float* x, std::int64_t rows,
                              const kernels::LinearWeight& weight, float* out) {
  ++linear_calls;
  inner_.linear(device, x, rows, weight, out);
  perturb(device, rows, rows * weight.out_features, out);
}

void PerturbedBackend::linear_many(int device, const float* x, std::int64_t rows,
                                   std::span<const kernels::LinearWeight* const> weights,
                                   std::span<float* const> outs) {
  ++linear_calls;
  inner_.linear_many(device, x, rows, weights, outs);
  for (std::size_t i = 0; i < weights.size(); ++i)
    perturb(device, rows, rows * weights[i]->out_features, outs[i]);
}

void PerturbedBackend::rope(int device, float* x, std::int64_t tokens, int heads, int head_dim,
                            const std::int32_t* positions, const kernels::RopeParams& rope) {
  inner_.rope(device, x, tokens, heads, head_dim, positions, rope);
}

void PerturbedBackend::silu_mul(int device, const float* gate, const float* up, std::int64_t count,
                                float* out) {
  inner_.silu_mul(device, gate, up, count, out);
}

void PerturbedBackend::add(int device, float* x, const float* y, std::int64_t count) {
  inner_.add(device, x, y, count);
}

void PerturbedBackend::write_kv(int device, const kernels::KvLayerView& layer,
                                const kernels::TokenBatch& batch, const float* key,
                                const float* value) {
  inner_.write_kv(device, layer, batch, key, value);
}

void PerturbedBackend::paged_attention(int device, const kernels::KvLayerView& layer,
                                       const kernels::TokenBatch& batch, const float* query,
                                       const kernels::AttentionParams& params, float* out) {
  maybe_fail("paged_attention");
  inner_.paged_attention(device, layer, batch, query, params, out);
}

void PerturbedBackend::copy_page_tokens(int device, const kernels::KvLayerView& layer, int source,
                                        int destination, int tokens) {
  inner_.copy_page_tokens(device, layer, source, destination, tokens);
}

void PerturbedBackend::save_page(int device, const kernels::KvLayerView& layer, int page,
                                 void* host) {
  inner_.save_page(device, layer, page, host);
}

void PerturbedBackend::restore_page(int device, const kernels::KvLayerView& layer, int page,
                                    const void* host) {
  inner_.restore_page(device, layer, page, host);
}

void PerturbedBackend::top_logits(int device, const float* logits, std::int64_t rows,
                                  std::int64_t vocab, int k, const float* inv_temperatures,
                                  float* values, std::int32_t* ids,
                                  kernels::TopLogitsStats* stats) {
  inner_.top_logits(device, logits, rows, vocab, k, inv_temperatures, values, ids, stats);
}

void PerturbedBackend::gather_logits(int device, const float* logits, std::int64_t row_count,
                                     std::int64_t vocab, const std::int32_t* rows,
                                     const std::int32_t* ids, std::int64_t count, float* out) {
  inner_.gather_logits(device, logits, row_count, vocab, rows, ids, count, out);
}

}  // namespace quire::test
