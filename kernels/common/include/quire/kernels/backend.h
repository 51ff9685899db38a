#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "quire/kernels/dtype.h"
#include "quire/kernels/kv_layout.h"
#include "quire/kernels/linear_weight.h"
#include "quire/kernels/top_logits.h"

namespace quire::kernels {

struct DeviceInfo {
  int index = 0;
  std::string name;
  std::int64_t total_bytes = 0;
  // Free right now, what other processes use included.
  std::int64_t free_bytes = 0;
  // What placement should leave free here unless the user says otherwise:
  // driver and library workspaces on a GPU, the desktop's share of RAM.
  std::int64_t recommended_reserve_bytes = 0;
  // The GPU's architecture as CUDA names it ("sm_90"), so that results can be
  // told apart by the kernels' code path; empty on the CPU.
  std::string architecture;
  // The device's memory is the machine's own (a CPU device without a budget
  // of its own): host memory is this device, not a second place beside it.
  bool host_memory = false;
};

// A device allocation failed. The message names the device and the numbers.
class DeviceOutOfMemory : public std::runtime_error {
 public:
  DeviceOutOfMemory(int device, std::int64_t requested, std::int64_t available,
                    std::string_view purpose);
  int device() const { return device_; }
  std::int64_t requested() const { return requested_; }
  std::int64_t available() const { return available_; }

 private:
  int device_;
  std::int64_t requested_;
  std::int64_t available_;
};

class Backend;

// Work recorded by Backend::begin_capture/end_capture, released on
// destruction; only the backend that made it can replay it, and it must go
// before that backend does.
class CapturedWork {
 public:
  virtual ~CapturedWork() = default;
};

// Owning handle of device memory; released on destruction.
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  DeviceBuffer(Backend* owner, int device, void* data, std::size_t bytes)
      : owner_(owner), device_(device), data_(data), bytes_(bytes) {}
  DeviceBuffer(DeviceBuffer&& other) noexcept { *this = std::move(other); }
  DeviceBuffer& operator=(DeviceBuffer&& other) noexcept;
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  ~DeviceBuffer() { reset(); }

  void reset();
  void* data() const { return data_; }
  template <typename T>
  T* as() const {
    return static_cast<T*>(data_);
  }
  std::size_t bytes() const { return bytes_; }
  // -1 for host memory (Backend::allocate_host).
  int device() const { return device_; }
  explicit operator bool() const { return data_ != nullptr; }

 private:
  Backend* owner_ = nullptr;
  int device_ = -1;
  void* data_ = nullptr;
  std::size_t bytes_ = 0;
};

// The queues a device runs work on. Every op runs on Compute, in the order
// it was issued; copies between host memory and the device may run on
// Upload (host to device) and Download (device to host) beside it, so that a
// layer's cache pages move while another layer computes. Work on different
// queues is ordered only by QueueEvents.
enum class Queue : std::uint8_t { Compute, Upload, Download };

// A point in one queue's work (Backend::record_event) that another queue, or
// the host, waits for. Made by Backend::create_event and reused: each record
// moves the point, and a wait refers to the latest record before it.
class QueueEvent {
 public:
  virtual ~QueueEvent() = default;
};

// Per-token metadata for attention and K/V writes over paged storage. Token t
// belongs to sequence token_sequence[t] and sits at absolute position
// positions[t]; its K/V live in page block_tables[s * max_pages + pos / page_size]
// at slot pos % page_size. All arrays are in device memory. Rows may be
// padded with -1 to a larger max_pages: results depend only on the entries
// positions reach, so one recorded step (CapturedWork) serves a range of
// lengths.
struct TokenBatch {
  const std::int32_t* token_sequence = nullptr;  // [tokens]
  const std::int32_t* positions = nullptr;       // [tokens]
  const std::int32_t* block_tables = nullptr;    // [sequences, max_pages]
  std::int64_t tokens = 0;
  int max_pages = 0;
  // Per sequence, the page whose FP16 mirror (KvMirrors) this step writes
  // and reads: [sequences][2] = (index into its page-table row, mirror
  // slot); -1 for none. Null: no sequence has one. Ignored by a layer view
  // without mirrors.
  const std::int32_t* mirrored = nullptr;
  // Blocks of positions that attend to each other both ways (Gemma 3's
  // image positions at prefill), or null for causal attention: per token,
  // the first and last position of its block (its own position twice
  // outside one). A token sees every key of its block, the last of which
  // this step or an earlier one must write, and through a sliding window
  // the keys before it as ever: transformers ORs the block into the mask.
  const std::int32_t* visible_from = nullptr;
  const std::int32_t* visible_through = nullptr;
};

