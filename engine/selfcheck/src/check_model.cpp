#include "check_model.h"

#include <stdlib.h>

#include <cerrno>
#include <random>
#include <system_error>

#include "quire/engine/modelgen/random_model.h"

namespace quire::engine::selfcheck {
namespace {

namespace fs = std::filesystem;

constexpr int kPromptTokens = 40;

modelgen::RandomModelSpec check_spec(CheckWeights weights) {
  modelgen::RandomModelSpec spec;
  if (weights == CheckWeights::fp8) spec.format.kind = modelgen::WeightFormat::FP8;
  if (weights == CheckWeights::exl3) {
    spec.format.kind = modelgen::WeightFormat::EXL3;
    spec.format.exl3_bits = 4.0;
    // MCG rather than exllamav3's default MUL1: the CPU's decode steps take
    // MUL1's inputs in 8 bits (as llama.cpp rounds its activations), which
    // moves its logits by up to 1-2% of their range, a tolerance a GPU's
    // exact products could not be held to. MCG's decode rows on the CPU
    // differ from the exact values by FP16 rounding alone, and the GPU
    // kernels decode both codebooks through the same tiles.
    spec.format.exl3_codebook = kernels::Exl3Codebook::mcg;
  }
  spec.layers = 3;
  spec.hidden = 128;
  spec.heads = 4;
  spec.kv_heads = 2;  // grouped-query attention, as most models have
  spec.intermediate = 256;
  spec.vocab = 384;
  spec.seed = 53;
  return spec;
}

// A directory only this process uses: two programs checking at once must not
// write into each other's model.
fs::path private_directory() {
  std::string pattern = (fs::temp_directory_path() / "quire-self-check-XXXXXX").string();
  if (mkdtemp(pattern.data()) == nullptr) {
    throw std::system_error(errno, std::generic_category(),
                            "cannot create a temporary directory for the self-check's model");
  }
  return fs::path(pattern);
}

std::string weights_text(const modelgen::RandomModelSpec& spec) {
  switch (spec.format.kind) {
    case modelgen::WeightFormat::FP8:
      return "FP8 weights (a scale per row)";
    case modelgen::WeightFormat::EXL3:
      return "EXL3 weights (4 bits, MCG codebook)";
    default:
      return "FP16 weights";
  }
}

}  // namespace

CheckModel::CheckModel(CheckWeights weights) : directory_(private_directory()) {
  const modelgen::RandomModelSpec spec = check_spec(weights);
  try {
    modelgen::write_random_model(spec, directory_ / "model");
    description_ =
        std::make_shared<const ModelDescription>(ModelDescription::open(directory_ / "model"));
  } catch (...) {
    std::error_code ignored;
    fs::remove_all(directory_, ignored);
    throw;
  }
  std::mt19937 random(spec.seed);
  for (int i = 0; i < kPromptTokens; ++i) {
    // Past the special ids 0 to 2.
    prompt_.push_back(static_cast<cache::TokenId>(3 + random() % (spec.vocab - 3)));
  }
  shape_ = spec.architecture + ", " + std::to_string(spec.layers) + " layers, hidden " +
           std::to_string(spec.hidden) + ", " + std::to_string(spec.heads) + " heads (" +
           std::to_string(spec.kv_heads) + " for keys and values), MLP " +
           std::to_string(spec.intermediate) + ", vocabulary " + std::to_string(spec.vocab) + ", " +
           weights_text(spec) + ", seed " + std::to_string(spec.seed);
}

CheckModel::~CheckModel() {
  // The weights are in device memory by now; the files are not needed.
  std::error_code ignored;
  fs::remove_all(directory_, ignored);
}

}  // namespace quire::engine::selfcheck
