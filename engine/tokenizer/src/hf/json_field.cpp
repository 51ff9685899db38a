#include "json_field.h"

#include "quire/engine/model_error.h"
#include "utf8.h"

namespace quire::engine::detail {

std::string one_line(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (const char c : text) {
    const auto byte = static_cast<unsigned char>(c);
    if (byte >= 0x20 && byte != 0x7F) {
      out += c;
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\t') {
      out += "\\t";
    } else if (c == '\r') {
      out += "\\r";
    } else {
      static const char* hex = "0123456789abcdef";
      out += "\\u00";
      out += hex[byte >> 4];
      out += hex[byte & 15];
    }
  }
  return out;
}

void JsonField::fail(const std::string& what) const {
  throw ModelError(one_line(*file_ + ": " +
                            (where_.empty() ? std::string("the file") : "\"" + where_ + "\"") +
                            " " + what) +
                   "; the file is damaged or was written for another tool, download it again");
}

void JsonField::fail_unsupported(const std::string& what) const {
  throw ModelError(one_line(*file_ + ": " +
                            (where_.empty() ? std::string("the file") : "\"" + where_ + "\"") +
                            " " + what) +
                   "; Quire cannot tokenize text for this model yet");
}

std::string JsonField::describe_type() const {
  std::string text = value_->dump();
  if (text.size() > 60) text = text.substr(0, 57) + "...";
  return std::string(value_->type_name()) + " " + text;
}

void JsonField::require_object() const {
  if (!value_->is_object()) fail("must be a JSON object, not " + describe_type());
}

void JsonField::require_array() const {
  if (!value_->is_array()) fail("must be a JSON array, not " + describe_type());
}

std::optional<JsonField> JsonField::find(std::string_view key) const {
  require_object();
  const auto it = value_->find(key);
  if (it == value_->end() || it->is_null()) return std::nullopt;
  return JsonField(*it, where_.empty() ? std::string(key) : where_ + "." + std::string(key),
                   *file_);
}

JsonField JsonField::at(std::string_view key) const {
  auto field = find(key);
  if (!field) {
    fail("has no \"" + std::string(key) + "\"");
  }
  return *field;
}

JsonField JsonField::at(std::size_t index) const {
  require_array();
  if (index >= value_->size()) fail("has no element " + std::to_string(index));
  return JsonField((*value_)[index], where_ + "[" + std::to_string(index) + "]", *file_);
}

std::size_t JsonField::size() const {
  require_array();
  return value_->size();
}

std::string JsonField::string() const {
  if (!value_->is_string()) fail("must be a string, not " + describe_type());
  return value_->get<std::string>();
}

std::string JsonField::character() const {
  std::string text = string();
  if (text.empty() || !is_valid_utf8(text) || code_point_at(text, 0).length != text.size()) {
    fail("must be a single character, not \"" + text + "\"");
  }
  return text;
}

bool JsonField::boolean() const {
  if (!value_->is_boolean()) fail("must be true or false, not " + describe_type());
  return value_->get<bool>();
}

std::int64_t JsonField::integer(std::int64_t min, std::int64_t max) const {
  if (value_->is_number_unsigned()) {
    const auto value = value_->get<std::uint64_t>();
    if (value > static_cast<std::uint64_t>(max)) {
      fail("is " + std::to_string(value) + ", more than " + std::to_string(max));
    }
    return static_cast<std::int64_t>(value);
  }
  if (!value_->is_number_integer()) fail("must be an integer, not " + describe_type());
  const auto value = value_->get<std::int64_t>();
  if (value < min || value > max) {
    fail("is " + std::to_string(value) + ", outside " + std::to_string(min) + " to " +
         std::to_string(max));
  }
  return value;
}

double JsonField::number() const {
  if (!value_->is_number()) fail("must be a number, not " + describe_type());
  return value_->get<double>();
}

std::string JsonField::string_or(std::string_view key, std::string fallback) const {
  const auto field = find(key);
  return field ? field->string() : std::move(fallback);
}

bool JsonField::boolean_or(std::string_view key, bool fallback) const {
  const auto field = find(key);
  return field ? field->boolean() : fallback;
}

std::string JsonField::type() const {
  require_object();
  return at("type").string();
}

}  // namespace quire::engine::detail