// The last key position token `t` of `batch` attends to.
inline std::int32_t last_visible_position(const TokenBatch& batch, std::int64_t t) {
  return batch.visible_through != nullptr ? batch.visible_through[t] : batch.positions[t];
}

// The first key position token `t` of `batch` attends to under a sliding
// window of `window` positions (0: none).
inline std::int32_t first_visible_position(const TokenBatch& batch, std::int64_t t, int window) {
  if (window <= 0) return 0;
  const std::int32_t first = std::max(0, batch.positions[t] - window + 1);
  return batch.visible_from != nullptr ? std::min(first, batch.visible_from[t]) : first;
}

struct AttentionParams {
  int heads = 0;           // query heads; heads % kv_heads == 0 (grouped-query attention)
  float scale = 0.0f;      // usually 1/sqrt(head_dim)
  int sliding_window = 0;  // attend to the last `sliding_window` positions; 0: all
  // Gemma 2's attention-logit soft-capping: each scaled score s becomes
  // softcap * tanh(s / softcap) before the mask and softmax; 0: none.
  float softcap = 0.0f;
};

// The activation applied to the gate of a gated MLP.
enum class GatedActivation : std::uint8_t {
  Silu,      // x * sigmoid(x): Llama, Mistral, Qwen, Phi-3, the experts of Mixtral and Qwen3-MoE
  GeluTanh,  // 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))): Gemma's gelu_pytorch_tanh
};

// Rotary position embedding, Hugging Face's rotate-half convention: dims i and
// i + rotary_dim/2 of each head form a pair rotated by position * inv_freq[i].
struct RopeParams {
  const float* inv_freq = nullptr;  // [rotary_dim / 2], device memory
  int rotary_dim = 0;               // <= head_dim
  float attention_factor = 1.0f;    // cos and sin are multiplied by this (yarn, longrope)
  // M-RoPE (Qwen2-VL, Qwen2.5-VL, Qwen3-VL): `positions` then holds three
  // ids per token, [tokens][3] as (temporal, height, width), and frequency i
  // turns by the id of its axis (rope_axis). The frequencies per axis, in
  // order ([16, 24, 24] of 64 for head_dim 128); all zero: one position per
  // token, as every other model. Their sum must be rotary_dim / 2.
  std::array<int, 3> mrope_section = {0, 0, 0};
  // Qwen3-VL's layout: the axes take turns (t, h, w, t, h, w, ...) over the
  // first 3 * section frequencies of h and of w, the rest are t's; without
  // it (Qwen2-VL, Qwen2.5-VL) each axis holds one contiguous run.
  bool mrope_interleaved = false;

  bool multimodal() const { return mrope_section[0] + mrope_section[1] + mrope_section[2] > 0; }
};

// Which of a token's three M-RoPE ids (0: temporal, 1: height, 2: width)
// rotary frequency `i` turns by; 0 without M-RoPE.
inline int rope_axis(const RopeParams& rope, int i) {
  const std::array<int, 3>& section = rope.mrope_section;
  if (rope.mrope_interleaved) {
    if (i % 3 == 1 && i < 3 * section[1]) return 1;
    if (i % 3 == 2 && i < 3 * section[2]) return 2;
    return 0;
  }
  if (i < section[0]) return 0;
  return i < section[0] + section[1] ? 1 : 2;
}

