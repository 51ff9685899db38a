#pragma once

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "quire/cache/types.h"
#include "quire/engine/runtime/model_description.h"

namespace quire::engine::selfcheck {

// The self-check model's linear layers: FP16; FP8 as llm-compressor writes
// it, for a backend that runs FP8 weights; EXL3 (4 bits, the MCG
// codebook), for one that runs EXL3 weights.
enum class CheckWeights { fp16, fp8, exl3 };

// The self-check's model: a few layers of random weights in a private
// temporary directory that goes with this object. Each format's CPU products
// sum exact widenings (FP16, E4M3 codes, EXL3's FP16 codebook values) in
// FP32, where the CPU's EXL2 and GPTQ decode products take 8-bit inputs where
// the processor allows, which would blur the comparison.
class CheckModel {
 public:
  explicit CheckModel(CheckWeights weights = CheckWeights::fp16);
  ~CheckModel();
  CheckModel(const CheckModel&) = delete;
  CheckModel& operator=(const CheckModel&) = delete;

  std::shared_ptr<const ModelDescription> description() const { return description_; }
  // The prompt: random ids drawn with a fixed seed, the same on every machine.
  const std::vector<cache::TokenId>& prompt() const { return prompt_; }
  // "llama, 3 layers, hidden 128, ..." for the details.
  const std::string& shape() const { return shape_; }

 private:
  std::filesystem::path directory_;
  std::shared_ptr<const ModelDescription> description_;
  std::vector<cache::TokenId> prompt_;
  std::string shape_;
};

}  // namespace quire::engine::selfcheck
