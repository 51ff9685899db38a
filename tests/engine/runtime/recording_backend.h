#pragma once

#include <functional>
#include <string>
#include <vector>

#include "quire/kernels/cpu/cpu_backend.h"

namespace quire::test {

// The CPU backend with capture the way CUDA graphs behave: between
// begin_capture and end_capture the ops are recorded, with their arguments
// (addresses, sizes) as they were, and nothing runs; a replay runs them
// again, reading whatever the buffers hold then. Copies to or from the host,
// waits and allocations refuse while recording, as they do on CUDA, so a step
// that leaks one into its recording fails here as it would on a GPU.
class RecordingBackend final : public kernels::Backend {
 public:
  explicit RecordingBackend(kernels::CpuBackend& inner) : inner_(inner) {}

  // Failures to inject: end_capture throws, or the named op throws while
  // recording ("rope").
  bool fail_end_capture = false;
  std::string refuse_op;
  // What CudaBackend does when its workspaces grow: recordings made before
  // refuse to replay.
  void move_workspaces() { ++generation_; }

  int replays() const { return replays_; }
  int recorded_ops() const { return recorded_ops_; }

  std::string name() const override { return "recording"; }
  std::vector<kernels::DeviceInfo> devices() const override { return inner_.devices(); }
  kernels::DeviceBuffer allocate(int device, std::size_t bytes, std::string_view purpose) override;
  void copy(void* destination, int destination_device, const void* source, int source_device,
            std::size_t bytes) override;
  void fill_zero(int device, void* data, std::size_t bytes) override;
  void synchronize(int device) override;

  bool supports_capture() const override { return true; }
  void begin_capture(int device) override;
  std::unique_ptr<kernels::CapturedWork> end_capture(int device) override;
  bool replay(int device, kernels::CapturedWork& work) override;

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

 protected:
  // Buffers come from the inner backend, which releases them.
  void release(int, void*, std::size_t) noexcept override {}

 private:
  // Runs `op` now, or records it while capturing; `what` names it for
  // refuse_op.
  void run(const char* what, std::function<void()> op);
  void refuse_while_recording(const char* what) const;

  kernels::CpuBackend& inner_;
  bool recording_ = false;
  int recording_device_ = -1;
  std::vector<std::function<void()>> ops_;
  bool refused_ = false;  // an op refused during this recording
  int generation_ = 0;
  int replays_ = 0;
  int recorded_ops_ = 0;
};

}  // namespace quire::test
