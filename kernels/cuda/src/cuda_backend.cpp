// CUDA devices, their memory, streams, and copies between host and devices.

#include "cuda_backend.h"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "capture_guard.h"
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

// CUDA writes versions as 1000 * major + 10 * minor.
std::string version_text(int version) {
  return std::to_string(version / 1000) + "." + std::to_string(version % 1000 / 10);
}

// The driver's own release ("570.86.15"), which the CUDA version it supports
// does not tell apart: Linux's NVIDIA kernel module writes it as "NVRM
// version: NVIDIA UNIX x86_64 Kernel Module  570.86.15  <date>". Empty where
// the file is missing or reads otherwise.
std::string driver_release() {
  std::ifstream file("/proc/driver/nvidia/version");
  std::string line;
  if (!std::getline(file, line)) return {};
  const std::string marker = "Kernel Module";
  const std::size_t at = line.find(marker);
  if (at == std::string::npos) return {};
  std::istringstream rest(line.substr(at + marker.size()));
  std::string release;
  rest >> release;
  return release;
}

}  // namespace

CudaBackend::CudaBackend(const CudaDeviceSpec& devices) {
  int count = 0;
  check(cudaGetDeviceCount(&count), "list CUDA devices");
  const std::vector<CudaLogicalDevice> logical = resolve_cuda_devices(devices, count);
  gpus_.resize(static_cast<std::size_t>(count));
  for (const CudaLogicalDevice& device : logical)
    ++gpus_[static_cast<std::size_t>(device.gpu)].logical_devices;
  // A constructor that throws runs no destructor: release what was made so far.
  try {
    prepare_gpus();
    // Portable and mapped: every GPU's kernels write it through the same
    // address (unified addressing), and the host reads it after a wait.
    const std::size_t error_bytes = gpus_.size() * kDeviceErrorWords * sizeof(int);
    check(cudaHostAlloc(reinterpret_cast<void**>(&device_errors_), error_bytes,
                        cudaHostAllocPortable | cudaHostAllocMapped),
          "allocate pinned host memory");
    std::memset(device_errors_, 0, error_bytes);
  } catch (...) {
    destroy_streams();
    throw;
  }
  std::vector<int> shares(gpus_.size(), 0);
  for (const CudaLogicalDevice& device : logical) {
    const Gpu& card = gpus_[static_cast<std::size_t>(device.gpu)];
    std::string name = card.name;
    if (card.logical_devices > 1) {
      const int share = ++shares[static_cast<std::size_t>(device.gpu)];
      name += " (GPU " + std::to_string(device.gpu) + ", share " + std::to_string(share) + " of " +
              std::to_string(card.logical_devices) + ")";
    }
    devices_.push_back(Device{device.gpu, device.budget_bytes, std::move(name)});
  }
  used_.assign(devices_.size(), 0);
  linear_.resize(devices_.size());
  attention_scratch_.resize(devices_.size());
}

