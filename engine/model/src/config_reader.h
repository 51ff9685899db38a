#pragma once

// Private: typed reads of config.json keys with messages that name the key,
// the file and what is allowed.

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "quire/engine/model/model_config.h"

namespace quire::engine::detail {

using Json = nlohmann::json;

// The member `key` of an object, or null when `object` is not an object, or
// the key is absent or written as null (both mean "not set" in config files).
inline const Json* member(const Json& object, const char* key) {
  if (!object.is_object() || !object.contains(key)) return nullptr;
  const Json& value = object.at(key);
  return value.is_null() ? nullptr : &value;
}

// Looks a key up at the top level, then under "text_config" (multimodal
// wrappers nest the language model's keys there), then -- unless the file
// writes it as null -- in the defaults of the architecture's configuration
// class.
class ConfigReader {
 public:
  ConfigReader(const Json& root, std::string source);

  // transformers' defaults for keys the file leaves out (a JSON object).
  void set_defaults(const Json* defaults) { defaults_ = defaults; }

  const Json* find(const char* key) const;
  [[noreturn]] void fail(const std::string& what) const;

  std::int64_t integer(const char* key, std::int64_t low, std::int64_t high) const;
  std::optional<std::int64_t> optional_integer(const char* key, std::int64_t low,
                                               std::int64_t high) const;
  double number(const char* key, double fallback, double low, double high) const;
  std::optional<double> optional_number(const char* key, double low, double high) const;
  bool boolean(const char* key, bool fallback) const;
  std::string string(const char* key) const;

 private:
  std::int64_t checked_integer(const Json& value, const char* key, std::int64_t low,
                               std::int64_t high) const;

  const Json& root_;
  const Json* text_ = nullptr;
  const Json* defaults_ = nullptr;
  std::string source_;
};

// quantization_config.kv_cache_scheme (kv_cache_scheme.cpp); nothing when the
// file has none (or null). Throws ModelError naming the field when it is malformed.
std::optional<KvCacheScheme> parse_kv_cache_scheme(const ConfigReader& reader,
                                                   const Json& quantization);

// quantization_config's keys (quantization_config.cpp), kv_cache_scheme
// included. Throws ModelError naming the field when one is malformed.
void parse_quantization(const ConfigReader& reader, const Json& quantization,
                        QuantizationConfig& config);

// rope_scaling (rope_scaling_config.cpp); RopeScaling::Type::None without one.
RopeScaling parse_rope_scaling(const ConfigReader& reader);

}  // namespace quire::engine::detail