// Throws std::invalid_argument when `rope` cannot rotate heads of head_dim:
// a rotary dimension that is odd or wider than the head, or M-RoPE sections
// that do not add up to its frequencies.
void check_rope(const RopeParams& rope, int head_dim);

// The compute devices of one kind (CPU or CUDA) and every op the forward pass
// needs. Activations are FP32; pointers are in the memory of `device`. A
// backend may present one physical device as several logical ones, each with
// its own memory budget.
class Backend {
 public:
  virtual ~Backend() = default;

  virtual std::string name() const = 0;
  // What this backend's results depend on beyond Quire's own code, so that a
  // check of them is redone when it changes: the CUDA backend names its
  // runtime's and the driver's versions. Empty for the CPU backend, which is
  // Quire's code alone.
  virtual std::string version() const { return {}; }
  virtual std::vector<DeviceInfo> devices() const = 0;

  // Throws DeviceOutOfMemory when the device cannot hold `bytes` more.
  virtual DeviceBuffer allocate(int device, std::size_t bytes, std::string_view purpose) = 0;

  // Host memory that copies to and from this backend's devices read and
  // write at full speed (page-locked on a GPU), counted against no device's
  // budget: the KV pages of layers whose cache lives in host memory. The
  // buffer's device() is -1. The default is plain aligned host memory.
  // Throws DeviceOutOfMemory (device -1) when the host has none to give.
  virtual DeviceBuffer allocate_host(std::size_t bytes, std::string_view purpose);

  // Host (-1) or device memory on either side.
  virtual void copy(void* destination, int destination_device, const void* source,
                    int source_device, std::size_t bytes) = 0;

  // A copy between host memory (allocate_host's, for full speed) and
  // `device`, queued on `queue` (Upload: host to device; Download: device
  // to host) and perhaps still running when the call returns. It is ordered
  // after nothing but earlier work on the same queue: callers order it with
  // events. The default copies at once, as copy() does, which is what a
  // backend that runs every op as it is called (the CPU's) needs.
  virtual void copy_async(Queue queue, int device, void* destination, const void* source,
                          std::size_t bytes);
  // Events between a device's queues; the defaults do nothing, which is
  // right for a backend whose every op and copy has finished when its call
  // returns.
  virtual std::unique_ptr<QueueEvent> create_event(int device);
  // Marks the work issued so far on the device's `queue`.
  virtual void record_event(QueueEvent& event, int device, Queue queue);
  // Work issued on the device's `queue` from now on starts after the
  // event's latest mark has been reached.
  virtual void wait_event(const QueueEvent& event, int device, Queue queue);
  // The host waits until the event's latest mark has been reached.
  virtual void synchronize_event(const QueueEvent& event, int device);
  virtual void fill_zero(int device, void* data, std::size_t bytes) = 0;
  // Waits until all queued work on the device is done.
  virtual void synchronize(int device) = 0;
  // Gives back memory the backend keeps for itself between calls (workspaces
  // grown for the largest step so far), after waiting for the work that uses
  // it: the first thing to try when a step runs out of memory. Later calls
  // grow what they need again. Work recorded earlier (CapturedWork) that
  // used that memory no longer replays. The default keeps nothing.
  virtual void release_cached_memory() {}

  // Recording a device's queued work once and queuing it again as a whole
  // (CapturedWork): a decode step is hundreds of small ops, and at batch 1
  // issuing them one at a time costs a large share of a GPU's step. Between
  // begin_capture and end_capture, ops on `device` from the calling thread
  // are recorded instead of run. Recorded ops refer to memory by address, so a
  // replay reads what those buffers hold at replay time, and the caller keeps
  // them alive and in place; copies to or from host memory, waits and
  // allocations cannot be recorded (they throw while capturing, and the
  // capture then fails). The CPU backend runs every op as it is called and
  // supports none of this: callers check supports_capture().
  virtual bool supports_capture() const { return false; }
  virtual void begin_capture(int /*device*/) {
    throw std::logic_error(name() + " backend cannot capture work");
  }
  // Ends the capture whatever happened in it (the device queues work as usual
  // afterwards); throws when the recording cannot be replayed.
  virtual std::unique_ptr<CapturedWork> end_capture(int /*device*/) {
    throw std::logic_error(name() + " backend cannot capture work");
  }
  // Queues recorded work on the device. False, with nothing queued, when
  // memory of the backend's own that the work uses (workspaces grown since)
  // has moved: the caller runs the ops directly and may record them anew.
  // Errors the recorded ops detect on the device surface at the next wait.
  virtual bool replay(int /*device*/, CapturedWork& /*work*/) {
    throw std::logic_error(name() + " backend cannot capture work");
  }