void CudaBackend::prepare_gpus() {
  const int count = static_cast<int>(gpus_.size());
  // Only the GPUs the list names get a context and a stream: each context
  // takes hundreds of MiB on its GPU, which another program may be using.
  for (int i = 0; i < count; ++i) {
    Gpu& gpu = gpus_[static_cast<std::size_t>(i)];
    if (gpu.logical_devices == 0) continue;
    cudaDeviceProp properties{};
    check(cudaGetDeviceProperties(&properties, i), "read CUDA device properties");
    gpu.name = properties.name;
    gpu.architecture = "sm_" + std::to_string(properties.major) + std::to_string(properties.minor);
    gpu.multiprocessors = std::max(properties.multiProcessorCount, 1);
    check(cudaSetDevice(i), "select CUDA device");
    // A GPU older than the architectures this library was compiled for
    // would fail at its first kernel; say so now, with the reason.
    const int image = kernel_image_status();
    if (image == cudaErrorNoKernelImageForDevice || image == cudaErrorInvalidDeviceFunction) {
      throw CudaError("CUDA backend", image,
                      "GPU " + std::to_string(i) + " (" + gpu.name + ", compute capability " +
                          compute_capability(properties) +
                          ") cannot run this build's kernels, compiled for CUDA architectures " +
                          QUIRE_CUDA_ARCHITECTURES);
    }
    check(image, "load the CUDA kernels");
    cudaStream_t stream = nullptr;
    // Non-blocking: Quire's streams never wait for the legacy default stream.
    check(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "create a CUDA stream");
    gpu.stream = stream;
  }
  peer_.assign(static_cast<std::size_t>(count) * static_cast<std::size_t>(count), 0);
  for (int from = 0; from < count; ++from) {
    for (int to = 0; to < count; ++to) {
      if (from == to || gpus_[static_cast<std::size_t>(from)].logical_devices == 0 ||
          gpus_[static_cast<std::size_t>(to)].logical_devices == 0) {
        continue;
      }
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
}

void CudaBackend::destroy_streams() noexcept {
  for (Gpu& gpu : gpus_) {
    if (gpu.stream != nullptr) cudaStreamDestroy(as_stream(gpu.stream));
    gpu.stream = nullptr;
  }
}

CudaBackend::~CudaBackend() {
  // Their buffers and cuBLAS handles go first, while the streams still exist.
  linear_.clear();
  attention_scratch_.clear();
  destroy_streams();
  if (staging_ != nullptr) cudaFreeHost(staging_);
  if (device_errors_ != nullptr) cudaFreeHost(device_errors_);
}

void CudaBackend::activate(int device) const {
  if (device < 0 || device >= static_cast<int>(devices_.size())) {
    throw std::out_of_range("no CUDA device " + std::to_string(device));
  }
  check(cudaSetDevice(gpu(device)), "select CUDA device");
}

bool CudaBackend::peer_access(int from_gpu, int to_gpu) const {
  return peer_[static_cast<std::size_t>(from_gpu) * gpus_.size() +
               static_cast<std::size_t>(to_gpu)] != 0;
}

std::string CudaBackend::version() const {
  // The runtime this library was linked with and the driver underneath:
  // either changing can change what the kernels compute.
  int runtime = 0;
  int driver = 0;
  check(cudaRuntimeGetVersion(&runtime), "read the CUDA runtime's version");
  check(cudaDriverGetVersion(&driver), "read the NVIDIA driver's CUDA version");
  const std::string release = driver_release();
  return "CUDA runtime " + version_text(runtime) + ", driver " +
         (release.empty() ? "" : release + " ") + "(CUDA " + version_text(driver) +
         "), kernels for CUDA architectures " + QUIRE_CUDA_ARCHITECTURES;
}

std::vector<DeviceInfo> CudaBackend::devices() const {
  std::vector<DeviceInfo> infos;
  for (std::size_t i = 0; i < devices_.size(); ++i) {
    const int index = static_cast<int>(i);
    const Device& device = devices_[i];
    activate(index);
    std::size_t free = 0, total = 0;
    check(cudaMemGetInfo(&free, &total), "read CUDA device memory");
    DeviceInfo info;
    info.index = index;
    info.name = device.name;
    info.architecture = gpus_[static_cast<std::size_t>(device.gpu)].architecture;
    if (device.budget_bytes > 0) {
      // A share is bounded by its budget and by what the GPU really has
      // free (other shares and other programs use the rest).
      std::int64_t used = 0;
      {
        std::lock_guard lock(used_mutex_);
        used = used_[i];
      }
      info.total_bytes = device.budget_bytes;
      info.free_bytes = std::max<std::int64_t>(
          0, std::min(device.budget_bytes - used, static_cast<std::int64_t>(free)));
      // The budget is the user's own limit, as on the CPU backend: what the
      // GPU needs beyond it is for them to leave.
      info.recommended_reserve_bytes = 0;
    } else {
      info.total_bytes = static_cast<std::int64_t>(total);
      info.free_bytes = static_cast<std::int64_t>(free);
      // cuBLAS workspaces, the context's own growth and the desktop's
      // compositor (on the display GPU) all need room that placement must leave.
      info.recommended_reserve_bytes = std::max(512 * kMiB, info.total_bytes / 20);
    }
    infos.push_back(std::move(info));
  }
  return infos;
}

DeviceBuffer CudaBackend::allocate(int device, std::size_t bytes, std::string_view purpose) {
  activate(device);
  refuse_while_capturing("allocate CUDA device memory");
  const std::size_t size = std::max<std::size_t>(bytes, 1);
  const auto requested = static_cast<std::int64_t>(size);
  const auto index = static_cast<std::size_t>(device);
  const std::int64_t budget = devices_[index].budget_bytes;
  // The budget is claimed before cudaMalloc and given back if it fails, so
  // that two threads allocating at once cannot both pass the check.
  if (budget > 0) {
    std::lock_guard lock(used_mutex_);
    if (used_[index] + requested > budget) {
      throw DeviceOutOfMemory(device, requested, budget - used_[index], purpose);
    }
    used_[index] += requested;
  }
  auto give_back = [&] {
    if (budget == 0) return;
    std::lock_guard lock(used_mutex_);
    used_[index] -= requested;
  };
  std::size_t free = 0, total = 0;
  if (const cudaError_t status = cudaMemGetInfo(&free, &total); status != cudaSuccess) {
    give_back();
    check(status, "read CUDA device memory");
  }
  if (size > free) {
    give_back();
    throw DeviceOutOfMemory(device, requested, static_cast<std::int64_t>(free), purpose);
  }
  void* data = nullptr;
  const cudaError_t status = cudaMalloc(&data, size);
  if (status != cudaSuccess) give_back();
  if (status == cudaErrorMemoryAllocation) {
    cudaGetLastError();
    if (cudaMemGetInfo(&free, &total) != cudaSuccess) free = 0;
    // Free memory can exceed the request when it is fragmented (or another
    // process took some meanwhile): the largest piece is what fell short.
    const std::int64_t available = std::min(static_cast<std::int64_t>(free), requested - 1);
    throw DeviceOutOfMemory(device, requested, available, purpose);
  }
  check(status, "allocate CUDA device memory");
  return DeviceBuffer(this, device, data, size);
}

void CudaBackend::release(int device, void* data, std::size_t bytes) noexcept {
  // cudaFree waits for the device's queued work, which may still use `data`.
  if (cudaSetDevice(gpu(device)) == cudaSuccess) cudaFree(data);
  const auto index = static_cast<std::size_t>(device);
  if (devices_[index].budget_bytes > 0) {
    std::lock_guard lock(used_mutex_);
    used_[index] -= static_cast<std::int64_t>(bytes);
  }
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
    refuse_while_capturing(operation);
    check(cudaMemcpyAsync(destination, source, bytes,
                          upload ? cudaMemcpyHostToDevice : cudaMemcpyDeviceToHost,
                          as_stream(stream(device))),
          operation);
    check(cudaStreamSynchronize(as_stream(stream(device))), operation);
    raise_device_errors(device);
    return;
  }
  activate(destination_device);
  activate(source_device);
  // Two logical devices on one GPU share its memory and its stream: a plain
  // copy, ordered after the work that produces the source and before any
  // that reads the destination.
  if (gpu(source_device) == gpu(destination_device)) {
    check(cudaMemcpyAsync(destination, source, bytes, cudaMemcpyDeviceToDevice,
                          as_stream(stream(source_device))),
          "copy within a CUDA device");
    return;
  }
  // Events joining two GPUs' streams, or staging through the host, are not
  // recorded: steps over several GPUs run uncaptured.
  refuse_while_capturing("copy between CUDA devices");
  copy_between_devices(destination, destination_device, source, source_device, bytes);
}

void CudaBackend::copy_between_devices(void* destination, int destination_device,
                                       const void* source, int source_device, std::size_t bytes) {
  const int from = gpu(source_device), to = gpu(destination_device);
  if (!peer_access(from, to) && !peer_access(to, from)) {
    copy_through_host(destination, destination_device, source, source_device, bytes);
    return;
  }
  // The copy runs on the source's stream, after the work that produces the
  // source; it must also wait for queued work that still reads the
  // destination, and the destination's later work must wait for the copy.
  Event destination_ready;
  check(cudaSetDevice(gpu(destination_device)), "select CUDA device");
  check(cudaEventRecord(destination_ready.get(), as_stream(stream(destination_device))),
        "copy between CUDA devices");
  check(cudaSetDevice(gpu(source_device)), "select CUDA device");
  check(cudaStreamWaitEvent(as_stream(stream(source_device)), destination_ready.get(), 0),
        "copy between CUDA devices");
  check(cudaMemcpyPeerAsync(destination, to, source, from, bytes, as_stream(stream(source_device))),
        "copy between CUDA devices");
  Event copied;
  check(cudaEventRecord(copied.get(), as_stream(stream(source_device))),
        "copy between CUDA devices");
  check(cudaSetDevice(gpu(destination_device)), "select CUDA device");
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
    check(cudaSetDevice(gpu(source_device)), "select CUDA device");
    check(cudaMemcpyAsync(staging_, static_cast<const char*>(source) + offset, piece,
                          cudaMemcpyDeviceToHost, as_stream(stream(source_device))),
          "copy between CUDA devices through host memory");
    check(cudaStreamSynchronize(as_stream(stream(source_device))),
          "copy between CUDA devices through host memory");
    check(cudaSetDevice(gpu(destination_device)), "select CUDA device");
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
  refuse_while_capturing("synchronize CUDA device");
  check(cudaStreamSynchronize(as_stream(stream(device))), "synchronize CUDA device");
  raise_device_errors(device);
}

void CudaBackend::release_cached_memory() {
  refuse_while_capturing("free CUDA workspaces");
  {
    std::lock_guard lock(linear_mutex_);
    for (const std::unique_ptr<LinearRunner>& runner : linear_) {
      if (runner) runner->release_scratch();
    }
  }
  std::lock_guard lock(attention_mutex_);
  bool freed = false;
  for (DeviceBuffer& scratch : attention_scratch_) {
    freed = freed || static_cast<bool>(scratch);
    // Freeing waits for the queued work that may still use it.
    scratch.reset();
  }
  // Graphs recorded with the old addresses must not run.
  if (freed) ++workspace_generation_;
}

void CudaBackend::raise_device_errors(int device) {
  volatile int* errors = device_errors_ + std::size_t(gpu(device)) * kDeviceErrorWords;
  if (errors[0] == 0) return;
  const int id = errors[1], vocab = errors[2];
  errors[0] = 0;
  throw std::invalid_argument("token id " + std::to_string(id) +
                              " lies outside the model's vocabulary of " + std::to_string(vocab));
}

}  // namespace quire::kernels::cuda
