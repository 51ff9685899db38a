#pragma once

#include <memory>
#include <string>
#include <vector>

#include "forwarding_backend.h"

namespace quire::test {

// The CPU backend under another name, optionally computing wrong results,
// as a GPU backend with a broken kernel would: the linear layers' outputs
// scaled, on every step or only on decode steps (one token), on every
// device or one. With no fault set it computes exactly what the CPU does.
class PerturbedBackend final : public ForwardingBackend {
 public:
  struct Faults {
    float linear_scale = 1.0f;  // every linear output is multiplied by this
    bool decode_only = false;   // only where a product has one row
    int device = -1;            // only on this device; -1: every device
    bool fp8_only = false;      // only products of FP8 weights
    bool exl3_only = false;     // only products of EXL3 weights
    // Not the linear layers but attention where a step reads a residual
    // window's mirror, as broken mirror kernels would.
    bool mirrored_attention = false;
    // Throws std::runtime_error("the fake device failed") from this op
    // ("paged_attention"), as a kernel launch that fails would.
    std::string failing_op;
  };

  explicit PerturbedBackend(kernels::CpuBackend& inner) : ForwardingBackend(inner) {}
  // Owning its CPU backend, as a plugin's backend must.
  explicit PerturbedBackend(std::unique_ptr<kernels::CpuBackend> inner)
      : ForwardingBackend(*inner), owned_(std::move(inner)) {}

  std::string backend_name = "fake";
  std::string version_text = "fake runtime 1.0, driver 1.0";
  // Given to every device, with the device names made GPU-like.
  std::string architecture = "sm_86";
  Faults faults;
  int linear_calls = 0;
  // Whether it claims FP8 and EXL3 products (the CPU's, when it does).
  bool takes_fp8 = true;
  bool takes_exl3 = true;

  std::string name() const override { return backend_name; }
  std::string version() const override { return version_text; }
  std::vector<kernels::DeviceInfo> devices() const override;
  void linear(int device, const float* x, std::int64_t rows, const kernels::LinearWeight& weight,
              float* out, kernels::ProductRows kind) override;
  void linear_many(int device, const float* x, std::int64_t rows,
                   std::span<const kernels::LinearWeight* const> weights,
                   std::span<float* const> outs, kernels::ProductRows kind) override;
  void paged_attention(int device, const kernels::KvLayerView& layer,
                       const kernels::TokenBatch& batch, const float* query,
                       const kernels::AttentionParams& params, float* out) override;
  bool runs_fp8_weights() const override { return takes_fp8; }
  bool runs_exl3_weights() const override { return takes_exl3; }
  bool shares_host_memory() const override { return inner().shares_host_memory(); }
  std::int64_t invariant_decode_rows() const override { return inner().invariant_decode_rows(); }

 protected:
  // Fails the op that faults.failing_op names, then runs it.
  void forward(int device, const char* op, const std::function<void()>& work) override;

 private:
  void perturb(int device, std::int64_t rows, const kernels::LinearWeight& weight,
               float* out) const;

  std::unique_ptr<kernels::CpuBackend> owned_;
};

}  // namespace quire::test
