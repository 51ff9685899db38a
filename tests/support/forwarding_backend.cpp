#include "forwarding_backend.h"

namespace quire::test {

using namespace quire::kernels;

void ForwardingBackend::forward(int, const char*, const std::function<void()>& work) {
  work();
}

DeviceBuffer ForwardingBackend::allocate(int device, std::size_t bytes, std::string_view purpose) {
  return inner_.allocate(device, bytes, purpose);
}

void ForwardingBackend::copy(void* destination, int destination_device, const void* source,
                             int source_device, std::size_t bytes) {
  forward(destination_device >= 0 ? destination_device : source_device, "copy", [=, this] {
    inner_.copy(destination, destination_device, source, source_device, bytes);
  });
}

void ForwardingBackend::fill_zero(int device, void* data, std::size_t bytes) {
  forward(device, "fill_zero", [=, this] { inner_.fill_zero(device, data, bytes); });
}

void ForwardingBackend::synchronize(int device) {
  forward(device, "synchronize", [=, this] { inner_.synchronize(device); });
}

void ForwardingBackend::embedding(int device, const DenseWeight& table, std::int64_t vocab,
                                  std::int64_t hidden, const std::int32_t* tokens,
                                  std::int64_t count, float* out) {
  forward(device, "embedding",
          [=, this] { inner_.embedding(device, table, vocab, hidden, tokens, count, out); });
}

void ForwardingBackend::rms_norm(int device, const float* x, const DenseWeight& weight, float eps,
                                 std::int64_t rows, std::int64_t cols, float* out) {
  forward(device, "rms_norm",
          [=, this] { inner_.rms_norm(device, x, weight, eps, rows, cols, out); });
}

void ForwardingBackend::linear(int device, const float* x, std::int64_t rows,
                               const LinearWeight& weight, float* out, ProductRows kind) {
  // Weights live as long as the loaded model, which outlives its recordings.
  const LinearWeight* w = &weight;
  forward(device, "linear", [=, this] { inner_.linear(device, x, rows, *w, out, kind); });
}

void ForwardingBackend::linear_many(int device, const float* x, std::int64_t rows,
                                    std::span<const LinearWeight* const> weights,
                                    std::span<float* const> outs, ProductRows kind) {
  std::vector<const LinearWeight*> w(weights.begin(), weights.end());
  std::vector<float*> o(outs.begin(), outs.end());
  forward(device, "linear_many", [=, this] { inner_.linear_many(device, x, rows, w, o, kind); });
}

void ForwardingBackend::rope(int device, float* x, std::int64_t tokens, int heads, int head_dim,
                             const std::int32_t* positions, const RopeParams& rope) {
  forward(device, "rope",
          [=, this] { inner_.rope(device, x, tokens, heads, head_dim, positions, rope); });
}

void ForwardingBackend::gated_activation(int device, GatedActivation activation, const float* gate,
                                         const float* up, std::int64_t count, float* out) {
  forward(device, "gated_activation",
          [=, this] { inner_.gated_activation(device, activation, gate, up, count, out); });
}

void ForwardingBackend::add(int device, float* x, const float* y, std::int64_t count) {
  forward(device, "add", [=, this] { inner_.add(device, x, y, count); });
}

void ForwardingBackend::soft_cap(int device, float* x, std::int64_t count, float cap) {
  forward(device, "soft_cap", [=, this] { inner_.soft_cap(device, x, count, cap); });
}

void ForwardingBackend::scale(int device, float* x, std::int64_t count, float factor) {
  forward(device, "scale", [=, this] { inner_.scale(device, x, count, factor); });
}

void ForwardingBackend::copy_columns(int device, const float* x, std::int64_t rows,
                                     std::int64_t width, std::int64_t first, std::int64_t cols,
                                     float* out) {
  forward(device, "copy_columns",
          [=, this] { inner_.copy_columns(device, x, rows, width, first, cols, out); });
}

void ForwardingBackend::gather_rows(int device, const float* x, std::int64_t cols,
                                    const std::int32_t* rows, std::int64_t count, float* out) {
  forward(device, "gather_rows",
          [=, this] { inner_.gather_rows(device, x, cols, rows, count, out); });
}

void ForwardingBackend::scatter_add_rows(int device, float* x, std::int64_t cols, const float* y,
                                         const std::int32_t* rows, const float* weights,
                                         std::int64_t count) {
  forward(device, "scatter_add_rows",
          [=, this] { inner_.scatter_add_rows(device, x, cols, y, rows, weights, count); });
}

void ForwardingBackend::write_kv(int device, const KvLayerView& layer, const TokenBatch& batch,
                                 const float* key, const float* value) {
  forward(device, "write_kv", [=, this] { inner_.write_kv(device, layer, batch, key, value); });
}

void ForwardingBackend::paged_attention(int device, const KvLayerView& layer,
                                        const TokenBatch& batch, const float* query,
                                        const AttentionParams& params, float* out) {
  forward(device, "paged_attention",
          [=, this] { inner_.paged_attention(device, layer, batch, query, params, out); });
}

void ForwardingBackend::copy_page_tokens(int device, const KvLayerView& layer, int source,
                                         int destination, int tokens) {
  forward(device, "copy_page_tokens",
          [=, this] { inner_.copy_page_tokens(device, layer, source, destination, tokens); });
}

void ForwardingBackend::fill_mirror(int device, const KvLayerView& layer, int page, int slot,
                                    int tokens) {
  forward(device, "fill_mirror",
          [=, this] { inner_.fill_mirror(device, layer, page, slot, tokens); });
}

void ForwardingBackend::save_page(int device, const KvLayerView& layer, int page, void* host) {
  forward(device, "save_page", [=, this] { inner_.save_page(device, layer, page, host); });
}

void ForwardingBackend::restore_page(int device, const KvLayerView& layer, int page,
                                     const void* host) {
  forward(device, "restore_page", [=, this] { inner_.restore_page(device, layer, page, host); });
}

void ForwardingBackend::top_logits(int device, const float* logits, std::int64_t rows,
                                   std::int64_t vocab, int k, const float* inv_temperatures,
                                   float* values, std::int32_t* ids, TopLogitsStats* stats) {
  forward(device, "top_logits", [=, this] {
    inner_.top_logits(device, logits, rows, vocab, k, inv_temperatures, values, ids, stats);
  });
}

void ForwardingBackend::gather_logits(int device, const float* logits, std::int64_t row_count,
                                      std::int64_t vocab, const std::int32_t* rows,
                                      const std::int32_t* ids, std::int64_t count, float* out) {
  forward(device, "gather_logits", [=, this] {
    inner_.gather_logits(device, logits, row_count, vocab, rows, ids, count, out);
  });
}

}  // namespace quire::test
