#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "quire/kernels/backend.h"
#include "quire/kernels/cuda_devices.h"

namespace quire::kernels::cuda {

class LinearRunner;

// The NVIDIA GPUs of this machine as a Backend, presented as the logical
// devices of a device list (cuda_devices.h): a whole GPU each, or budgeted
// shares of one, numbered from 0 in the list's order. Each GPU has one
// stream; every op is queued on the stream of the GPU its device lives on, so
// work on one GPU runs in order and GPUs run side by side. Copies to or from
// host memory return once the data has arrived, as the CPU backend's do;
// everything else may still be running until synchronize().
//
// Logical devices on one GPU share its stream rather than having one each.
// They exist to give placement several budgets (and to test multi-device
// placement on one card), not to overlap work: the layers they hold run one
// after another anyway. One stream keeps every op, copy and free on that GPU
// in the order it was issued, so moving the hidden state from one of them to
// the other is a plain device-to-device copy with no events to order it.
//
// Private to the plugin (libquire_cuda.so): the application reaches it only
// through the Backend interface that quire_cuda_create_backend returns.
class CudaBackend final : public Backend {
 public:
  // Throws CudaError when the runtime cannot list or prepare the GPUs, and
  // std::invalid_argument when `devices` names a GPU this machine lacks.
  explicit CudaBackend(const CudaDeviceSpec& devices);
  ~CudaBackend() override;
  CudaBackend(const CudaBackend&) = delete;
  CudaBackend& operator=(const CudaBackend&) = delete;

  std::string name() const override { return "cuda"; }
  // "CUDA runtime 12.4, driver 570.86.15 (CUDA 12.8), kernels for CUDA
  // architectures 90".
  std::string version() const override;
  std::vector<DeviceInfo> devices() const override;
  DeviceBuffer allocate(int device, std::size_t bytes, std::string_view purpose) override;
  void copy(void* destination, int destination_device, const void* source, int source_device,
            std::size_t bytes) override;
  void fill_zero(int device, void* data, std::size_t bytes) override;
  void synchronize(int device) override;

  // Page-locked host memory, and copies and events on each GPU's upload and
  // download streams beside its compute stream (cuda_backend_transfer.cpp).
  DeviceBuffer allocate_host(std::size_t bytes, std::string_view purpose) override;
  void copy_async(Queue queue, int device, void* destination, const void* source,
                  std::size_t bytes) override;
  std::unique_ptr<QueueEvent> create_event(int device) override;
  void record_event(QueueEvent& event, int device, Queue queue) override;
  void wait_event(const QueueEvent& event, int device, Queue queue) override;
  void synchronize_event(const QueueEvent& event, int device) override;
  // Frees the linear and attention scratch of every device (the cuBLAS
  // workspace stays: the handle holds it); the next calls grow them again.
  void release_cached_memory() override;

  // CUDA graphs of the device's stream (cuda_backend_capture.cpp).
  bool supports_capture() const override { return true; }
  // EXL3 products: linear_exl3.cu (decode) and exl3_reconstruct.cu (prefill).
  bool runs_exl3_weights() const override { return true; }
  void begin_capture(int device) override;
  std::unique_ptr<CapturedWork> end_capture(int device) override;
  bool replay(int device, CapturedWork& work) override;

  void embedding(int device, const DenseWeight& table, std::int64_t vocab, std::int64_t hidden,
                 const std::int32_t* tokens, std::int64_t count, float* out) override;
  void rms_norm(int device, const float* x, const DenseWeight& weight, float eps, std::int64_t rows,
                std::int64_t cols, float* out) override;
  void linear(int device, const float* x, std::int64_t rows, const LinearWeight& weight, float* out,
              ProductRows kind) override;
  void rope(int device, float* x, std::int64_t tokens, int heads, int head_dim,
            const std::int32_t* positions, const RopeParams& rope) override;
  void gated_activation(int device, GatedActivation activation, const float* gate, const float* up,
                        std::int64_t count, float* out) override;
  void add(int device, float* x, const float* y, std::int64_t count) override;
  void soft_cap(int device, float* x, std::int64_t count, float cap) override;
  void scale(int device, float* x, std::int64_t count, float factor) override;
  // Row movements (row_ops.cu). A negative row index, which the CPU backend
  // throws for, gathers zeros and scatters nothing: the indices are in device
  // memory, and reading them first would cost a wait.
  void copy_columns(int device, const float* x, std::int64_t rows, std::int64_t width,
                    std::int64_t first, std::int64_t cols, float* out) override;
  void gather_rows(int device, const float* x, std::int64_t cols, const std::int32_t* rows,
                   std::int64_t count, float* out) override;
  void scatter_add_rows(int device, float* x, std::int64_t cols, const float* y,
                        const std::int32_t* rows, const float* weights,
                        std::int64_t count) override;

