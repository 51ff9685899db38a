// CUDA devices, their memory, streams, and copies between host and devices.

#include "cuda_backend.h"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstring>
#include <stdexcept>

#include "cuda_linear.h"
#include "elementwise_ops.h"
#include "quire/kernels/cuda/cuda_error.h"

namespace quire::kernels::cuda {
namespace {

constexpr std::int64_t kMiB = std::int64_t{1} << 20;
// Copies between devices without peer access go through host memory in
// pieces of this size, so the pinned buffer stays small.
constexpr std::size_t kStagingBytes = std::size_t{16} << 20;

cudaStream_t as_stream(void* stream) {
  return static_cast<cudaStream_t>(stream);
}

// An event for ordering one stream after another; destroying it while it is
// pending is allowed (CUDA releases it once it completes).
class Event {
 public:
  Event() { check(cudaEventCreateWithFlags(&event_, cudaEventDisableTiming), "create an event"); }
  ~Event() { cudaEventDestroy(event_); }
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;
  cudaEvent_t get() const { return event_; }

 private:
  cudaEvent_t event_ = nullptr;
};

std::string compute_capability(const cudaDeviceProp& properties) {
  return std::to_string(properties.major) + "." + std::to_string(properties.minor);
}

}  // namespace

CudaBackend::CudaBackend() {
  int count = 0;
  check(cudaGetDeviceCount(&count), "list CUDA devices");
  devices_.resize(static_cast<std::size_t>(count));
  linear_.resize(static_cast<std::size_t>(count));
  attention_scratch_.resize(static_cast<std::size_t>(count));
  // A constructor that throws runs no destructor: release what was made so far.
  auto destroy_streams = [this] {
    for (const Device& device : devices_) {
      if (device.stream != nullptr) cudaStreamDestroy(as_stream(device.stream));
    }
  };
  try {
    for (int i = 0; i < count; ++i) {
      cudaDeviceProp properties{};
      check(cudaGetDeviceProperties(&properties, i), "read CUDA device properties");
      Device& device = devices_[static_cast<std::size_t>(i)];
      device.name = properties.name;
      device.multiprocessors = std::max(properties.multiProcessorCount, 1);
      check(cudaSetDevice(i), "select CUDA device");
      // A GPU older than the architectures this library was compiled for
      // would fail at its first kernel; say so now, with the reason.
      const int image = kernel_image_status();
      if (image == cudaErrorNoKernelImageForDevice || image == cudaErrorInvalidDeviceFunction) {
        throw CudaError("CUDA backend", image,
                        "GPU " + std::to_string(i) + " (" + device.name + ", compute capability " +
                            compute_capability(properties) +
                            ") cannot run this build's kernels, compiled for CUDA architectures " +
                            QUIRE_CUDA_ARCHITECTURES);
      }
      check(image, "load the CUDA kernels");
      cudaStream_t stream = nullptr;
      // Non-blocking: Quire's streams never wait for the legacy default stream.
      check(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "create a CUDA stream");
      device.stream = stream;
    }
    peer_.assign(static_cast<std::size_t>(count) * static_cast<std::size_t>(count), 0);
    for (int from = 0; from < count; ++from) {
      for (int to = 0; to < count; ++to) {
        if (from == to) continue;
        int possible = 0;
        check(cudaDeviceCanAccessPeer(&possible, from, to), "query peer access");
        if (!possible) continue;
        check(cudaSetDevice(from), "select CUDA device");
        const cudaError_t status = cudaDeviceEnablePeerAccess(to, 0);
        if (status == cudaErrorPeerAccessAlreadyEnabled) {
          cudaGetLastError();  // not a failure; clear it so no later check sees it
        } else {
          check(status, "enable peer access");
        }
        peer_[static_cast<std::size_t>(from * count + to)] = 1;
      }
    }
  } catch (...) {
    destroy_streams();
    throw;
  }
}

CudaBackend::~CudaBackend() {
  // Their buffers and cuBLAS handles go first, while the streams still exist.
  linear_.clear();
  attention_scratch_.clear();
  for (const Device& device : devices_) {
    if (device.stream != nullptr) cudaStreamDestroy(as_stream(device.stream));
  }
  if (staging_ != nullptr) cudaFreeHost(staging_);
}

void CudaBackend::activate(int device) const {
  if (device < 0 || device >= static_cast<int>(devices_.size())) {
    throw std::out_of_range("no CUDA device " + std::to_string(device));
  }
  check(cudaSetDevice(device), "select CUDA device");
}

bool CudaBackend::peer_access(int from, int to) const {
  return peer_[static_cast<std::size_t>(from) * devices_.size() + static_cast<std::size_t>(to)] !=
         0;
}

std::vector<DeviceInfo> CudaBackend::devices() const {
  std::vector<DeviceInfo> infos;
  for (std::size_t i = 0; i < devices_.size(); ++i) {
    const int index = static_cast<int>(i);
    activate(index);
    std::size_t free = 0, total = 0;
    check(cudaMemGetInfo(&free, &total), "read CUDA device memory");
    DeviceInfo info;
    info.index = index;
    info.name = devices_[i].name;
    info.total_bytes = static_cast<std::int64_t>(total);
    info.free_bytes = static_cast<std::int64_t>(free);
    // cuBLAS workspaces, the context's own growth and the desktop's
    // compositor (on the display GPU) all need room that placement must leave.
    info.recommended_reserve_bytes = std::max(512 * kMiB, info.total_bytes / 20);
    infos.push_back(std::move(info));
  }
  return infos;
}

DeviceBuffer CudaBackend::allocate(int device, std::size_t bytes, std::string_view purpose) {
  activate(device);
  const std::size_t size = std::max<std::size_t>(bytes, 1);
  const auto requested = static_cast<std::int64_t>(size);
  std::size_t free = 0, total = 0;
  check(cudaMemGetInfo(&free, &total), "read CUDA device memory");
  if (size > free) {
    throw DeviceOutOfMemory(device, requested, static_cast<std::int64_t>(free), purpose);
  }
  void* data = nullptr;
  const cudaError_t status = cudaMalloc(&data, size);
  if (status == cudaErrorMemoryAllocation) {
    cudaGetLastError();
    if (cudaMemGetInfo(&free, &total) != cudaSuccess) free = 0;
    // Free memory can exceed the request when it is fragmented (or another
    // process took some meanwhile): the largest piece is what fell short.
    const std::int64_t available = std::min(static_cast<std::int64_t>(free), requested - 1);
    throw DeviceOutOfMemory(device, requested, available, purpose);
  }
  check(status, "allocate CUDA device memory");
  return DeviceBuffer(this, device, data, bytes);
}

void CudaBackend::release(int device, void* data, std::size_t) noexcept {
  // cudaFree waits for the device's queued work, which may still use `data`.
  if (cudaSetDevice(device) == cudaSuccess) cudaFree(data);
}

void CudaBackend::copy(void* destination, int destination_device, const void* source,
                       int source_device, std::size_t bytes) {
  if (bytes == 0) return;
  if (destination_device < 0 && source_device < 0) {
    std::memmove(destination, source, bytes);
    return;
  }
  // Copies that touch host memory finish before returning: the caller may
  // read, reuse or free that memory at once, as with the CPU backend.
  if (source_device < 0 || destination_device < 0) {
    const bool upload = source_device < 0;
    const int device = upload ? destination_device : source_device;
    const char* operation = upload ? "copy host to CUDA device" : "copy CUDA device to host";
    activate(device);
    check(cudaMemcpyAsync(destination, source, bytes,
                          upload ? cudaMemcpyHostToDevice : cudaMemcpyDeviceToHost,
                          as_stream(stream(device))),
          operation);
    check(cudaStreamSynchronize(as_stream(stream(device))), operation);
    return;
  }
  if (source_device == destination_device) {
    activate(source_device);
    check(cudaMemcpyAsync(destination, source, bytes, cudaMemcpyDeviceToDevice,
                          as_stream(stream(source_device))),
          "copy within a CUDA device");
    return;
  }
  copy_between_devices(destination, destination_device, source, source_device, bytes);
}

void CudaBackend::copy_between_devices(void* destination, int destination_device,
                                       const void* source, int source_device, std::size_t bytes) {
  activate(destination_device);
  activate(source_device);
  if (!peer_access(source_device, destination_device) &&
      !peer_access(destination_device, source_device)) {
    copy_through_host(destination, destination_device, source, source_device, bytes);
    return;
  }
  // The copy runs on the source's stream, after the work that produces the
  // source; it must also wait for queued work that still reads the
  // destination, and the destination's later work must wait for the copy.
  Event destination_ready;
  check(cudaSetDevice(destination_device), "select CUDA device");
  check(cudaEventRecord(destination_ready.get(), as_stream(stream(destination_device))),
        "copy between CUDA devices");
  check(cudaSetDevice(source_device), "select CUDA device");
  check(cudaStreamWaitEvent(as_stream(stream(source_device)), destination_ready.get(), 0),
        "copy between CUDA devices");
  check(cudaMemcpyPeerAsync(destination, destination_device, source, source_device, bytes,
                            as_stream(stream(source_device))),
        "copy between CUDA devices");
  Event copied;
  check(cudaEventRecord(copied.get(), as_stream(stream(source_device))),
        "copy between CUDA devices");
  check(cudaSetDevice(destination_device), "select CUDA device");
  check(cudaStreamWaitEvent(as_stream(stream(destination_device)), copied.get(), 0),
        "copy between CUDA devices");
}

void CudaBackend::copy_through_host(void* destination, int destination_device, const void* source,
                                    int source_device, std::size_t bytes) {
  std::lock_guard lock(staging_mutex_);
  if (staging_ == nullptr) {
    check(cudaMallocHost(&staging_, kStagingBytes), "allocate pinned host memory");
  }
  // One piece at a time through one buffer: simple and correct; overlapping
  // the two directions with two buffers is left for when it shows in profiles.
  for (std::size_t offset = 0; offset < bytes; offset += kStagingBytes) {
    const std::size_t piece = std::min(kStagingBytes, bytes - offset);
    check(cudaSetDevice(source_device), "select CUDA device");
    check(cudaMemcpyAsync(staging_, static_cast<const char*>(source) + offset, piece,
                          cudaMemcpyDeviceToHost, as_stream(stream(source_device))),
          "copy between CUDA devices through host memory");
    check(cudaStreamSynchronize(as_stream(stream(source_device))),
          "copy between CUDA devices through host memory");
    check(cudaSetDevice(destination_device), "select CUDA device");
    check(cudaMemcpyAsync(static_cast<char*>(destination) + offset, staging_, piece,
                          cudaMemcpyHostToDevice, as_stream(stream(destination_device))),
          "copy between CUDA devices through host memory");
    check(cudaStreamSynchronize(as_stream(stream(destination_device))),
          "copy between CUDA devices through host memory");
  }
}

void CudaBackend::fill_zero(int device, void* data, std::size_t bytes) {
  if (bytes == 0) return;
  if (device < 0) {
    std::memset(data, 0, bytes);
    return;
  }
  activate(device);
  check(cudaMemsetAsync(data, 0, bytes, as_stream(stream(device))), "fill CUDA memory with zeros");
}

void CudaBackend::synchronize(int device) {
  activate(device);
  check(cudaStreamSynchronize(as_stream(stream(device))), "synchronize CUDA device");
}

}  // namespace quire::kernels::cuda
