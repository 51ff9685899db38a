#pragma once

// What quire-cli quantize's EXL2 and EXL3 writers share: which tensors are
// a decoder layer's projections, the order tensors are written in, their
// values, and the directory the model is written into.

#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "quire/engine/io/model_tensors.h"

namespace quire::cli {

// What a quantized model holds, for the line quantize prints.
struct QuantizeSummary {
  int linear_layers = 0;
  bool head_quantized = false;
  double quantized_bits = 0.0;  // over every quantized weight
  double quantized_weights = 0.0;
  std::size_t tensors = 0;
};

// "model.layers.<index>.<rest>" split into its layer index and the rest;
// nothing for any other name.
std::optional<std::pair<long, std::string>> split_layer_name(const std::string& name);

// The linear layers of a decoder layer, which both formats quantize;
// everything else (embeddings, norms, biases) stays FP16, as exllamav2's and
// exllamav3's converters leave it.
bool is_layer_linear(const std::string& name);

// The model's tensor names in the order a reader lists them: embeddings,
// layer by layer (each in the order of its computation), the final norm,
// the head.
std::vector<std::string> ordered_tensor_names(const engine::io::ModelTensors& tensors);

// A tensor's values as floats; throws UsageError unless it is FP16, BF16 or
// F32.
std::vector<float> tensor_floats(const engine::io::ModelTensors& tensors, const std::string& name);
std::vector<std::byte> to_half_bytes(const std::vector<float>& values);

std::string read_file_text(const std::filesystem::path& path);
void write_file_text(const std::filesystem::path& path, const std::string& text);

// The directory OUT names, without a trailing separator ("out/" -> "out");
// a UsageError when it exists and is not an empty directory.
std::filesystem::path checked_target(const std::string& out);

// Writes the model into a fresh hidden sibling of `target` through `write`
// (given the sibling's path), copies every file of `in` that is not a
// weight or config.json (tokenizer files, generation config, a license),
// and renames the sibling into place: a failed run leaves nothing behind.
void write_model_directory(const std::filesystem::path& in, const std::filesystem::path& target,
                           const std::function<void(const std::filesystem::path&)>& write);

}  // namespace quire::cli
