#include "config_reader.h"

#include "quire/engine/model_error.h"

namespace quire::engine::detail {

ConfigReader::ConfigReader(const Json& root, std::string source)
    : root_(root), source_(std::move(source)) {
  if (auto text = root.find("text_config"); text != root.end() && text->is_object()) {
    text_ = &*text;
  }
}

const Json* ConfigReader::find(const char* key) const {
  bool written_null = false;
  for (const Json* object : {&root_, text_}) {
    if (object == nullptr) continue;
    if (auto it = object->find(key); it != object->end()) {
      if (!it->is_null()) return &*it;
      written_null = true;
    }
  }
  // A key the file sets to null means "none" (Mistral v0.3's
  // "sliding_window": null), not the class default.
  if (written_null || defaults_ == nullptr) return nullptr;
  auto it = defaults_->find(key);
  return it != defaults_->end() && !it->is_null() ? &*it : nullptr;
}

void ConfigReader::fail(const std::string& what) const {
  throw ModelError(source_ + ": " + what);
}

std::int64_t ConfigReader::integer(const char* key, std::int64_t low, std::int64_t high) const {
  const Json* value = find(key);
  if (!value) fail("missing \"" + std::string(key) + "\"; is this a Hugging Face model directory?");
  return checked_integer(*value, key, low, high);
}

std::optional<std::int64_t> ConfigReader::optional_integer(const char* key, std::int64_t low,
                                                           std::int64_t high) const {
  const Json* value = find(key);
  if (!value) return std::nullopt;
  return checked_integer(*value, key, low, high);
}

std::optional<double> ConfigReader::optional_number(const char* key, double low,
                                                    double high) const {
  const Json* value = find(key);
  if (!value) return std::nullopt;
  if (!value->is_number()) fail("\"" + std::string(key) + "\" must be a number");
  const double result = value->get<double>();
  if (!(result >= low && result <= high)) {
    fail("\"" + std::string(key) + "\" is " + value->dump() + ", outside [" + std::to_string(low) +
         ", " + std::to_string(high) + "]");
  }
  return result;
}

double ConfigReader::number(const char* key, double fallback, double low, double high) const {
  return optional_number(key, low, high).value_or(fallback);
}

bool ConfigReader::boolean(const char* key, bool fallback) const {
  const Json* value = find(key);
  if (!value) return fallback;
  if (!value->is_boolean()) fail("\"" + std::string(key) + "\" must be true or false");
  return value->get<bool>();
}

std::string ConfigReader::string(const char* key) const {
  const Json* value = find(key);
  if (!value) return {};
  if (!value->is_string()) fail("\"" + std::string(key) + "\" must be a string");
  return value->get<std::string>();
}

std::int64_t ConfigReader::checked_integer(const Json& value, const char* key, std::int64_t low,
                                           std::int64_t high) const {
  if (!value.is_number_integer()) {
    fail("\"" + std::string(key) + "\" must be an integer, not " + value.dump());
  }
  const std::int64_t result = value.get<std::int64_t>();
  if (result < low || result > high) {
    fail("\"" + std::string(key) + "\" is " + std::to_string(result) + ", outside [" +
         std::to_string(low) + ", " + std::to_string(high) + "]");
  }
  return result;
}

}  // namespace quire::engine::detail
