#include "recording_backend.h"

#include <stdexcept>

namespace quire::test {
namespace {

struct Recording final : kernels::CapturedWork {
  const RecordingBackend* owner = nullptr;
  int device = -1;
  int generation = 0;
  std::vector<std::function<void()>> ops;
};

}  // namespace

void RecordingBackend::refuse_while_recording(const char* what) const {
  if (recording_) throw std::runtime_error(std::string(what) + " cannot be recorded");
}

void RecordingBackend::run(const char* what, std::function<void()> op) {
  if (!recording_) return op();
  if (refuse_op == what) {
    refused_ = true;  // as CUDA invalidates the whole capture
    throw std::runtime_error(std::string(what) + " refused while recording");
  }
  ops_.push_back(std::move(op));
}

kernels::DeviceBuffer RecordingBackend::allocate(int device, std::size_t bytes,
                                                 std::string_view purpose) {
  refuse_while_recording("allocate");
  return inner_.allocate(device, bytes, purpose);
}

void RecordingBackend::copy(void* destination, int destination_device, const void* source,
                            int source_device, std::size_t bytes) {
  if (destination_device < 0 || source_device < 0) refuse_while_recording("a copy with the host");
  run("copy",
      [=, this] { inner_.copy(destination, destination_device, source, source_device, bytes); });
}

void RecordingBackend::fill_zero(int device, void* data, std::size_t bytes) {
  run("fill_zero", [=, this] { inner_.fill_zero(device, data, bytes); });
}

void RecordingBackend::synchronize(int device) {
  refuse_while_recording("synchronize");
  inner_.synchronize(device);
}

void RecordingBackend::begin_capture(int device) {
  if (recording_) throw std::logic_error("already recording");
  recording_ = true;
  recording_device_ = device;
  refused_ = false;
  ops_.clear();
}

std::unique_ptr<kernels::CapturedWork> RecordingBackend::end_capture(int device) {
  if (!recording_) throw std::logic_error("not recording");
  recording_ = false;
  std::vector<std::function<void()>> ops = std::move(ops_);
  ops_.clear();
  if (device != recording_device_) throw std::logic_error("another device");
  if (fail_end_capture) throw std::runtime_error("the recording cannot be instantiated");
  if (refused_) throw std::runtime_error("the recording was invalidated");
  auto recording = std::make_unique<Recording>();
  recording->owner = this;
  recording->device = device;
  recording->generation = generation_;
  recording->ops = std::move(ops);
  recorded_ops_ += static_cast<int>(recording->ops.size());
  return recording;
}

bool RecordingBackend::replay(int device, kernels::CapturedWork& work) {
  auto* recording = dynamic_cast<Recording*>(&work);
  if (recording == nullptr || recording->owner != this || recording->device != device) {
    throw std::invalid_argument("not this backend's recording");
  }
  if (recording->generation != generation_) return false;
  for (const std::function<void()>& op : recording->ops)
    op();
  ++replays_;
  return true;
}

void RecordingBackend::embedding(int device, const kernels::DenseWeight& table, std::int64_t vocab,
                                 std::int64_t hidden, const std::int32_t* tokens,
                                 std::int64_t count, float* out) {
  run("embedding",
      [=, this] { inner_.embedding(device, table, vocab, hidden, tokens, count, out); });
}

void RecordingBackend::rms_norm(int device, const float* x, const kernels::DenseWeight& weight,
                                float eps, std::int64_t rows, std::int64_t cols, float* out) {
  run("rms_norm", [=, this] { inner_.rms_norm(device, x, weight, eps, rows, cols, out); });
}

void RecordingBackend::linear(int device, const float* x, std::int64_t rows,
                              const kernels::LinearWeight& weight, float* out) {
  // Weights live as long as the loaded model, which outlives its recordings.
  const kernels::LinearWeight* w = &weight;
  run("linear", [=, this] { inner_.linear(device, x, rows, *w, out); });
}

void RecordingBackend::linear_many(int device, const float* x, std::int64_t rows,
                                   std::span<const kernels::LinearWeight* const> weights,
                                   std::span<float* const> outs) {
  std::vector<const kernels::LinearWeight*> w(weights.begin(), weights.end());
  std::vector<float*> o(outs.begin(), outs.end());
  run("linear_many", [=, this] { inner_.linear_many(device, x, rows, w, o); });
}

void RecordingBackend::rope(int device, float* x, std::int64_t tokens, int heads, int head_dim,
                            const std::int32_t* positions, const kernels::RopeParams& rope) {
  run("rope", [=, this] { inner_.rope(device, x, tokens, heads, head_dim, positions, rope); });
}

void RecordingBackend::silu_mul(int device, const float* gate, const float* up, std::int64_t count,
                                float* out) {
  run("silu_mul", [=, this] { inner_.silu_mul(device, gate, up, count, out); });
}

void RecordingBackend::add(int device, float* x, const float* y, std::int64_t count) {
  run("add", [=, this] { inner_.add(device, x, y, count); });
}

void RecordingBackend::write_kv(int device, const kernels::KvLayerView& layer,
                                const kernels::TokenBatch& batch, const float* key,
                                const float* value) {
  run("write_kv", [=, this] { inner_.write_kv(device, layer, batch, key, value); });
}

void RecordingBackend::paged_attention(int device, const kernels::KvLayerView& layer,
                                       const kernels::TokenBatch& batch, const float* query,
                                       const kernels::AttentionParams& params, float* out) {
  run("paged_attention",
      [=, this] { inner_.paged_attention(device, layer, batch, query, params, out); });
}

void RecordingBackend::copy_page_tokens(int device, const kernels::KvLayerView& layer, int source,
                                        int destination, int tokens) {
  run("copy_page_tokens",
      [=, this] { inner_.copy_page_tokens(device, layer, source, destination, tokens); });
}

void RecordingBackend::save_page(int device, const kernels::KvLayerView& layer, int page,
                                 void* host) {
  refuse_while_recording("save_page");
  inner_.save_page(device, layer, page, host);
}

void RecordingBackend::restore_page(int device, const kernels::KvLayerView& layer, int page,
                                    const void* host) {
  refuse_while_recording("restore_page");
  inner_.restore_page(device, layer, page, host);
}

}  // namespace quire::test
