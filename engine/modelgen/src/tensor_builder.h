#pragma once

// Private: the random tensors of a generated model. A family's layout
// (model_layouts.cpp) queues them in the order a reader would list them
// (embeddings, layer by layer, final norm, head); the builder then draws them
// on every core and adds them to a writer in that order.

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "quire/engine/io/safetensors_writer.h"
#include "quire/engine/modelgen/random_model_spec.h"
#include "quire/kernels/dtype.h"

namespace quire::engine::modelgen::detail {

enum class Bias : std::uint8_t { None, Random, Zero };

struct PendingTensor {
  std::string name;
  kernels::DType dtype;
  std::vector<std::int64_t> shape;
  std::vector<std::byte> bytes;
};

class TensorBuilder {
 public:
  explicit TensorBuilder(const RandomModelSpec& spec) : spec_(spec) {}

  const RandomModelSpec& spec() const { return spec_; }

  // Every method takes the tensor's name and, optionally, the label of the
  // random stream its values come from (the name when empty). A weight saved
  // under another prefix (Gemma 3's "language_model.model.") keeps the label
  // of its text-only twin, so both layouts hold the same values.

  // Embeddings, norms, routers and the vision tower: BF16 in a BF16 model,
  // FP16 otherwise (quantized models keep them in FP16, as their converters
  // do). Values N(mean, deviation).
  void dense(const std::string& name, std::vector<std::int64_t> shape, double mean,
             double deviation, const std::string& label = {});
  // `key`.weight of [out, in], or its EXL2 or GPTQ tensors, and its bias.
  void linear(const std::string& key, std::int64_t in, std::int64_t out, Bias bias,
              const std::string& label = {});
  // The untied head: EXL2 at head_bits in every group, as exllamav2's
  // converter quantizes it; EXL3 at its head bits (tied or not); dense
  // otherwise (GPTQ leaves the head in FP16).
  void head(const std::string& key, std::int64_t hidden, std::int64_t vocab,
            const std::string& label = {});

  int queued() const { return static_cast<int>(tasks_.size()); }
  void write_to(io::SafetensorsWriter& writer);

 private:
  using Tensors = std::vector<PendingTensor>;

  void later(std::function<void(Tensors&)> task) { tasks_.push_back(std::move(task)); }

  const RandomModelSpec& spec_;
  std::vector<std::function<void(Tensors&)>> tasks_;
};

// Queues the spec's tensors (model_layouts.cpp). Expects a validated spec.
void plan_model(TensorBuilder& builder);

// Expects a validated spec.
void add_model_tensors(const RandomModelSpec& spec, io::SafetensorsWriter& writer);

// The number of queued weights (a quantized linear counts once), for
// validating the number of shards.
int planned_weights(const RandomModelSpec& spec);

}  // namespace quire::engine::modelgen::detail