  // out[t, :] = table[tokens[t], :], widened to FP32. table is [vocab, hidden].
  // Throws std::invalid_argument for a token outside the vocabulary.
  virtual void embedding(int device, const DenseWeight& table, std::int64_t vocab,
                         std::int64_t hidden, const std::int32_t* tokens, std::int64_t count,
                         float* out) = 0;
  // out = x / sqrt(mean(x^2) + eps) * weight, per row of `cols` values. `out`
  // may be `x` (per-head query and key norms normalize in place).
  virtual void rms_norm(int device, const float* x, const DenseWeight& weight, float eps,
                        std::int64_t rows, std::int64_t cols, float* out) = 0;
  // out[rows, N] = x[rows, K] W^T (+ bias); `kind` says whose rows they are
  // (ProductRows).
  virtual void linear(int device, const float* x, std::int64_t rows, const LinearWeight& weight,
                      float* out, ProductRows kind) = 0;
  // outs[i] = x W_i^T (+ bias_i) for several weights over the same input (a
  // layer's q, k and v, or gate and up), so that a backend can run them
  // together. The default calls linear() for each.
  virtual void linear_many(int device, const float* x, std::int64_t rows,
                           std::span<const LinearWeight* const> weights,
                           std::span<float* const> outs, ProductRows kind);
  // In place on x [tokens, heads, head_dim].
  virtual void rope(int device, float* x, std::int64_t tokens, int heads, int head_dim,
                    const std::int32_t* positions, const RopeParams& rope) = 0;
  // out = activation(gate) * up, elementwise; out may be gate.
  virtual void gated_activation(int device, GatedActivation activation, const float* gate,
                                const float* up, std::int64_t count, float* out) = 0;
  // Kept for callers: gated_activation with Silu.
  void silu_mul(int device, const float* gate, const float* up, std::int64_t count, float* out) {
    gated_activation(device, GatedActivation::Silu, gate, up, count, out);
  }
  // x += y, elementwise.
  virtual void add(int device, float* x, const float* y, std::int64_t count) = 0;
  // x = cap * tanh(x / cap), elementwise, in place (Gemma 2's final-logit soft-capping).
  virtual void soft_cap(int device, float* x, std::int64_t count, float cap) = 0;
  // x *= factor, elementwise, in place (Gemma's embedding scale).
  virtual void scale(int device, float* x, std::int64_t count, float factor) = 0;
  // out[r, 0:cols] = x[r, first : first + cols] for r < rows, rows of x `width` wide: splits
  // the output of a fused projection (Phi-3's qkv_proj, gate_up_proj).
  virtual void copy_columns(int device, const float* x, std::int64_t rows, std::int64_t width,
                            std::int64_t first, std::int64_t cols, float* out) = 0;
  // Mixtures of experts. out[i, :] = x[rows[i], :] for i < count (rows of `cols` values);
  // rows in device memory.
  virtual void gather_rows(int device, const float* x, std::int64_t cols, const std::int32_t* rows,
                           std::int64_t count, float* out) = 0;
  // x[rows[i], :] += weights[i] * y[i, :] for i < count; rows and weights in device memory; the
  // rows of one call are distinct (one expert's tokens), so no two i write the same row.
  virtual void scatter_add_rows(int device, float* x, std::int64_t cols, const float* y,
                                const std::int32_t* rows, const float* weights,
                                std::int64_t count) = 0;

