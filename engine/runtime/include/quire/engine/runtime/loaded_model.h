#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <stdexcept>
#include <vector>

#include "quire/engine/runtime/model_description.h"
#include "quire/kernels/backend.h"

namespace quire::engine {

struct LoadedExpert {
  kernels::LinearWeight gate, up, down;
};

// A decoder layer's weights. Norms a layer lacks have no data; fused
// projections (Phi-3) leave q, k, v or gate, up without data, and a sparse
// layer's MLP is its router and experts.
struct LoadedLayer {
  int device = 0;
  kernels::DenseWeight attention_norm, attention_output_norm;
  kernels::DenseWeight mlp_norm, mlp_output_norm;
  kernels::DenseWeight q_norm, k_norm;  // ModelConfig::qk_norm only
  kernels::LinearWeight q, k, v, o, gate, up, down;
  std::optional<kernels::LinearWeight> qkv, gate_up;
  std::optional<kernels::LinearWeight> router;
  std::vector<LoadedExpert> experts;
};

// Thrown when a load is cancelled through LoadOptions::cancel.
class LoadCancelled : public std::runtime_error {
 public:
  LoadCancelled() : std::runtime_error("loading was cancelled") {}
};

struct LoadOptions {
  // Polled between tensors; set it to stop a load (LoadCancelled is thrown).
  const std::atomic<bool>* cancel = nullptr;
  // Called after each tensor with bytes done and bytes in total.
  std::function<void(std::int64_t done, std::int64_t total)> progress;
};

// A model's weights on the devices a placement chose, as weight descriptors
// the backend's ops take. Owns the device buffers.
class LoadedModel {
 public:
  // module_devices: one device per ModelDescription::modules() entry.
  static LoadedModel load(const ModelDescription& model, kernels::Backend& backend,
                          std::span<const int> module_devices, const LoadOptions& options = {});

  int embedding_device = 0;
  kernels::DenseWeight embedding;
  std::vector<LoadedLayer> layers;
  int head_device = 0;
  kernels::DenseWeight final_norm;
  kernels::LinearWeight head;

  // Bytes allocated on each device (index = device).
  std::vector<std::int64_t> device_bytes;

 private:
  std::vector<kernels::DeviceBuffer> buffers_;
};

}  // namespace quire::engine
