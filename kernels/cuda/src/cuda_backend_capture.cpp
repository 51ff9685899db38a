// CudaBackend's capture of queued work into CUDA graphs (Backend::begin_capture):
// stream capture on the device's GPU stream, instantiated once, launched on
// each replay. Thread-local capture mode: only the capturing thread's calls
// that are unsafe during a capture (allocation, waits) break it; another
// thread may still read free memory for the statistics meanwhile.

#include <cuda_runtime_api.h>

#include <stdexcept>
#include <string>

#include "capture_guard.h"
#include "cuda_backend.h"
#include "quire/kernels/cuda/cuda_error.h"

namespace quire::kernels::cuda {
namespace {

// The GPU whose stream this thread is capturing, or -1, and the backend's
// workspace generation when the capture began.
thread_local int t_capturing_gpu = -1;
thread_local std::uint64_t t_capture_generation = 0;

class CudaGraph final : public CapturedWork {
 public:
  CudaGraph(const CudaBackend* owner, int gpu, cudaGraphExec_t graph, std::uint64_t generation)
      : owner_(owner), gpu_(gpu), graph_(graph), generation_(generation) {}
  ~CudaGraph() override {
    // A graph still running is freed by CUDA once it completes.
    if (cudaSetDevice(gpu_) == cudaSuccess) cudaGraphExecDestroy(graph_);
  }
  CudaGraph(const CudaGraph&) = delete;
  CudaGraph& operator=(const CudaGraph&) = delete;

  const CudaBackend* owner() const { return owner_; }
  int gpu() const { return gpu_; }
  cudaGraphExec_t graph() const { return graph_; }
  std::uint64_t generation() const { return generation_; }

 private:
  const CudaBackend* owner_;
  int gpu_;
  cudaGraphExec_t graph_;
  std::uint64_t generation_;
};

}  // namespace

bool capturing_on_this_thread() {
  return t_capturing_gpu >= 0;
}

void refuse_while_capturing(const char* operation) {
  if (!capturing_on_this_thread()) return;
  throw CudaError(operation, cudaErrorStreamCaptureUnsupported,
                  "cannot be recorded into a CUDA graph: it allocates, frees, or waits for the "
                  "device");
}

void CudaBackend::begin_capture(int device) {
  activate(device);
  if (capturing_on_this_thread()) {
    throw std::logic_error("a CUDA graph capture is already in progress on this thread");
  }
  t_capture_generation = workspace_generation_.load();
  check(cudaStreamBeginCapture(static_cast<cudaStream_t>(stream(device)),
                               cudaStreamCaptureModeThreadLocal),
        "begin recording a CUDA graph");
  t_capturing_gpu = gpu(device);
}

std::unique_ptr<CapturedWork> CudaBackend::end_capture(int device) {
  if (!capturing_on_this_thread()) {
    throw std::logic_error("no CUDA graph capture is in progress on this thread");
  }
  const int card = t_capturing_gpu;
  t_capturing_gpu = -1;
  // The capture ends on the stream it began on, whatever `device` says, so
  // that the stream always leaves capture mode.
  check(cudaSetDevice(card), "select CUDA device");
  cudaGraph_t graph = nullptr;
  const cudaError_t ended = cudaStreamEndCapture(
      static_cast<cudaStream_t>(gpus_[static_cast<std::size_t>(card)].stream), &graph);
  if (ended != cudaSuccess || graph == nullptr) {
    // An op refused or failed during the capture, which invalidated it; the
    // error is not sticky, so clear it for later checks.
    cudaGetLastError();
    if (graph != nullptr) cudaGraphDestroy(graph);
    check(ended != cudaSuccess ? ended : cudaErrorStreamCaptureInvalidated, "record a CUDA graph");
  }
  if (device < 0 || device >= static_cast<int>(devices_.size()) || gpu(device) != card) {
    cudaGraphDestroy(graph);
    throw std::logic_error("end_capture names a device other than the one capturing");
  }
  if (workspace_generation_.load() != t_capture_generation) {
    cudaGraphDestroy(graph);
    throw CudaError("record a CUDA graph", cudaErrorStreamCaptureInvalidated,
                    "a workspace moved while recording");
  }
  cudaGraphExec_t executable = nullptr;
  const cudaError_t instantiated = cudaGraphInstantiate(&executable, graph, 0);
  cudaGraphDestroy(graph);
  if (instantiated != cudaSuccess) cudaGetLastError();
  check(instantiated, "instantiate a CUDA graph");
  return std::make_unique<CudaGraph>(this, card, executable, t_capture_generation);
}

bool CudaBackend::replay(int device, CapturedWork& work) {
  activate(device);
  const auto* graph = dynamic_cast<const CudaGraph*>(&work);
  if (graph == nullptr || graph->owner() != this || graph->gpu() != gpu(device)) {
    throw std::invalid_argument("replay: the work was recorded by another backend or GPU");
  }
  // A workspace reallocated since the capture was freed with the old address
  // still in the graph's kernel arguments.
  if (graph->generation() != workspace_generation_.load()) return false;
  check(cudaGraphLaunch(graph->graph(), static_cast<cudaStream_t>(stream(device))),
        "replay a CUDA graph");
  return true;
}

}  // namespace quire::kernels::cuda
