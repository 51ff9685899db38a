#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "quire/kernels/backend.h"
#include "quire/kernels/cpu/memory_read_rate.h"
#include "quire/kernels/cpu/multiply_add_peak.h"
#include "quire/kernels/cpu/thread_pool.h"

namespace quire::kernels {

// The CPU backend: host memory presented as one or more logical devices, each
// with its own memory budget, so that multi-device placement, per-device cache
// storage and moving the hidden state between devices run anywhere.
class CpuBackend final : public Backend {
 public:
  struct Device {
    std::string name;
    std::int64_t budget_bytes = 0;  // 0: the machine's memory, live
  };

  // No devices: one device over the machine's memory. No pool: the process's
  // shared pool, one thread per hardware thread.
  explicit CpuBackend(std::vector<Device> devices = {}, ThreadPool* pool = nullptr);
  // A pool of its own with `threads` threads (the caller's included), so that
  // a run can be pinned to a thread count (quire-cli --threads); threads <= 0
  // takes the shared pool.
  CpuBackend(std::vector<Device> devices, int threads);
  ~CpuBackend() override;

  // "cpu" (one device, the machine's memory), "cpu:2x512MiB" (two devices of
  // 512 MiB), "cpu:1GiB,512MiB". Sizes take B, KiB, MiB, GiB (or K, M, G).
  // Throws std::invalid_argument with the reason for anything else.
  static std::vector<Device> parse_devices(std::string_view spec);

  std::string name() const override { return "cpu"; }
  // The threads that run each product and attention (the caller's included).
  int threads() const { return pool_.size(); }
  // Which instruction-set path each kind of kernel takes on this processor,
  // (kernel, path) pairs, for a benchmark's report.
  static std::vector<std::pair<std::string, std::string>> kernel_paths();
  // The multiply-add peak of this backend's threads (multiply_add_peak.h).
  MultiplyAddPeak multiply_add_peak() const { return measure_multiply_add_peak(pool_); }
  // The rate this backend's threads read host memory at (memory_read_rate.h).
  double read_bandwidth() const { return measure_read_bandwidth(pool_); }
  std::vector<DeviceInfo> devices() const override;
  DeviceBuffer allocate(int device, std::size_t bytes, std::string_view purpose) override;
  void copy(void* destination, int destination_device, const void* source, int source_device,
            std::size_t bytes) override;
  void fill_zero(int device, void* data, std::size_t bytes) override;
  void synchronize(int) override {}

  void embedding(int device, const DenseWeight& table, std::int64_t vocab, std::int64_t hidden,
                 const std::int32_t* tokens, std::int64_t count, float* out) override;
  void rms_norm(int device, const float* x, const DenseWeight& weight, float eps, std::int64_t rows,
                std::int64_t cols, float* out) override;
  void linear(int device, const float* x, std::int64_t rows, const LinearWeight& weight, float* out,
              ProductRows kind) override;
  void linear_many(int device, const float* x, std::int64_t rows,
                   std::span<const LinearWeight* const> weights, std::span<float* const> outs,
                   ProductRows kind) override;
  void rope(int device, float* x, std::int64_t tokens, int heads, int head_dim,
            const std::int32_t* positions, const RopeParams& rope) override;
  void gated_activation(int device, GatedActivation activation, const float* gate, const float* up,
                        std::int64_t count, float* out) override;
  void add(int device, float* x, const float* y, std::int64_t count) override;
  void soft_cap(int device, float* x, std::int64_t count, float cap) override;
  void scale(int device, float* x, std::int64_t count, float factor) override;
  // Row movements (cpu_ops_rows.cpp); a negative row index throws std::out_of_range.
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
  void copy_page_tokens(int device, const KvLayerView& layer, int source, int destination,
                        int tokens) override;
  void fill_mirror(int device, const KvLayerView& layer, int page, int slot, int tokens) override;
  void save_page(int device, const KvLayerView& layer, int page, void* host) override;
  void restore_page(int device, const KvLayerView& layer, int page, const void* host) override;

  // On the logits in place, rows in parallel (top_logits.h's reference).
  void top_logits(int device, const float* logits, std::int64_t rows, std::int64_t vocab, int k,
                  const float* inv_temperatures, float* values, std::int32_t* ids,
                  TopLogitsStats* stats) override;
  void gather_logits(int device, const float* logits, std::int64_t row_count, std::int64_t vocab,
                     const std::int32_t* rows, const std::int32_t* ids, std::int64_t count,
                     float* out) override;
  bool shares_host_memory() const override { return true; }
  std::int64_t invariant_decode_rows() const override;
  // Decode rows multiplied as precisely as prompt rows (no 8-bit inputs of
  // EXL2's and EXL3 MUL1's decode kernels, exact EXL3 codebook values): a
  // reference for backends whose decode products are exact, at some cost in
  // speed. Off by default.
  void set_exact_decode(bool exact) { exact_decode_ = exact; }

 protected:
  void release(int device, void* data, std::size_t bytes) noexcept override;

 private:
  void check_device(int device) const;

  std::vector<Device> devices_;
  std::unique_ptr<ThreadPool> owned_pool_;  // with a thread count of its own
  ThreadPool& pool_;
  mutable std::mutex mutex_;
  std::vector<std::int64_t> used_;
  bool exact_decode_ = false;
};

}  // namespace quire::kernels
