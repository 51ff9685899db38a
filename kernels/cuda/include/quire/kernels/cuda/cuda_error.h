#pragma once

#include <stdexcept>
#include <string>

namespace quire::kernels::cuda {

// A failed CUDA call, naming the operation and CUDA's own message. Quire never
// aborts on a CUDA error: it surfaces as this exception at the engine boundary.
class CudaError : public std::runtime_error {
 public:
  CudaError(const std::string& operation, int code, const std::string& message);
  int code() const { return code_; }

 private:
  int code_;
};

// Throws CudaError when `status` (a cudaError_t) is not cudaSuccess.
void check(int status, const char* operation);

}  // namespace quire::kernels::cuda
