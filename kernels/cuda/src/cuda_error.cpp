#include "quire/kernels/cuda/cuda_error.h"

#include <cuda_runtime_api.h>

namespace quire::kernels::cuda {

CudaError::CudaError(const std::string& operation, int code, const std::string& message)
    : std::runtime_error(operation + ": " + message), code_(code) {}

void check(int status, const char* operation) {
  if (status == cudaSuccess) return;
  const auto error = static_cast<cudaError_t>(status);
  throw CudaError(operation, status,
                  std::string(cudaGetErrorName(error)) + " (" + cudaGetErrorString(error) + ")");
}

}  // namespace quire::kernels::cuda
