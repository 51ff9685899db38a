#pragma once

#include <cstdint>
#include <filesystem>
#include <vector>

#include "quire/engine/modelgen/random_model_spec.h"

namespace quire::engine::modelgen {

// Quire's own random models, used by the engine's tests and by
// `quire-cli make-model`. A directory holds what a downloaded model has:
// config.json, generation_config.json, tokenizer_config.json, tokenizer.model
// and model.safetensors (or shards and model.safetensors.index.json), with
// tensors named and laid out as Hugging Face and exllamav2 name them.
//
// Values keep activations of order one: embeddings N(0, 1), linear weights
// N(0, 1 / sqrt(in_features)) (standard deviation), norm weights
// 1 + 0.1 N(0, 1), biases 0.1 N(0, 1). Every tensor is drawn from its own
// stream seeded by the spec's seed and the tensor's name, so models of the
// same seed in different formats quantize the same underlying weights, and
// the same spec gives byte-identical files on every machine.

struct WrittenModel {
  std::vector<std::filesystem::path> files;  // sorted by name
  std::uint64_t total_bytes = 0;
  int tensors = 0;  // in the safetensors files
};

// Validates the spec (see validate()) and writes the model into `out_dir`,
// which must not exist or be an empty directory (std::invalid_argument naming
// "out_dir" otherwise); missing parents are created. The files are written
// into a hidden sibling directory first and moved into place once complete,
// so a failure leaves nothing behind. I/O failures throw std::system_error or
// std::runtime_error.
WrittenModel write_random_model(const RandomModelSpec& spec, const std::filesystem::path& out_dir);

}  // namespace quire::engine::modelgen
