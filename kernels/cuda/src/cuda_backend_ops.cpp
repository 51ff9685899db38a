// CudaBackend's ops: argument checks on the host, then the kernels of
// elementwise_ops.cu and row_ops.cu on the device's stream; linear() through LinearRunner
// (cuda_linear.h). The paged K/V ops (write_kv, paged_attention and the page
// copies) are in cuda_backend_kv.cpp.

#include <cuda_runtime_api.h>

#include <cmath>
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
#include "row_ops.h"

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
  check_rope(rope, head_dim);
  const RopeSections sections{rope.mrope_section[0], rope.mrope_section[1], rope.mrope_section[2],
                              rope.mrope_interleaved};
  launch_rope(x, tokens, heads, head_dim, positions, rope.inv_freq, rope.rotary_dim,
              rope.attention_factor, sections, stream(device));
}

void CudaBackend::gated_activation(int device, GatedActivation activation, const float* gate,
                                   const float* up, std::int64_t count, float* out) {
  activate(device);
  GateActivation kind = GateActivation::Silu;
  switch (activation) {
    case GatedActivation::Silu:
      kind = GateActivation::Silu;
      break;
    case GatedActivation::GeluTanh:
      kind = GateActivation::GeluTanh;
      break;
    default:
      throw std::invalid_argument("unknown gated activation " +
                                  std::to_string(static_cast<int>(activation)));
  }
  launch_gated_activation(kind, gate, up, count, out, stream(device));
}

void CudaBackend::add(int device, float* x, const float* y, std::int64_t count) {
  activate(device);
  launch_add(x, y, count, stream(device));
}

void CudaBackend::soft_cap(int device, float* x, std::int64_t count, float cap) {
  activate(device);
  if (!(cap > 0.0f && std::isfinite(cap))) {
    throw std::invalid_argument("a soft cap must be positive, not " + std::to_string(cap));
  }
  launch_soft_cap(x, count, cap, stream(device));
}

void CudaBackend::scale(int device, float* x, std::int64_t count, float factor) {
  activate(device);
  launch_scale(x, count, factor, stream(device));
}

void CudaBackend::copy_columns(int device, const float* x, std::int64_t rows, std::int64_t width,
                               std::int64_t first, std::int64_t cols, float* out) {
  activate(device);
  if (first < 0 || cols < 0 || first + cols > width) {
    throw std::invalid_argument("columns [" + std::to_string(first) + ", " +
                                std::to_string(first + cols) + ") lie outside rows " +
                                std::to_string(width) + " wide");
  }
  launch_copy_columns(x, rows, width, first, cols, out, stream(device));
}

void CudaBackend::gather_rows(int device, const float* x, std::int64_t cols,
                              const std::int32_t* rows, std::int64_t count, float* out) {
  activate(device);
  launch_gather_rows(x, cols, rows, count, out, stream(device));
}

void CudaBackend::scatter_add_rows(int device, float* x, std::int64_t cols, const float* y,
                                   const std::int32_t* rows, const float* weights,
                                   std::int64_t count) {
  activate(device);
  launch_scatter_add_rows(x, cols, y, rows, weights, count, stream(device));
}

// The products take FP16 inputs whoever's rows they are.
void CudaBackend::linear(int device, const float* x, std::int64_t rows, const LinearWeight& weight,
                         float* out, ProductRows /*kind*/) {
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
