#include <array>
#include <charconv>
#include <cmath>
#include <stdexcept>
#include <tuple>
#include <vector>

#include "quire/engine/modelgen/random_model_spec.h"
#include "spec_text.h"

namespace quire::engine::modelgen {
namespace detail {

void reject(std::string_view option, const std::string& what) {
  throw std::invalid_argument(std::string(option) + ": " + what);
}

void check_range(std::string_view option, std::int64_t value, std::int64_t low, std::int64_t high) {
  if (value < low || value > high) {
    reject(option, std::to_string(value) + " is outside " + std::to_string(low) + ".." +
                       std::to_string(high));
  }
}

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

}  // namespace detail

using detail::decimal;
using detail::parse_number;
using detail::reject;

FormatSpec parse_format(std::string_view text) {
  if (text == "fp16") return {WeightFormat::FP16, 4.0};
  if (text == "bf16") return {WeightFormat::BF16, 4.0};
  if (text == "gptq") return {WeightFormat::GPTQ, 4.0};
  if (text == "gptq:8") {
    FormatSpec format{WeightFormat::GPTQ};
    format.gptq_bits = 8;
    return format;
  }
  if (text == "fp8") return {WeightFormat::FP8, 4.0};
  if (text == "fp8-tensor") return {WeightFormat::FP8_TENSOR, 4.0};
  for (const auto& [name, kind, zero_points] : {std::tuple{"w4a16", WeightFormat::W4A16, false},
                                                {"w4a16-asym", WeightFormat::W4A16, true},
                                                {"w8a16", WeightFormat::W8A16, false},
                                                {"w8a16-asym", WeightFormat::W8A16, true},
                                                {"int8", WeightFormat::INT8, false},
                                                {"awq", WeightFormat::AWQ, false}}) {
    if (text != name) continue;
    FormatSpec format{kind};
    format.zero_points = zero_points;
    return format;
  }
  constexpr std::string_view kExl2 = "exl2:";
  if (text.starts_with(kExl2)) {
    const std::optional<double> bits = parse_number(text.substr(kExl2.size()));
    if (bits && *bits >= 2.0 && *bits <= 8.0) return {WeightFormat::EXL2, *bits};
  }
  constexpr std::string_view kExl3 = "exl3:";
  if (text.starts_with(kExl3)) {
    std::string_view rest = text.substr(kExl3.size());
    FormatSpec format{WeightFormat::EXL3};
    if (const std::size_t colon = rest.find(':'); colon != std::string_view::npos) {
      const std::string_view codebook = rest.substr(colon + 1);
      rest = rest.substr(0, colon);
      if (codebook == "mcg") {
        format.exl3_codebook = kernels::Exl3Codebook::mcg;
      } else if (codebook == "3inst") {
        format.exl3_codebook = kernels::Exl3Codebook::three_inst;
      } else if (codebook != "mul1") {
        reject("format", "\"" + std::string(codebook) +
                             "\" is not an EXL3 codebook; use mul1 (the default), mcg or 3inst");
      }
    }
    const std::optional<double> bits = parse_number(rest);
    if (bits && *bits >= 1.0 && *bits <= 8.0) {
      format.exl3_bits = *bits;
      return format;
    }
  }
  reject("format", "\"" + std::string(text) +
                       "\" is not fp16, bf16, gptq, gptq:8, fp8, fp8-tensor, w4a16, w4a16-asym, "
                       "w8a16, w8a16-asym, int8, awq, exl2:BITS with BITS from 2.0 to 8.0 or "
                       "exl3:BITS[:mul1|mcg|3inst] with BITS from 1.0 to 8.0");
}

std::string to_string(const FormatSpec& format) {
  switch (format.kind) {
    case WeightFormat::FP16:
      return "fp16";
    case WeightFormat::BF16:
      return "bf16";
    case WeightFormat::GPTQ:
      return format.gptq_bits == 8 ? "gptq:8" : "gptq";
    case WeightFormat::W4A16:
      return format.zero_points ? "w4a16-asym" : "w4a16";
    case WeightFormat::W8A16:
      return format.zero_points ? "w8a16-asym" : "w8a16";
    case WeightFormat::INT8:
      return "int8";
    case WeightFormat::AWQ:
      return "awq";
    case WeightFormat::FP8:
      return "fp8";
    case WeightFormat::FP8_TENSOR:
      return "fp8-tensor";
    case WeightFormat::EXL2:
      return "exl2:" + decimal(format.exl2_bits);
    case WeightFormat::EXL3: {
      const char* codebook = format.exl3_codebook == kernels::Exl3Codebook::mcg          ? ":mcg"
                             : format.exl3_codebook == kernels::Exl3Codebook::three_inst ? ":3inst"
                                                                                         : "";
      return "exl3:" + decimal(format.exl3_bits) + codebook;
    }
  }
  return "?";
}

RopeScalingSpec parse_rope_scaling(std::string_view text) {
  using Type = RopeScalingSpec::Type;
  const auto fail = [&]() {
    reject("rope_scaling",
           "\"" + std::string(text) +
               "\" is not none, linear:F, dynamic:F, llama3[:F[:ORIGINAL[:LOW:HIGH]]], "
               "yarn:F[:ORIGINAL] (F a factor >= 1) or longrope[:ORIGINAL]");
  };
  if (text == "none") return {};
  if (text == "llama3") return {Type::Llama3, 8.0};
  if (text == "longrope") return {Type::LongRope, 1.0};
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
  if (name == "longrope" && numbers.size() == 1) {
    // Its factors are lists, drawn from the seed; the number is the original context.
    scaling = {Type::LongRope, 1.0};
    scaling.original_max_position_embeddings = whole(numbers[0]);
  } else if ((name == "linear" || name == "dynamic") && numbers.size() == 1) {
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
    case RopeScalingSpec::Type::LongRope:
      return "longrope:" + std::to_string(scaling.original_max_position_embeddings != 0
                                              ? scaling.original_max_position_embeddings
                                              : kLongRopeOriginalContext);
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
  if (spec.architecture == "mixtral" || spec.architecture == "qwen3_moe") {
    text += ", " + std::to_string(spec.moe.experts) + " experts (" +
            std::to_string(spec.moe.experts_per_token) + " per token)";
  }
  if (spec.multimodal) text += ", with a vision tower";
  return text;
}

}  // namespace quire::engine::modelgen
