// CudaBackend's ops: argument checks on the host, then the kernels of
// elementwise_ops.cu on the device's stream; linear() through LinearRunner
// (cuda_linear.h). The paged K/V ops (write_kv, paged_attention and the page
// copies) are in cuda_backend_kv.cpp.

#include <cuda_runtime_api.h>

#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <vector>

#include "capture_guard.h"
#include "cuda_backend.h"
#include "cuda_linear.h"
#include "elementwise_ops.h"
#include "quire/kernels/cuda/cuda_error.h"

namespace quire::kernels::cuda {
namespace {

void check_dense(DType type) {
  if (type != DType::F32 && type != DType::F16 && type != DType::BF16) {
    throw std::invalid_argument("dense weights must be F16, BF16 or F32, not " +
                                std::string(dtype_name(type)));
  }
}

}  // namespace

void CudaBackend::embedding(int device, const DenseWeight& table, std::int64_t vocab,
                            std::int64_t hidden, const std::int32_t* tokens, std::int64_t count,
                            float* out) {
  activate(device);
  check_dense(table.dtype);
  if (count <= 0) return;
  // Token ids are checked on the host, as the CPU backend checks them, so a
  // bad id throws std::invalid_argument before any row is read. It costs one
  // small copy and a wait per forward pass, where the ids are usually fresh
  // from the host anyway. A graph being recorded cannot wait: there the
  // kernel reports a bad id, and the wait after the replay throws.
  if (!capturing_on_this_thread()) {
    std::vector<std::int32_t> ids(static_cast<std::size_t>(count));
    copy(ids.data(), -1, tokens, device, ids.size() * sizeof(std::int32_t));
    for (const std::int32_t id : ids) {
      if (id < 0 || id >= vocab) {
        throw std::invalid_argument("token id " + std::to_string(id) +
                                    " lies outside the model's vocabulary of " +
                                    std::to_string(vocab));
      }
    }
  }
  launch_embedding(table.data, table.dtype, vocab, hidden, tokens, count, out,
                   device_errors_ + std::size_t(gpu(device)) * kDeviceErrorWords, stream(device));
}

void CudaBackend::rms_norm(int device, const float* x, const DenseWeight& weight, float eps,
                           std::int64_t rows, std::int64_t cols, float* out) {
  activate(device);
  check_dense(weight.dtype);
  launch_rms_norm(x, weight.data, weight.dtype, eps, rows, cols, out, stream(device));
}

void CudaBackend::rope(int device, float* x, std::int64_t tokens, int heads, int head_dim,
                       const std::int32_t* positions, const RopeParams& rope) {
  activate(device);
  if (rope.rotary_dim <= 0 || rope.rotary_dim > head_dim || rope.rotary_dim % 2 != 0) {
    throw std::invalid_argument("rotary dimension " + std::to_string(rope.rotary_dim) +
                                " does not fit head_dim " + std::to_string(head_dim));
  }
  launch_rope(x, tokens, heads, head_dim, positions, rope.inv_freq, rope.rotary_dim,
              rope.attention_factor, stream(device));
}

void CudaBackend::silu_mul(int device, const float* gate, const float* up, std::int64_t count,
                           float* out) {
  activate(device);
  launch_silu_mul(gate, up, count, out, stream(device));
}

void CudaBackend::add(int device, float* x, const float* y, std::int64_t count) {
  activate(device);
  launch_add(x, y, count, stream(device));
}

void CudaBackend::linear(int device, const float* x, std::int64_t rows, const LinearWeight& weight,
                         float* out) {
  activate(device);
  std::lock_guard lock(linear_mutex_);
  std::unique_ptr<LinearRunner>& runner = linear_[static_cast<std::size_t>(device)];
  if (!runner) {
    runner = std::make_unique<LinearRunner>(*this, device, gpu(device), stream(device),
                                            workspace_generation_);
  }
  runner->run(x, rows, weight, out);
}

}  // namespace quire::kernels::cuda
