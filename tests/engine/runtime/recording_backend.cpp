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

void RecordingBackend::forward(int, const char* op, const std::function<void()>& work) {
  if (!recording_) return work();
  if (refuse_op == op) {
    refused_ = true;  // as CUDA invalidates the whole capture
    throw std::runtime_error(std::string(op) + " refused while recording");
  }
  ops_.push_back(work);
}

kernels::DeviceBuffer RecordingBackend::allocate(int device, std::size_t bytes,
                                                 std::string_view purpose) {
  refuse_while_recording("allocate");
  return ForwardingBackend::allocate(device, bytes, purpose);
}

void RecordingBackend::copy(void* destination, int destination_device, const void* source,
                            int source_device, std::size_t bytes) {
  if (destination_device < 0 || source_device < 0) refuse_while_recording("a copy with the host");
  ForwardingBackend::copy(destination, destination_device, source, source_device, bytes);
}

void RecordingBackend::synchronize(int device) {
  refuse_while_recording("synchronize");
  ForwardingBackend::synchronize(device);
}

void RecordingBackend::save_page(int device, const kernels::KvLayerView& layer, int page,
                                 void* host) {
  refuse_while_recording("save_page");
  ForwardingBackend::save_page(device, layer, page, host);
}

void RecordingBackend::restore_page(int device, const kernels::KvLayerView& layer, int page,
                                    const void* host) {
  refuse_while_recording("restore_page");
  ForwardingBackend::restore_page(device, layer, page, host);
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

}  // namespace quire::test
