#pragma once

#include <cstddef>
#include <memory>
#include <string>

#include "quire/kernels/dtype.h"

// cuBLAS, opened at run time. The toolkit ships it only as a shared library,
// and linking that would make libquire_cuda.so fail to load wherever it is
// not installed, when the backend otherwise needs only the NVIDIA driver. So
// the library is opened with dlopen on first use; where it is missing, the
// linear products use the fused kernels for every row count instead.

namespace quire::kernels::cuda {

class Cublas {
 public:
  // A handle bound to the current device that queues its work on `stream` (a
  // cudaStream_t), with `workspace` (device memory that outlives the handle)
  // as its workspace. Returns null when libcublas cannot be opened, with the
  // reason in `why_not`; throws CudaError when it opens but cannot start.
  static std::unique_ptr<Cublas> create(void* stream, void* workspace, std::size_t workspace_bytes,
                                        std::string& why_not);
  ~Cublas();
  Cublas(const Cublas&) = delete;
  Cublas& operator=(const Cublas&) = delete;

  // C = op(A) B in column-major terms, FP32 out and FP32 accumulation: A is
  // m x k (op(A) = A^T when transpose_a, stored k x m), B is k x n, C is m x n
  // with leading dimension ldc. A and B are F16, BF16 or F32, of one type.
  void gemm(bool transpose_a, int m, int n, int k, const void* a, int lda, const void* b, int ldb,
            DType type, float* c, int ldc);

  struct Api;  // the library's functions (cublas_library.cpp)

 private:
  Cublas(const Api& api, void* handle) : api_(api), handle_(handle) {}
  const Api& api_;
  void* handle_;  // cublasHandle_t
};

}  // namespace quire::kernels::cuda
