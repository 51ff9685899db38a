#pragma once

#include <functional>
#include <string>
#include <vector>

#include "forwarding_backend.h"

namespace quire::test {

// The CPU backend with capture the way CUDA graphs behave: between
// begin_capture and end_capture the ops are recorded, with their arguments
// (addresses, sizes) as they were, and nothing runs; a replay runs them
// again, reading whatever the buffers hold then. Copies to or from the host,
// waits and allocations refuse while recording, as they do on CUDA, so a step
// that leaks one into its recording fails here as it would on a GPU.
class RecordingBackend final : public ForwardingBackend {
 public:
  explicit RecordingBackend(kernels::CpuBackend& inner) : ForwardingBackend(inner) {}

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
  kernels::DeviceBuffer allocate(int device, std::size_t bytes, std::string_view purpose) override;
  void copy(void* destination, int destination_device, const void* source, int source_device,
            std::size_t bytes) override;
  void synchronize(int device) override;
  void save_page(int device, const kernels::KvLayerView& layer, int page, void* host) override;
  void restore_page(int device, const kernels::KvLayerView& layer, int page,
                    const void* host) override;

  bool supports_capture() const override { return true; }
  void begin_capture(int device) override;
  std::unique_ptr<kernels::CapturedWork> end_capture(int device) override;
  bool replay(int device, kernels::CapturedWork& work) override;

 protected:
  // Runs the op now, or records it while capturing.
  void forward(int device, const char* op, const std::function<void()>& work) override;

 private:
  void refuse_while_recording(const char* what) const;

  bool recording_ = false;
  int recording_device_ = -1;
  std::vector<std::function<void()>> ops_;
  bool refused_ = false;  // an op refused during this recording
  int generation_ = 0;
  int replays_ = 0;
  int recorded_ops_ = 0;
};

}  // namespace quire::test
