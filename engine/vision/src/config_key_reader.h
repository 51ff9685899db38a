#pragma once

// Private: reads the keys of one object of config.json, with messages naming
// the file and the key's full path ("vision_config.hidden_size"). Absent and
// null both mean "not set", as transformers reads them.

#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>

#include "quire/engine/model_error.h"

namespace quire::engine::vision::detail {

class ConfigKeyReader {
 public:
  using Json = nlohmann::json;

  ConfigKeyReader(const Json& object, std::string path, const std::string& source)
      : object_(object), path_(std::move(path)), source_(source) {}

  int integer(const char* key, int fallback, int low, int high) const {
    const Json* value = find(key);
    if (value == nullptr) return fallback;
    if (!value->is_number_integer() || *value < low || *value > high) {
      fail(key, "must be a whole number from " + std::to_string(low) + " to " +
                    std::to_string(high) + ", not " + value->dump());
    }
    return value->get<int>();
  }

  double number(const char* key, double fallback, double low, double high) const {
    const Json* value = find(key);
    if (value == nullptr) return fallback;
    if (!value->is_number() || !(value->get<double>() >= low && value->get<double>() <= high)) {
      std::ostringstream range;
      range << low << " to " << high;
      fail(key, "must be a number from " + range.str() + ", not " + value->dump());
    }
    return value->get<double>();
  }

  double positive(const char* key, double fallback) const {
    const Json* value = find(key);
    if (value == nullptr) return fallback;
    if (!value->is_number() || !(value->get<double>() > 0.0)) {
      fail(key, "must be a positive number, not " + value->dump());
    }
    return value->get<double>();
  }

  bool boolean(const char* key, bool fallback) const {
    const Json* value = find(key);
    if (value == nullptr) return fallback;
    if (!value->is_boolean()) fail(key, "must be true or false, not " + value->dump());
    return value->get<bool>();
  }

  std::string string(const char* key, const std::string& fallback) const {
    const Json* value = find(key);
    if (value == nullptr) return fallback;
    if (!value->is_string()) fail(key, "must be a string, not " + value->dump());
    return value->get<std::string>();
  }

  // The value itself, or nullptr when absent or null.
  const Json* find(const char* key) const {
    if (!object_.is_object() || !object_.contains(key) || object_.at(key).is_null()) return nullptr;
    return &object_.at(key);
  }

  [[noreturn]] void fail(const char* key, const std::string& what) const {
    throw ModelError(source_ + ": " + path_ + key + " " + what);
  }

 private:
  const Json& object_;
  std::string path_;
  const std::string& source_;
};

// config.json's text parsed, when its first architecture is `architecture`
// and it has a vision_config; nothing for another model or one without a
// vision side. Throws ModelError naming `source` for text that is not JSON
// or a vision_config that is not an object.
inline std::optional<nlohmann::json> multimodal_config(std::string_view json,
                                                       std::string_view architecture,
                                                       const std::string& source) {
  nlohmann::json root;
  try {
    root = nlohmann::json::parse(json);
  } catch (const nlohmann::json::parse_error& error) {
    throw ModelError(source + " is not valid JSON: " + error.what());
  }
  const auto architectures = root.find("architectures");
  if (architectures == root.end() || !architectures->is_array() || architectures->empty() ||
      *architectures->begin() != architecture) {
    return std::nullopt;
  }
  const auto vision = root.find("vision_config");
  if (vision == root.end() || vision->is_null()) return std::nullopt;
  if (!vision->is_object()) throw ModelError(source + ": vision_config must be an object");
  return root;
}

}  // namespace quire::engine::vision::detail
