// quantization_config.kv_cache_scheme: llm-compressor's description of a
// calibrated K/V cache (compressed-tensors' QuantizationArgs). Malformed
// fields are errors; a well-formed scheme Quire does not run is kept and
// explained by unsupported_reason(), since it concerns only the cache and
// the model runs with Quire's own codings.

#include <string>

#include "config_reader.h"

namespace quire::engine {

std::string KvCacheScheme::unsupported_reason() const {
  const std::string field = "quantization_config.kv_cache_scheme.";
  if (type != "float") {
    return field + "type is \"" + type +
           "\"; Quire's calibrated cache is FP8 (\"float\"), so these scales are not used";
  }
  if (num_bits != 8) {
    return field + "num_bits is " + std::to_string(num_bits) +
           "; Quire's calibrated cache is 8-bit float (FP8 E4M3), so these scales are not used";
  }
  if (dynamic != "false") {
    return field + "dynamic is " + dynamic +
           ": the scheme has no fixed scales; Quire's FP8 cache computes its own per page";
  }
  if (!symmetric) {
    return field +
           "symmetric is false; Quire's FP8 cache has no zero points, so these scales are not "
           "used";
  }
  if (strategy != "tensor" && strategy != "attn_head") {
    return field + "strategy is \"" + strategy +
           "\"; Quire reads one scale per layer (\"tensor\") or per KV head (\"attn_head\"), so "
           "these scales are not used";
  }
  return {};
}

namespace detail {

std::optional<KvCacheScheme> parse_kv_cache_scheme(const ConfigReader& reader,
                                                   const Json& quantization) {
  const Json* found = member(quantization, "kv_cache_scheme");
  if (found == nullptr) return std::nullopt;
  const std::string field = "quantization_config.kv_cache_scheme";
  if (!found->is_object()) reader.fail(field + " must be an object or null");
  const Json& scheme = *found;
  KvCacheScheme result;
  const auto read_string = [&](const char* key, std::string& out) {
    const Json* value = member(scheme, key);
    if (value == nullptr) return;
    if (!value->is_string()) {
      reader.fail(field + "." + key + " must be a string, not " + value->dump());
    }
    out = value->get<std::string>();
  };
  if (const Json* bits = member(scheme, "num_bits")) {
    if (!bits->is_number_integer() || bits->get<std::int64_t>() < 1 ||
        bits->get<std::int64_t>() > 64) {
      reader.fail(field + ".num_bits must be a whole number of bits, not " + bits->dump());
    }
    result.num_bits = static_cast<int>(bits->get<std::int64_t>());
  }
  read_string("type", result.type);
  read_string("strategy", result.strategy);
  if (const Json* dynamic = member(scheme, "dynamic")) {
    if (dynamic->is_boolean()) {
      result.dynamic = dynamic->get<bool>() ? "true" : "false";
    } else if (dynamic->is_string()) {
      result.dynamic = "\"" + dynamic->get<std::string>() + "\"";
    } else {
      reader.fail(field + ".dynamic must be true, false or a string, not " + dynamic->dump());
    }
  }
  if (const Json* symmetric = member(scheme, "symmetric")) {
    if (!symmetric->is_boolean()) {
      reader.fail(field + ".symmetric must be true or false, not " + symmetric->dump());
    }
    result.symmetric = symmetric->get<bool>();
  }
  return result;
}

}  // namespace detail
}  // namespace quire::engine
