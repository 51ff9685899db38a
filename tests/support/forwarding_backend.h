#pragma once

#include <functional>
#include <vector>

#include "quire/kernels/cpu/cpu_backend.h"

namespace quire::test {

// The base of the test doubles that stand for a GPU backend: every op is
// forwarded to a CPU backend, each through one hook, forward(), which a
// derived class overrides to change what happens to it (RecordingBackend
// records ops instead of running them; PerturbedBackend fails a named op).
// A new Backend op then needs one forwarding here, not one per double.
//
// Allocation and the device list go straight to the inner backend; so do
// buffers' releases, since the inner backend made them.
class ForwardingBackend : public kernels::Backend {
 public:
  explicit ForwardingBackend(kernels::CpuBackend& inner) : inner_(inner) {}

  std::vector<kernels::DeviceInfo> devices() const override { return inner_.devices(); }
  std::int64_t invariant_decode_rows() const override { return inner_.invariant_decode_rows(); }
  kernels::DeviceBuffer allocate(int device, std::size_t bytes, std::string_view purpose) override;
  void copy(void* destination, int destination_device, const void* source, int source_device,
            std::size_t bytes) override;
  void fill_zero(int device, void* data, std::size_t bytes) override;
  void synchronize(int device) override;

  void embedding(int device, const kernels::DenseWeight& table, std::int64_t vocab,
                 std::int64_t hidden, const std::int32_t* tokens, std::int64_t count,
                 float* out) override;
  void rms_norm(int device, const float* x, const kernels::DenseWeight& weight, float eps,
                std::int64_t rows, std::int64_t cols, float* out) override;
  void linear(int device, const float* x, std::int64_t rows, const kernels::LinearWeight& weight,
              float* out, kernels::ProductRows kind) override;
  void linear_many(int device, const float* x, std::int64_t rows,
                   std::span<const kernels::LinearWeight* const> weights,
                   std::span<float* const> outs, kernels::ProductRows kind) override;
  void rope(int device, float* x, std::int64_t tokens, int heads, int head_dim,
            const std::int32_t* positions, const kernels::RopeParams& rope) override;
  void gated_activation(int device, kernels::GatedActivation activation, const float* gate,
                        const float* up, std::int64_t count, float* out) override;
  void add(int device, float* x, const float* y, std::int64_t count) override;
  void soft_cap(int device, float* x, std::int64_t count, float cap) override;
  void scale(int device, float* x, std::int64_t count, float factor) override;
  void copy_columns(int device, const float* x, std::int64_t rows, std::int64_t width,
                    std::int64_t first, std::int64_t cols, float* out) override;
  void gather_rows(int device, const float* x, std::int64_t cols, const std::int32_t* rows,
                   std::int64_t count, float* out) override;
  void scatter_add_rows(int device, float* x, std::int64_t cols, const float* y,
                        const std::int32_t* rows, const float* weights,
                        std::int64_t count) override;

  void write_kv(int device, const kernels::KvLayerView& layer, const kernels::TokenBatch& batch,
                const float* key, const float* value) override;
  void paged_attention(int device, const kernels::KvLayerView& layer,
                       const kernels::TokenBatch& batch, const float* query,
                       const kernels::AttentionParams& params, float* out) override;
  void copy_page_tokens(int device, const kernels::KvLayerView& layer, int source, int destination,
                        int tokens) override;
  void fill_mirror(int device, const kernels::KvLayerView& layer, int page, int slot,
                   int tokens) override;
  void save_page(int device, const kernels::KvLayerView& layer, int page, void* host) override;
  void restore_page(int device, const kernels::KvLayerView& layer, int page,
                    const void* host) override;

  void top_logits(int device, const float* logits, std::int64_t rows, std::int64_t vocab, int k,
                  const float* inv_temperatures, float* values, std::int32_t* ids,
                  kernels::TopLogitsStats* stats) override;
  void gather_logits(int device, const float* logits, std::int64_t row_count, std::int64_t vocab,
                     const std::int32_t* rows, const std::int32_t* ids, std::int64_t count,
                     float* out) override;

 protected:
  // Every op above comes here as `work`, which runs it on the inner backend;
  // `op` is its name ("rope"). The default runs it at once. `work` holds its
  // arguments by value (addresses and sizes, not what they point to), so an
  // override may keep it and run it later, as a recorded CUDA graph would.
  virtual void forward(int device, const char* op, const std::function<void()>& work);

  kernels::CpuBackend& inner() const { return inner_; }

  void release(int, void*, std::size_t) noexcept override {}

 private:
  kernels::CpuBackend& inner_;
};

}  // namespace quire::test
