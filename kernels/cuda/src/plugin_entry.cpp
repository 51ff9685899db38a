// The one symbol libquire_cuda.so exports: quire_cuda_create_backend, which the
// application finds with dlsym (see quire/kernels/cuda_loader.h).

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstring>
#include <exception>
#include <string>

#include "cuda_backend.h"
#include "quire/kernels/backend_plugin.h"
#include "quire/kernels/cuda/cuda_error.h"
#include "quire/kernels/cuda_devices.h"

namespace {

void write_reason(const std::string& reason, char* why_not, std::size_t capacity) {
  if (why_not == nullptr || capacity == 0) return;
  const std::size_t length = std::min(reason.size(), capacity - 1);
  std::memcpy(why_not, reason.data(), length);
  why_not[length] = '\0';
}

std::string runtime_version() {
  return std::to_string(CUDART_VERSION / 1000) + "." + std::to_string(CUDART_VERSION % 1000 / 10);
}

// Why the CUDA runtime cannot be used at all, in words a user can act on, or
// an empty string when it can.
std::string runtime_problem() {
  int count = 0;
  const cudaError_t status = cudaGetDeviceCount(&count);
  const std::string detail = status == cudaSuccess ? std::string()
                                                   : std::string(" (") + cudaGetErrorName(status) +
                                                         ": " + cudaGetErrorString(status) + ")";
  // The error is sticky for this call only; clear it so it cannot reappear.
  if (status != cudaSuccess) cudaGetLastError();
  switch (status) {
    case cudaSuccess:
      return count > 0 ? std::string() : "no NVIDIA GPU was found";
    case cudaErrorInsufficientDriver:
      return "no NVIDIA driver was found, or it is older than CUDA " + runtime_version() +
             " needs" + detail;
    case cudaErrorNoDevice:
      return "no NVIDIA GPU was found" + detail;
    default:
      return "the CUDA runtime cannot list the GPUs" + detail;
  }
}

}  // namespace

extern "C" __attribute__((visibility("default"))) quire::kernels::Backend*
quire_cuda_create_backend(int abi, char* why_not, std::size_t capacity,
                          const char* devices) noexcept {
  try {
    if (abi != quire::kernels::kBackendPluginAbi) {
      write_reason("the CUDA backend library was built for another version of Quire (interface " +
                       std::to_string(quire::kernels::kBackendPluginAbi) + ", asked for " +
                       std::to_string(abi) + ")",
                   why_not, capacity);
      return nullptr;
    }
    // The list is read before the runtime is asked anything, so that a
    // mistake in it is reported as such on machines without a GPU too.
    const quire::kernels::CudaDeviceSpec spec =
        quire::kernels::parse_cuda_devices(devices != nullptr ? devices : "cuda");
    if (const std::string problem = runtime_problem(); !problem.empty()) {
      write_reason(problem, why_not, capacity);
      return nullptr;
    }
    return new quire::kernels::cuda::CudaBackend(spec);
  } catch (const std::exception& error) {
    write_reason(error.what(), why_not, capacity);
  } catch (...) {
    write_reason("the CUDA backend failed to start for an unknown reason", why_not, capacity);
  }
  return nullptr;
}

// The loader calls the entry through this type; fail the build if they drift.
[[maybe_unused]] constexpr quire::kernels::CreateBackendFunction kEntryHasTheLoadersType =
    &quire_cuda_create_backend;
