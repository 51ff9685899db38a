#include "quire/engine/modelgen/random_model_spec.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <stdexcept>
#include <vector>

namespace quire::engine::modelgen {
namespace {

[[noreturn]] void reject(std::string_view option, const std::string& what) {
  throw std::invalid_argument(std::string(option) + ": " + what);
}

// The shortest text that reads back as `value`, always with a decimal point
// ("4.0", "2.5"); independent of the locale.
std::string decimal(double value) {
  std::array<char, 64> buffer{};
  const auto result = std::to_chars(buffer.data(), buffer.data() + buffer.size(), value);
  std::string text(buffer.data(), result.ptr);
  if (text.find_first_of(".en") == std::string::npos) text += ".0";
  return text;
}

std::optional<double> parse_number(std::string_view text) {
  double value = 0.0;
  const char* end = text.data() + text.size();
  const auto [stop, error] = std::from_chars(text.data(), end, value);
  if (text.empty() || error != std::errc() || stop != end || !std::isfinite(value)) {
    return std::nullopt;
  }
  return value;
}

void check_range(std::string_view option, std::int64_t value, std::int64_t low, std::int64_t high) {
  if (value < low || value > high) {
    reject(option, std::to_string(value) + " is outside " + std::to_string(low) + ".." +
                       std::to_string(high));
  }
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

void validate_quantization(const RandomModelSpec& spec, int head_dim) {
  const FormatSpec& format = spec.format;
  if (format.kind != WeightFormat::EXL2 && format.kind != WeightFormat::GPTQ) return;
  check_multiple_of_32("hidden", spec.hidden, format);
  check_multiple_of_32("intermediate", spec.intermediate, format);
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
                std::int64_t{spec.heads} * head_dim});
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

void validate(const RandomModelSpec& spec) {
  if (spec.architecture != "llama" && spec.architecture != "mistral" &&
      spec.architecture != "qwen2" && spec.architecture != "qwen3") {
    reject("arch", "\"" + spec.architecture + "\" is not one of llama, mistral, qwen2, qwen3");
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
  validate_quantization(spec, head_dim);
  // Embeddings, per layer two norms (four with Qwen3's q/k norms) and seven
  // projections, the final norm.
  const int tensors = 2 + (spec.architecture == "qwen3" ? 11 : 9) * spec.layers;
  check_range("shards", spec.shards, 1, tensors);
}

FormatSpec parse_format(std::string_view text) {
  if (text == "fp16") return {WeightFormat::FP16, 4.0};
  if (text == "bf16") return {WeightFormat::BF16, 4.0};
  if (text == "gptq") return {WeightFormat::GPTQ, 4.0};
  constexpr std::string_view kExl2 = "exl2:";
  if (text.starts_with(kExl2)) {
    const std::optional<double> bits = parse_number(text.substr(kExl2.size()));
    if (bits && *bits >= 2.0 && *bits <= 8.0) return {WeightFormat::EXL2, *bits};
  }
  reject("format", "\"" + std::string(text) +
                       "\" is not fp16, bf16, gptq or exl2:BITS with BITS from 2.0 to 8.0");
}

std::string to_string(const FormatSpec& format) {
  switch (format.kind) {
    case WeightFormat::FP16:
      return "fp16";
    case WeightFormat::BF16:
      return "bf16";
    case WeightFormat::GPTQ:
      return "gptq";
    case WeightFormat::EXL2:
      return "exl2:" + decimal(format.exl2_bits);
  }
  return "?";
}

RopeScalingSpec parse_rope_scaling(std::string_view text) {
  using Type = RopeScalingSpec::Type;
  const auto fail = [&]() {
    reject("rope_scaling",
           "\"" + std::string(text) +
               "\" is not none, linear:F, dynamic:F, llama3[:F[:ORIGINAL[:LOW:HIGH]]] "
               "or yarn:F[:ORIGINAL] (F a factor >= 1)");
  };
  if (text == "none") return {};
  if (text == "llama3") return {Type::Llama3, 8.0};
  // NAME:F followed by the type's optional numbers.
  std::vector<double> numbers;
  const std::size_t colon = text.find(':');
  const std::string_view name = text.substr(0, colon);
  for (std::size_t start = colon; start != std::string_view::npos;) {
    const std::size_t next = text.find(':', start + 1);
    const std::optional<double> number = parse_number(
        text.substr(start + 1, next == std::string_view::npos ? next : next - start - 1));
    if (!number) fail();
    numbers.push_back(*number);
    start = next;
  }
  if (numbers.empty() || !(numbers[0] >= 1.0)) fail();
  RopeScalingSpec scaling{Type::None, numbers[0]};
  const auto whole = [&](double value) {
    if (!(value >= 1.0 && value <= 1e9 && value == std::floor(value))) fail();
    return static_cast<std::int64_t>(value);
  };
  if ((name == "linear" || name == "dynamic") && numbers.size() == 1) {
    scaling.type = name == "linear" ? Type::Linear : Type::Dynamic;
  } else if (name == "llama3" && (numbers.size() <= 2 || numbers.size() == 4)) {
    scaling.type = Type::Llama3;
    if (numbers.size() >= 2) scaling.original_max_position_embeddings = whole(numbers[1]);
    if (numbers.size() == 4) {
      scaling.low_freq_factor = numbers[2];
      scaling.high_freq_factor = numbers[3];
    }
  } else if (name == "yarn" && numbers.size() <= 2) {
    scaling.type = Type::Yarn;
    if (numbers.size() == 2) scaling.original_max_position_embeddings = whole(numbers[1]);
  } else {
    fail();
  }
  return scaling;
}

std::string to_string(const RopeScalingSpec& scaling) {
  switch (scaling.type) {
    case RopeScalingSpec::Type::None:
      return "none";
    case RopeScalingSpec::Type::Linear:
      return "linear:" + decimal(scaling.factor);
    case RopeScalingSpec::Type::Dynamic:
      return "dynamic:" + decimal(scaling.factor);
    case RopeScalingSpec::Type::Llama3: {
      std::string text = "llama3:" + decimal(scaling.factor);
      const bool bands = scaling.low_freq_factor != 1.0 || scaling.high_freq_factor != 4.0;
      if (scaling.original_max_position_embeddings != 0 || bands) {
        text += ":" + std::to_string(scaling.original_max_position_embeddings != 0
                                         ? scaling.original_max_position_embeddings
                                         : kLlama3OriginalContext);
      }
      if (bands)
        text += ":" + decimal(scaling.low_freq_factor) + ":" + decimal(scaling.high_freq_factor);
      return text;
    }
    case RopeScalingSpec::Type::Yarn:
      return "yarn:" + decimal(scaling.factor) +
             (scaling.original_max_position_embeddings != 0
                  ? ":" + std::to_string(scaling.original_max_position_embeddings)
                  : std::string());
  }
  return "?";
}

std::string describe(const RandomModelSpec& spec) {
  std::string text =
      spec.architecture + ", " + to_string(spec.format) + ", " + std::to_string(spec.layers) +
      (spec.layers == 1 ? " layer" : " layers") + ", hidden " + std::to_string(spec.hidden) +
      ", vocab " + (spec.vocab != 0 ? std::to_string(spec.vocab) : std::string("of the tokenizer"));
  if (spec.tokenizer_vocab != 0 && spec.tokenizer_vocab != spec.vocab) {
    text += " (tokenizer " + std::to_string(spec.tokenizer_vocab) + ")";
  }
  return text;
}

}  // namespace quire::engine::modelgen
