#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "quire/kernels/backend.h"

namespace quire::kernels {

// The calls of a Backend that FaultInjectingBackend counts and can fail.
enum class BackendCall : std::uint8_t {
  Allocate,
  Copy,
  FillZero,
  Synchronize,
  Replay,
  Embedding,
  RmsNorm,
  Linear,
  LinearMany,
  Rope,
  GatedActivation,
  Add,
  SoftCap,
  Scale,
  CopyColumns,
  GatherRows,
  ScatterAddRows,
  WriteKv,
  PagedAttention,
  CopyPageTokens,
  SavePage,
  RestorePage,
  TopLogits,
  GatherLogits,
  FillMirror,
};
inline constexpr std::size_t kBackendCallCount = 25;

// The call's name as the Backend method spells it ("paged_attention").
std::string_view backend_call_name(BackendCall call);
// The call of that name; std::invalid_argument listing the names otherwise.
BackendCall parse_backend_call(std::string_view name);

// Calls first .. first + count - 1 of one kind fail (counted from 1 since the
// counters were last reset).
struct FaultRule {
  static constexpr std::int64_t kEveryCall = std::numeric_limits<std::int64_t>::max();
  BackendCall call = BackendCall::Allocate;
  std::int64_t first = 1;
  std::int64_t count = 1;  // kEveryCall: from `first` on, for good (memory that stays short)
};

struct FaultPlan {
  std::vector<FaultRule> rules;
  // Every allocate() of more than this many bytes fails: a device whose
  // largest free piece is this big.
  std::optional<std::size_t> allocations_above;
  bool empty() const { return rules.empty() && !allocations_above; }
};

// "linear:40" (the 40th linear()), "allocate:3+5" (five allocations from the
// third), "paged_attention:7+" (every call from the seventh on). Throws
// std::invalid_argument saying what is wrong.
FaultRule parse_fault_rule(std::string_view text);

// Manual checks of out-of-memory handling without a full device, read where
// a front end makes its backend:
//   QUIRE_FAULT_ALLOCATION=N[+K]        allocate() calls, as in parse_fault_rule
//   QUIRE_FAULT_OP=name:N[+K][,...]     op calls, as in parse_fault_rule
//   QUIRE_FAULT_ALLOCATIONS_ABOVE=SIZE  every allocation above SIZE ("64MiB")
// Unset or empty variables add nothing; a malformed one throws
// std::invalid_argument naming the variable.
FaultPlan fault_plan_from_environment();

// A Backend that forwards every call to another and throws DeviceOutOfMemory
// where its FaultPlan says, before the call reaches the inner backend (so a
// failed call has done nothing). It counts every call by kind, so that a test
// can first count a fault-free run and then fail each call in turn. Models
// memory that runs short mid-step: a workspace that grows, or another program
// that takes memory. Buffers are the inner backend's own.
class FaultInjectingBackend final : public Backend {
 public:
  explicit FaultInjectingBackend(std::unique_ptr<Backend> inner, FaultPlan plan = {});

  Backend& inner() { return *inner_; }

  void set_plan(FaultPlan plan);
  // Calls of `call` since the counters were reset, failed ones included.
  std::int64_t calls(BackendCall call) const;
  // DeviceOutOfMemory thrown so far.
  std::int64_t faults() const;
  // Counting starts again from zero, and so do the rules' call numbers.
  void reset_counters();

  std::string name() const override { return inner_->name(); }
  std::string version() const override { return inner_->version(); }
  std::vector<DeviceInfo> devices() const override { return inner_->devices(); }
  DeviceBuffer allocate(int device, std::size_t bytes, std::string_view purpose) override;
  void copy(void* destination, int destination_device, const void* source, int source_device,
            std::size_t bytes) override;
  void fill_zero(int device, void* data, std::size_t bytes) override;
  void synchronize(int device) override;
  void release_cached_memory() override { inner_->release_cached_memory(); }
  // Host memory, queued copies and events go straight to the inner backend,
  // uncounted: they move cache pages, not a step's workspaces.
  DeviceBuffer allocate_host(std::size_t bytes, std::string_view purpose) override {
    return inner_->allocate_host(bytes, purpose);
  }
  void copy_async(Queue queue, int device, void* destination, const void* source,
                  std::size_t bytes) override {
    inner_->copy_async(queue, device, destination, source, bytes);
  }
  std::unique_ptr<QueueEvent> create_event(int device) override {
    return inner_->create_event(device);
  }
  void record_event(QueueEvent& event, int device, Queue queue) override {
    inner_->record_event(event, device, queue);
  }
  void wait_event(const QueueEvent& event, int device, Queue queue) override {
    inner_->wait_event(event, device, queue);
  }
  void synchronize_event(const QueueEvent& event, int device) override {
    inner_->synchronize_event(event, device);
  }

  bool supports_capture() const override { return inner_->supports_capture(); }
  void begin_capture(int device) override { inner_->begin_capture(device); }
  std::unique_ptr<CapturedWork> end_capture(int device) override {
    return inner_->end_capture(device);
  }
  bool replay(int device, CapturedWork& work) override;

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
  void top_logits(int device, const float* logits, std::int64_t rows, std::int64_t vocab, int k,
                  const float* inv_temperatures, float* values, std::int32_t* ids,
                  TopLogitsStats* stats) override;
  void gather_logits(int device, const float* logits, std::int64_t row_count, std::int64_t vocab,
                     const std::int32_t* rows, const std::int32_t* ids, std::int64_t count,
                     float* out) override;
  bool shares_host_memory() const override { return inner_->shares_host_memory(); }
  std::int64_t invariant_decode_rows() const override { return inner_->invariant_decode_rows(); }
  bool runs_fp8_weights() const override { return inner_->runs_fp8_weights(); }
  bool runs_exl3_weights() const override { return inner_->runs_exl3_weights(); }

 protected:
  // Never called: every buffer belongs to the inner backend, which frees it.
  void release(int, void*, std::size_t) noexcept override {}

 private:
  // Counts the call and throws DeviceOutOfMemory when the plan fails it.
  void enter(BackendCall call, int device, std::size_t bytes = 0, std::string_view purpose = {});

  std::unique_ptr<Backend> inner_;
  mutable std::mutex mutex_;
  FaultPlan plan_;
  std::array<std::int64_t, kBackendCallCount> calls_{};
  std::int64_t faults_ = 0;
};

}  // namespace quire::kernels
