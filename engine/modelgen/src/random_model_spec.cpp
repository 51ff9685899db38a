#include "quire/engine/modelgen/random_model_spec.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <stdexcept>
#include <vector>

#include "family_validation.h"
#include "spec_text.h"
#include "tensor_builder.h"

namespace quire::engine::modelgen {
namespace {

using detail::check_range;
using detail::decimal;
using detail::reject;

constexpr std::array<std::string_view, 10> kArchitectures = {
    "llama",  "mistral", "qwen2",   "qwen3",     "gemma2",
    "gemma3", "phi3",    "mixtral", "qwen3_moe", "qwen2_5_vl"};

std::string known_architectures() {
  std::string names;
  for (const std::string_view name : kArchitectures)
    names += (names.empty() ? "" : ", ") + std::string(name);
  return names;
}

void check_multiple_of_32(std::string_view option, std::int64_t value, const FormatSpec& format) {
  if (value % 32 != 0) {
    reject(option, std::to_string(value) + " must be a multiple of 32 for " + to_string(format) +
                       " (quantized groups span 32 inputs)");
  }
}

bool power_of_two(int value) {
  return value > 0 && (value & (value - 1)) == 0;
}

// compressed-tensors' and AWQ's groups: every projection's inputs split
// into whole groups (compressed-tensors also takes fewer inputs than a group
// as one group; AutoAWQ does not), inputs and outputs multiples of 32 as for
// the other quantized formats.
void validate_group_quantization(const RandomModelSpec& spec, int head_dim) {
  const FormatSpec& format = spec.format;
  check_multiple_of_32("hidden", spec.hidden, format);
  check_multiple_of_32("intermediate", spec.intermediate, format);
  const bool qwen3_moe = spec.architecture == "qwen3_moe";
  if (qwen3_moe) {
    check_multiple_of_32("expert_intermediate", spec.resolved_expert_intermediate(), format);
  }
  const bool awq = format.kind == WeightFormat::AWQ;
  if (awq && qwen3_moe) {
    // AutoAWQ quantizes Qwen3-MoE's router too (it leaves only Mixtral's
    // out), and make-model keeps every router dense.
    reject("format",
           "awq is written for mixtral's experts, not qwen3_moe's (AutoAWQ quantizes "
           "Qwen3-MoE's router, which make-model keeps dense)");
  }
  const int group = spec.resolved_group_size();
  if (group < 0 || (group != 0 && group % 8 != 0)) {
    reject("group_size", std::to_string(group) + " must be a positive multiple of 8, or channel");
  }
  const std::int64_t inputs[] = {spec.hidden, spec.intermediate,
                                 std::int64_t{spec.heads} * head_dim,
                                 qwen3_moe ? spec.resolved_expert_intermediate() : spec.hidden};
  for (const std::int64_t in : inputs) {
    if (group != 0 && in % group != 0 && (awq || in > group)) {
      reject("group_size", std::to_string(group) + " does not divide a layer's " +
                               std::to_string(in) + " inputs into whole groups");
    }
  }
  const bool packed = format.kind == WeightFormat::W4A16 || format.kind == WeightFormat::W8A16;
  if (spec.actorder && (!packed || group == 0)) {
    reject("actorder", "applies to w4a16 and w8a16 in groups of inputs only");
  }
}

void validate_quantization(const RandomModelSpec& spec, int head_dim) {
  const FormatSpec& format = spec.format;
  if (format.kind == WeightFormat::EXL3) {
    // Any shape: the converter pads inputs and outputs to multiples of 128.
    if (!(format.exl3_bits >= 1.0 && format.exl3_bits <= 8.0)) {
      reject("format", "EXL3 bits " + decimal(format.exl3_bits) + " are outside 1.0..8.0");
    }
    if ((spec.exl3_head_bits < 1 || spec.exl3_head_bits > 8) && spec.exl3_head_bits != 16) {
      reject("head_bits", std::to_string(spec.exl3_head_bits) +
                              " is not an EXL3 head width; use 1 to 8, or 16 for an FP16 head");
    }
    return;
  }
  if (format.kind == WeightFormat::W4A16 || format.kind == WeightFormat::W8A16 ||
      format.kind == WeightFormat::INT8 || format.kind == WeightFormat::AWQ) {
    validate_group_quantization(spec, head_dim);
    return;
  }
  if (spec.group_size || spec.actorder) {
    reject(spec.group_size ? "group_size" : "actorder",
           "applies to w4a16, w8a16, int8 and awq only, not " + to_string(format));
  }
  if (format.kind != WeightFormat::EXL2 && format.kind != WeightFormat::GPTQ) return;
  if (format.kind == WeightFormat::GPTQ && format.gptq_bits != 4 && format.gptq_bits != 8) {
    reject("format", "GPTQ of " + std::to_string(format.gptq_bits) + " bits; use gptq or gptq:8");
  }
  check_multiple_of_32("hidden", spec.hidden, format);
  check_multiple_of_32("intermediate", spec.intermediate, format);
  const bool qwen3_moe = spec.architecture == "qwen3_moe";
  if (qwen3_moe) {
    check_multiple_of_32("expert_intermediate", spec.resolved_expert_intermediate(), format);
  }
  if (format.kind == WeightFormat::EXL2) {
    if (!(format.exl2_bits >= 2.0 && format.exl2_bits <= 8.0)) {
      reject("format", "EXL2 bits " + decimal(format.exl2_bits) + " are outside 2.0..8.0");
    }
    constexpr std::array<int, 6> kWidths = {2, 3, 4, 5, 6, 8};
    bool legal = false;
    for (const int width : kWidths)
      legal = legal || width == spec.exl2_head_bits;
    if (!legal) {
      reject("head_bits",
             std::to_string(spec.exl2_head_bits) + " is not an EXL2 width; use 2, 3, 4, 5, 6 or 8");
    }
    return;
  }
  // GPTQ: groups of a power of two, no larger than the narrowest layer input
  // (a larger one would not be the group size the tensors imply).
  const std::int64_t narrowest =
      std::min({std::int64_t{spec.hidden}, std::int64_t{spec.intermediate},
                std::int64_t{spec.heads} * head_dim,
                std::int64_t{qwen3_moe ? spec.resolved_expert_intermediate() : spec.hidden}});
  if (!power_of_two(spec.gptq_group_size) || spec.gptq_group_size < 8 ||
      spec.gptq_group_size > narrowest) {
    reject("gptq_group_size", std::to_string(spec.gptq_group_size) +
                                  " must be a power of two from 8 to " + std::to_string(narrowest) +
                                  " (the narrowest layer input)");
  }
}

void validate_rope(const RandomModelSpec& spec) {
  if (!(spec.rms_norm_eps > 0.0 && spec.rms_norm_eps < 1.0)) {
    reject("rms_norm_eps", decimal(spec.rms_norm_eps) + " must lie between 0 and 1");
  }
  if (!(std::isfinite(spec.rope_theta) && spec.rope_theta > 1.0 && spec.rope_theta <= 1e9)) {
    reject("rope_theta", decimal(spec.rope_theta) + " must be above 1 and at most 1e9");
  }
  const RopeScalingSpec& scaling = spec.rope_scaling;
  if (scaling.type != RopeScalingSpec::Type::None &&
      !(std::isfinite(scaling.factor) && scaling.factor >= 1.0 && scaling.factor <= 1024.0)) {
    reject("rope_scaling", "factor " + decimal(scaling.factor) + " is outside 1..1024");
  }
  check_range("max_position_embeddings", spec.max_position_embeddings, 1, std::int64_t{1} << 24);
  if (scaling.type == RopeScalingSpec::Type::Llama3) {
    const std::int64_t original = scaling.original_max_position_embeddings != 0
                                      ? scaling.original_max_position_embeddings
                                      : kLlama3OriginalContext;
    if (spec.max_position_embeddings < original) {
      reject("max_position_embeddings", std::to_string(spec.max_position_embeddings) +
                                            " is below llama3 scaling's original context of " +
                                            std::to_string(original));
    }
    if (!(scaling.low_freq_factor > 0.0 && scaling.high_freq_factor > scaling.low_freq_factor)) {
      reject("rope_scaling", "llama3's high frequency factor must exceed its low one (> 0)");
    }
  }
  if (scaling.original_max_position_embeddings < 0) {
    reject("rope_scaling", "the original context must be positive");
  }
}

void validate_vocab(const RandomModelSpec& spec) {
  if (spec.tokenizer_from) {
    // 0: the copied tokenizer's size, resolved when the files are written.
    if (spec.vocab != 0) check_range("vocab", spec.vocab, 1, kMaxCopiedVocab);
    if (spec.tokenizer_vocab != 0) {
      reject("tokenizer_vocab", "a copied tokenizer (--tokenizer-from) has its own size");
    }
    return;
  }
  if (spec.vocab < kMinVocab || spec.vocab > kMaxVocab) {
    reject("vocab", std::to_string(spec.vocab) + " is outside " + std::to_string(kMinVocab) + ".." +
                        std::to_string(kMaxVocab) +
                        " (the tokenizer holds 256 byte pieces, <unk>, <s>, </s> and the "
                        "alphabet besides merged pieces; its built-in training text yields "
                        "no more than the maximum)");
  }
  if (spec.tokenizer_vocab != 0) {
    check_range("tokenizer_vocab", spec.tokenizer_vocab, kMinVocab, spec.vocab);
  }
  const int tokens = spec.resolved_tokenizer_vocab();
  if (spec.bos_id) check_range("bos", *spec.bos_id, 0, tokens - 1);
  for (const int id : spec.eos_ids)
    check_range("eos", id, 0, tokens - 1);
}

}  // namespace

int RandomModelSpec::rotary_dim() const {
  return static_cast<int>(resolved_head_dim() * partial_rotary_factor);
}

std::span<const std::string_view> architecture_names() {
  return kArchitectures;
}

RandomModelSpec default_spec(std::string_view architecture) {
  if (std::find(kArchitectures.begin(), kArchitectures.end(), architecture) ==
      kArchitectures.end()) {
    reject("arch", "\"" + std::string(architecture) + "\" is not one of " + known_architectures());
  }
  RandomModelSpec spec;
  spec.architecture = architecture;
  if (architecture == "gemma2") {
    // google/gemma-2-9b-it
    spec.rms_norm_eps = 1e-6;
    spec.softcap = {50.0, 30.0};
    spec.sliding_window = 4096;
  } else if (architecture == "gemma3") {
    // google/gemma-3-1b-it
    spec.rms_norm_eps = 1e-6;
    spec.rope_theta = 1e6;
    spec.rope_local_theta = 10000.0;
    spec.sliding_window = 512;
  } else if (architecture == "phi3") {
    // microsoft/Phi-3.5-mini-instruct names a window wider than its context.
    spec.sliding_window = 262144;
  } else if (architecture == "mixtral") {
    spec.rope_theta = 1e6;
  } else if (architecture == "qwen3_moe") {
    spec.rope_theta = 1e6;
    spec.rms_norm_eps = 1e-6;
  } else if (architecture == "qwen2_5_vl") {
    // Qwen/Qwen2.5-VL-7B-Instruct: always with its vision tower, tensors as
    // published (the language model under "model.", the tower under "visual.").
    spec.rope_theta = 1e6;
    spec.rms_norm_eps = 1e-6;
    spec.tie_embeddings = false;
    spec.multimodal = true;
    spec.text_prefix = "model.";
    spec.vision.heads = 4;
    spec.vision.intermediate = 96;
    spec.vision.layers = 2;
    spec.vision.fullatt_blocks = {1};
  }
  return spec;
}

void validate(const RandomModelSpec& spec) {
  if (std::find(kArchitectures.begin(), kArchitectures.end(), spec.architecture) ==
      kArchitectures.end()) {
    reject("arch", "\"" + spec.architecture + "\" is not one of " + known_architectures());
  }
  check_range("layers", spec.layers, 1, 64);
  check_range("hidden", spec.hidden, 32, 8192);
  check_range("heads", spec.heads, 1, 128);
  check_range("kv_heads", spec.kv_heads, 1, spec.heads);
  if (spec.heads % spec.kv_heads != 0) {
    reject("kv_heads", std::to_string(spec.kv_heads) + " does not divide heads (" +
                           std::to_string(spec.heads) + ")");
  }
  check_range("head_dim", spec.head_dim, 0, 256);
  if (spec.head_dim == 0 && spec.hidden % spec.heads != 0) {
    reject("head_dim", "hidden (" + std::to_string(spec.hidden) + ") is not a multiple of heads (" +
                           std::to_string(spec.heads) + "); give head_dim explicitly");
  }
  const int head_dim = spec.resolved_head_dim();
  // Every cache format quantizes keys and values in groups of 32 channels.
  if (head_dim < 32 || head_dim > 256 || head_dim % 32 != 0) {
    reject("head_dim", std::to_string(head_dim) + (spec.head_dim == 0 ? " (hidden / heads)" : "") +
                           " must be a multiple of 32 from 32 to 256 so that every cache "
                           "format can store it");
  }
  check_range("intermediate", spec.intermediate, 32, 32768);
  validate_vocab(spec);
  if (spec.sliding_window) {
    if (spec.architecture == "llama") {
      reject("sliding_window", "llama has no sliding window; use mistral or qwen2");
    }
    check_range("sliding_window", *spec.sliding_window, 1, std::int64_t{1} << 24);
  }
  validate_rope(spec);
  detail::validate_family(spec);
  validate_quantization(spec, head_dim);
  // No more files than weights (a quantized projection counts once).
  check_range("shards", spec.shards, 1, detail::planned_weights(spec));
}

}  // namespace quire::engine::modelgen
