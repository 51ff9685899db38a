// Page-locked host memory for KV pages offloaded to the host, and copies that
// run beside compute: each GPU gets an upload and a download stream, made on
// first use, ordered against its compute stream by events.

#include <cuda_runtime_api.h>

#include <array>
#include <mutex>

#include "capture_guard.h"
#include "cuda_backend.h"
#include "quire/kernels/cuda/cuda_error.h"

namespace quire::kernels::cuda {
namespace {

class CudaQueueEvent final : public QueueEvent {
 public:
  explicit CudaQueueEvent(int gpu) : gpu_(gpu) {
    check(cudaEventCreateWithFlags(&event_, cudaEventDisableTiming), "create an event");
  }
  ~CudaQueueEvent() override {
    // Destroying an event with a pending record is allowed: CUDA releases it
    // once the record completes.
    if (cudaSetDevice(gpu_) == cudaSuccess) cudaEventDestroy(event_);
  }
  CudaQueueEvent(const CudaQueueEvent&) = delete;
  CudaQueueEvent& operator=(const CudaQueueEvent&) = delete;
  cudaEvent_t get() const { return event_; }
  int gpu() const { return gpu_; }

 private:
  int gpu_;
  cudaEvent_t event_ = nullptr;
};

const CudaQueueEvent& cuda_event(const QueueEvent& event) {
  const auto* cuda = dynamic_cast<const CudaQueueEvent*>(&event);
  if (cuda == nullptr) throw std::invalid_argument("an event the CUDA backend did not make");
  return *cuda;
}

}  // namespace

struct CudaBackend::CopyStreams {
  std::mutex mutex;
  // By GPU: the upload and the download stream; null until first used.
  std::vector<std::array<cudaStream_t, 2>> streams;

  ~CopyStreams() {
    for (std::size_t gpu = 0; gpu < streams.size(); ++gpu) {
      for (cudaStream_t stream : streams[gpu]) {
        if (stream == nullptr) continue;
        if (cudaSetDevice(static_cast<int>(gpu)) == cudaSuccess) cudaStreamDestroy(stream);
      }
    }
  }
};

void CudaBackend::CopyStreamsDeleter::operator()(CopyStreams* streams) const noexcept {
  delete streams;
}

void* CudaBackend::queue_stream(int device, Queue queue) {
  if (queue == Queue::Compute) return stream(device);
  std::lock_guard lock(copy_streams_mutex_);
  if (!copy_streams_) copy_streams_.reset(new CopyStreams);
  CopyStreams& copies = *copy_streams_;
  copies.streams.resize(gpus_.size(), {nullptr, nullptr});
  cudaStream_t& made =
      copies.streams[static_cast<std::size_t>(gpu(device))][queue == Queue::Upload ? 0 : 1];
  if (made == nullptr) {
    // The device's GPU is current (activate): the stream belongs to it.
    check(cudaStreamCreateWithFlags(&made, cudaStreamNonBlocking), "create a CUDA copy stream");
  }
  return made;
}

DeviceBuffer CudaBackend::allocate_host(std::size_t bytes, std::string_view purpose) {
  refuse_while_capturing("allocate pinned host memory");
  void* data = nullptr;
  // Portable: every GPU's copy streams read and write it at full speed.
  const cudaError_t status =
      cudaHostAlloc(&data, std::max<std::size_t>(bytes, 1), cudaHostAllocPortable);
  if (status == cudaErrorMemoryAllocation) {
    cudaGetLastError();
    throw DeviceOutOfMemory(-1, static_cast<std::int64_t>(bytes), 0, purpose);
  }
  check(status, "allocate pinned host memory");
  return DeviceBuffer(this, -1, data, bytes);
}

void CudaBackend::release_host(void* data, std::size_t) noexcept {
  // Waits for copies still reading or writing it.
  cudaFreeHost(data);
}

void CudaBackend::copy_async(Queue queue, int device, void* destination, const void* source,
                             std::size_t bytes) {
  if (queue == Queue::Compute) {
    throw std::invalid_argument("copy_async runs on the Upload or Download queue");
  }
  if (bytes == 0) return;
  const bool upload = queue == Queue::Upload;
  const char* operation =
      upload ? "queue a copy host to CUDA device" : "queue a copy CUDA device to host";
  activate(device);
  refuse_while_capturing(operation);
  check(cudaMemcpyAsync(destination, source, bytes,
                        upload ? cudaMemcpyHostToDevice : cudaMemcpyDeviceToHost,
                        static_cast<cudaStream_t>(queue_stream(device, queue))),
        operation);
}

std::unique_ptr<QueueEvent> CudaBackend::create_event(int device) {
  activate(device);
  return std::make_unique<CudaQueueEvent>(gpu(device));
}

void CudaBackend::record_event(QueueEvent& event, int device, Queue queue) {
  activate(device);
  refuse_while_capturing("record a CUDA event");
  const CudaQueueEvent& cuda = cuda_event(event);
  if (cuda.gpu() != gpu(device)) throw std::invalid_argument("an event of another GPU");
  check(cudaEventRecord(cuda.get(), static_cast<cudaStream_t>(queue_stream(device, queue))),
        "record a CUDA event");
}

void CudaBackend::wait_event(const QueueEvent& event, int device, Queue queue) {
  activate(device);
  refuse_while_capturing("wait for a CUDA event");
  check(cudaStreamWaitEvent(static_cast<cudaStream_t>(queue_stream(device, queue)),
                            cuda_event(event).get(), 0),
        "wait for a CUDA event");
}

void CudaBackend::synchronize_event(const QueueEvent& event, int device) {
  activate(device);
  refuse_while_capturing("wait for a CUDA event");
  check(cudaEventSynchronize(cuda_event(event).get()), "wait for a CUDA event");
}

}  // namespace quire::kernels::cuda