  // Encodes key and value [tokens, kv_heads, head_dim] into their pages. A
  // write at slot 0 of a page starts that page's content afresh (FP8 pages
  // reset their scales); a write at slot s keeps slots [0, s), re-encoding
  // them if an FP8 scale must grow. Callers keep prefill chunks page-aligned.
  virtual void write_kv(int device, const KvLayerView& layer, const TokenBatch& batch,
                        const float* key, const float* value) = 0;
  // out[t, heads * head_dim]: causal attention of query t (query [tokens, heads,
  // head_dim]) over its sequence's positions 0..positions[t] (within the window).
  virtual void paged_attention(int device, const KvLayerView& layer, const TokenBatch& batch,
                               const float* query, const AttentionParams& params, float* out) = 0;

  // Copies the first `tokens` token slots of page `source` into page
  // `destination`, every plane (FP8 scales included).
  virtual void copy_page_tokens(int device, const KvLayerView& layer, int source, int destination,
                                int tokens) = 0;
  // Fills mirror slot `slot` (KvMirrors) with the first `tokens` tokens of
  // `page`, decoded from their coding: the mirror of a page whose earlier
  // tokens were written without one (a chat resumed after its mirror went to
  // another). Throws std::invalid_argument for a view without mirrors or a
  // slot outside them.
  virtual void fill_mirror(int device, const KvLayerView& layer, int page, int slot,
                           int tokens) = 0;
  // Whole pages between device storage and a host buffer of the same layout
  // (page bytes of every plane, one after another).
  virtual void save_page(int device, const KvLayerView& layer, int page, void* host) = 0;
  virtual void restore_page(int device, const KvLayerView& layer, int page, const void* host) = 0;

  // Sampling without fetching whole rows (top_logits.h): per row of logits
  // [rows, vocab], the k highest logits ranked, their ids and the row's
  // TopLogitsStats, the tail sum scaled by inv_temperatures [rows]. Throws
  // std::invalid_argument for a k outside 1..min(vocab, kMaxTopLogits). The
  // default copies the rows to the host and the results back.
  virtual void top_logits(int device, const float* logits, std::int64_t rows, std::int64_t vocab,
                          int k, const float* inv_temperatures, float* values, std::int32_t* ids,
                          TopLogitsStats* stats);
  // out[i] = logits[rows[i] * vocab + ids[i]] for [row_count, vocab] logits;
  // NaN where rows[i] or ids[i] lies outside. The default goes through the host.
  virtual void gather_logits(int device, const float* logits, std::int64_t row_count,
                             std::int64_t vocab, const std::int32_t* rows, const std::int32_t* ids,
                             std::int64_t count, float* out);
  // Whether the host reads device memory directly (the CPU backend), so that
  // a whole row of logits costs no transfer.
  virtual bool shares_host_memory() const { return false; }
  // Where the products choose their arithmetic by the number and kind of
  // rows (ProductRows), how many decode rows one product may hold so that
  // each row gets the bits it gets alone: the forward pass then multiplies
  // each prompt sequence's rows on their own and the decode rows in products
  // of at most this many, so a sequence's tokens do not depend on what else
  // runs. 0: the products do not choose so, and a step's rows go together.
  virtual std::int64_t invariant_decode_rows() const { return 0; }
  // Whether linear() takes FP8 weights (Fp8Weight). A model that has them is
  // refused before loading on a backend that does not.
  virtual bool runs_fp8_weights() const { return true; }
  // The same for EXL3 weights (Exl3Weight).
  virtual bool runs_exl3_weights() const { return true; }

 protected:
  friend class DeviceBuffer;
  virtual void release(int device, void* data, std::size_t bytes) noexcept = 0;
  // Memory from allocate_host; the default frees what the default allocated.
  virtual void release_host(void* data, std::size_t bytes) noexcept;
};

}  // namespace quire::kernels
