#include "cublas_library.h"

#include <cublas_api.h>  // types only: the library itself is opened with dlopen
#include <cuda_runtime_api.h>
#include <dlfcn.h>

#include "quire/kernels/cuda/cuda_error.h"

namespace quire::kernels::cuda {

struct Cublas::Api {
  cublasStatus_t (*create)(cublasHandle_t*) = nullptr;
  cublasStatus_t (*destroy)(cublasHandle_t) = nullptr;
  cublasStatus_t (*set_stream)(cublasHandle_t, cudaStream_t) = nullptr;
  cublasStatus_t (*set_workspace)(cublasHandle_t, void*, size_t) = nullptr;
  cublasStatus_t (*gemm_ex)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int, int,
                            const void*, const void*, cudaDataType, int, const void*, cudaDataType,
                            int, const void*, void*, cudaDataType, int, cublasComputeType_t,
                            cublasGemmAlgo_t) = nullptr;
  const char* (*status_name)(cublasStatus_t) = nullptr;
  const char* (*status_string)(cublasStatus_t) = nullptr;
};

namespace {

struct Library {
  Cublas::Api api;
  bool loaded = false;
  std::string why_not;
};

template <typename Function>
bool find(void* library, const char* name, Function& function) {
  void* symbol = dlsym(library, name);
  // POSIX guarantees that a dlsym result converts to a function pointer.
  function = reinterpret_cast<Function>(symbol);
  return symbol != nullptr;
}

// Opened once per process and never closed: handles may live until exit.
// The major version is the one this library was compiled against, whose ABI
// cuBLAS keeps within a major release.
Library open_library() {
  Library result;
  const std::string name = "libcublas.so." + std::to_string(CUBLAS_VER_MAJOR);
  void* library = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (library == nullptr) {
    const char* message = dlerror();
    result.why_not = message != nullptr ? message : name + " could not be opened";
    return result;
  }
  Cublas::Api& api = result.api;
  if (!find(library, "cublasCreate_v2", api.create) ||
      !find(library, "cublasDestroy_v2", api.destroy) ||
      !find(library, "cublasSetStream_v2", api.set_stream) ||
      !find(library, "cublasSetWorkspace_v2", api.set_workspace) ||
      !find(library, "cublasGemmEx", api.gemm_ex) ||
      !find(library, "cublasGetStatusName", api.status_name) ||
      !find(library, "cublasGetStatusString", api.status_string)) {
    result.why_not = name + " lacks a function this backend uses";
    dlclose(library);
    return result;
  }
  result.loaded = true;
  return result;
}

const Library& library() {
  static const Library opened = open_library();
  return opened;
}

void check_status(const Cublas::Api& api, cublasStatus_t status, const char* operation) {
  if (status == CUBLAS_STATUS_SUCCESS) return;
  // CudaError carries CUDA runtime codes; cuBLAS's own status is in the text.
  throw CudaError(
      operation, cudaErrorUnknown,
      std::string("cuBLAS ") + api.status_name(status) + " (" + api.status_string(status) + ")");
}

cudaDataType data_type(DType type) {
  switch (type) {
    case DType::F16:
      return CUDA_R_16F;
    case DType::BF16:
      return CUDA_R_16BF;
    default:
      return CUDA_R_32F;
  }
}

}  // namespace

std::unique_ptr<Cublas> Cublas::create(void* stream, void* workspace, std::size_t workspace_bytes,
                                       std::string& why_not) {
  const Library& opened = library();
  if (!opened.loaded) {
    why_not = opened.why_not;
    return nullptr;
  }
  const Api& api = opened.api;
  cublasHandle_t handle = nullptr;
  check_status(api, api.create(&handle), "start cuBLAS");
  // Setting the stream resets the workspace to cuBLAS's own: the workspace
  // comes second. Without one of ours, a product recorded into a CUDA graph
  // would have cuBLAS allocate during the capture.
  cublasStatus_t status = api.set_stream(handle, static_cast<cudaStream_t>(stream));
  if (status == CUBLAS_STATUS_SUCCESS)
    status = api.set_workspace(handle, workspace, workspace_bytes);
  if (status != CUBLAS_STATUS_SUCCESS) {
    api.destroy(handle);
    check_status(api, status, "start cuBLAS");
  }
  return std::unique_ptr<Cublas>(new Cublas(api, handle));
}

Cublas::~Cublas() {
  api_.destroy(static_cast<cublasHandle_t>(handle_));
}

void Cublas::gemm(bool transpose_a, int m, int n, int k, const void* a, int lda, const void* b,
                  int ldb, DType type, float* c, int ldc) {
  const float alpha = 1.0f;
  const float beta = 0.0f;
  const cudaDataType data = data_type(type);
  // CUBLAS_COMPUTE_32F: FP32 accumulation, and FP32 inputs stay FP32 (no
  // TF32 unless asked for, which this handle never does).
  check_status(
      api_,
      api_.gemm_ex(static_cast<cublasHandle_t>(handle_), transpose_a ? CUBLAS_OP_T : CUBLAS_OP_N,
                   CUBLAS_OP_N, m, n, k, &alpha, a, data, lda, b, data, ldb, &beta, c, CUDA_R_32F,
                   ldc, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT),
      "linear: cuBLAS matrix product");
}

}  // namespace quire::kernels::cuda