  void write_kv(int device, const KvLayerView& layer, const TokenBatch& batch, const float* key,
                const float* value) override;
  void paged_attention(int device, const KvLayerView& layer, const TokenBatch& batch,
                       const float* query, const AttentionParams& params, float* out) override;
  void fill_mirror(int device, const KvLayerView& layer, int page, int slot, int tokens) override;
  void copy_page_tokens(int device, const KvLayerView& layer, int source, int destination,
                        int tokens) override;
  void save_page(int device, const KvLayerView& layer, int page, void* host) override;
  void restore_page(int device, const KvLayerView& layer, int page, const void* host) override;

  // Sampling candidates (cuda_backend_sampling.cpp): kernels of
  // sampling_candidates.cu, with no allocation and no wait.
  void top_logits(int device, const float* logits, std::int64_t rows, std::int64_t vocab, int k,
                  const float* inv_temperatures, float* values, std::int32_t* ids,
                  TopLogitsStats* stats) override;
  void gather_logits(int device, const float* logits, std::int64_t row_count, std::int64_t vocab,
                     const std::int32_t* rows, const std::int32_t* ids, std::int64_t count,
                     float* out) override;

 protected:
  void release(int device, void* data, std::size_t bytes) noexcept override;
  void release_host(void* data, std::size_t bytes) noexcept override;

 private:
  struct CopyStreams;
  struct CopyStreamsDeleter {
    void operator()(CopyStreams* streams) const noexcept;
  };
  // The stream of a device's queue (cudaStream_t): its GPU's compute stream,
  // or a copy stream made on first use. The device's GPU must be current.
  void* queue_stream(int device, Queue queue);
  // A physical GPU, prepared when some logical device lives on it.
  struct Gpu {
    std::string name;
    std::string architecture;  // "sm_90"
    void* stream = nullptr;    // cudaStream_t; null for a GPU no device uses
    int multiprocessors = 1;
    int logical_devices = 0;  // how many logical devices share it
  };
  struct Device {
    int gpu = 0;
    std::int64_t budget_bytes = 0;  // 0: the whole GPU
    std::string name;
  };

  // Throws std::out_of_range for an index that names no device, then makes
  // the device's GPU current on this thread (CUDA's current device is per
  // thread).
  void activate(int device) const;
  // The CUDA runtime's index of the GPU a logical device lives on.
  int gpu(int device) const { return devices_[static_cast<std::size_t>(device)].gpu; }
  void* stream(int device) const { return gpus_[static_cast<std::size_t>(gpu(device))].stream; }
  int multiprocessors(int device) const {
    return gpus_[static_cast<std::size_t>(gpu(device))].multiprocessors;
  }
  // Peer access between two physical GPUs.
  bool peer_access(int from_gpu, int to_gpu) const;
  void prepare_gpus();
  void destroy_streams() noexcept;
  void copy_between_devices(void* destination, int destination_device, const void* source,
                            int source_device, std::size_t bytes);
  void copy_through_host(void* destination, int destination_device, const void* source,
                         int source_device, std::size_t bytes);
  // At least `floats` floats of the device's attention scratch; the caller
  // holds attention_mutex_.
  float* attention_scratch(int device, std::size_t floats);
  // After a wait on the device's GPU: throws std::invalid_argument for a
  // token id that a queued embedding (perhaps in a replayed graph) found
  // outside the vocabulary, and clears the report.
  void raise_device_errors(int device);

  std::vector<Gpu> gpus_;        // by the CUDA runtime's index
  std::vector<Device> devices_;  // by logical index
  // What each logical device holds, for its budget; under used_mutex_.
  mutable std::mutex used_mutex_;
  std::vector<std::int64_t> used_;
  // peer_[from * gpus + to]: GPU `from` may read and write `to`'s memory directly.
  std::vector<char> peer_;
  // Pinned host memory for copies between devices without peer access.
  std::mutex staging_mutex_;
  void* staging_ = nullptr;
  // linear() per device, made on first use (cuda_linear.h): its scratch
  // memory and per-weight tables. The mutex keeps concurrent callers from
  // sharing one scratch buffer between their queued kernels.
  std::mutex linear_mutex_;
  std::vector<std::unique_ptr<LinearRunner>> linear_;
  // paged_attention's scratch per device for the partial sums of split key
  // ranges (cuda_backend_kv.cpp), grown on demand; the mutex as above.
  std::mutex attention_mutex_;
  std::vector<DeviceBuffer> attention_scratch_;
  // Counts reallocations of the workspaces above and of LinearRunner's:
  // captured graphs hold their addresses, so a graph recorded under an older
  // count must not run.
  std::atomic<std::uint64_t> workspace_generation_{0};
  // Mapped pinned host memory, kDeviceErrorWords ints per GPU, where kernels
  // report bad inputs they cannot throw for (embedding_kernel); read after
  // each wait.
  int* device_errors_ = nullptr;
  // Declared last so that they go after the compute streams' work is done.
  std::mutex copy_streams_mutex_;
  std::unique_ptr<CopyStreams, CopyStreamsDeleter> copy_streams_;
};

}  // namespace quire::kernels::cuda
