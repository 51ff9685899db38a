#pragma once

#include <memory>
#include <string>
#include <vector>

#include "quire/kernels/cpu/cpu_backend.h"

namespace quire::test {

// The CPU backend under another name, optionally computing wrong results,
// as a GPU backend with a broken kernel would: the linear layers' outputs
// scaled, on every step or only on decode steps (one token), on every
// device or one. With no fault set it computes exactly what the CPU does.
class PerturbedBackend final : public kernels::Backend {
 public:
  struct Faults {
    float linear_scale = 1.0f;  // every linear output is multiplied by this
    bool decode_only = false;   // only where a product has one row
    int device = -1;            // only on this device; -1: every device
    // Throws std::runtime_error("the fake device failed") from this op
    // ("paged_attention"), as a kernel launch that fails would.
    std::string failing_op;
  };

  explicit PerturbedBackend(kernels::CpuBackend& inner) : inner_(inner) {}
  // Owning its CPU backend, as a plugin's backend must.
  explicit PerturbedBackend(std::unique_ptr<kernels::CpuBackend> inner)
      : owned_(std::move(inner)), inner_(*owned_) {}

  std::string backend_name = "fake";
  std::string version_text = "fake runtime 1.0, driver 1.0";
  // Given to every device, with the device names made GPU-like.
  std::string architecture = "sm_86";
  Faults faults;
  int linear_calls = 0;

  std::string name() const override { return backend_name; }
  std::string version() const override { return version_text; }
  std::vector<kernels::DeviceInfo> devices() const override;
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
              float* out) override;
  void linear_many(int device, const float* x, std::int64_t rows,
                   std::span<const kernels::LinearWeight* const> weights,
                   std::span<float* const> outs) override;
  void rope(int device, float* x, std::int64_t tokens, int heads, int head_dim,
            const std::int32_t* positions, const kernels::RopeParams& rope) override;
  void silu_mul(int device, const float* gate, const float* up, std::int64_t count,
                float* out) override;
  void add(int device, float* x, const float* y, std::int64_t count) override;
  void write_kv(int device, const kernels::KvLayerView& layer, const kernels::TokenBatch& batch,
                const float* key, const float* value) override;
  void paged_attention(int device, const kernels::KvLayerView& layer,
                       const kernels::TokenBatch& batch, const float* query,
                       const kernels::AttentionParams& params, float* out) override;
  void copy_page_tokens(int device, const kernels::KvLayerView& layer, int source, int destination,
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
  bool shares_host_memory() const override { return inner_.shares_host_memory(); }

 protected:
  // Buffers come from the inner backend, which releases them.
  void release(int, void*, std::size_t) noexcept override {}

 private:
  void maybe_fail(const char* op) const;
  void perturb(int device, std::int64_t rows, std::int64_t count, float* out) const;

  std::unique_ptr<kernels::CpuBackend> owned_;
  kernels::CpuBackend& inner_;
};

}  // namespace quire::test
