#include "schema_validator.h"

#include <cmath>
#include <cstdint>
#include <regex>

namespace quire::test {
namespace {

using Value = nlohmann::ordered_json;

std::size_t code_points(const std::string& text) {
  std::size_t count = 0;
  for (const char c : text)
    count += (static_cast<unsigned char>(c) & 0xC0) != 0x80;
  return count;
}

// Regexes run over code points, not bytes: std::wregex over UTF-32 text.
std::wstring wide(const std::string& text) {
  std::wstring out;
  for (std::size_t i = 0; i < text.size();) {
    const auto lead = static_cast<unsigned char>(text[i]);
    const std::size_t length = lead < 0x80 ? 1 : lead < 0xE0 ? 2 : lead < 0xF0 ? 3 : 4;
    std::uint32_t code = length == 1 ? lead : lead & (0x7F >> length);
    for (std::size_t k = 1; k < length && i + k < text.size(); ++k)
      code = (code << 6) | (static_cast<unsigned char>(text[i + k]) & 0x3F);
    out += static_cast<wchar_t>(code);
    i += length;
  }
  return out;
}

bool is_type(const Value& value, const std::string& type) {
  if (type == "null") return value.is_null();
  if (type == "boolean") return value.is_boolean();
  if (type == "string") return value.is_string();
  if (type == "object") return value.is_object();
  if (type == "array") return value.is_array();
  if (type == "number") return value.is_number();
  if (type == "integer") {
    return value.is_number_integer() ||
           (value.is_number_float() && std::floor(value.get<double>()) == value.get<double>());
  }
  return false;
}

bool valid_date(const std::string& text) {
  static const std::regex shape("^([0-9]{4})-([0-9]{2})-([0-9]{2})$");
  std::smatch m;
  if (!std::regex_match(text, m, shape)) return false;
  const int year = std::stoi(m[1]);
  const int month = std::stoi(m[2]);
  const int day = std::stoi(m[3]);
  static constexpr int kDays[] = {31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  if (month < 1 || month > 12 || day < 1 || day > kDays[month - 1]) return false;
  const bool leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
  return !(month == 2 && day == 29 && !leap);
}

bool valid_time(const std::string& text) {
  static const std::regex shape(
      "^([01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9](\\.[0-9]+)?([zZ]|[+-]([01][0-9]|2[0-3]):[0-5][0-9]"
      ")"
      "$");
  return std::regex_match(text, shape);
}

class Validator {
 public:
  explicit Validator(const Value& root) : root_(root) {}

  std::string check(const Value& value, const Value& schema, const std::string& at) {
    if (schema.is_boolean()) return schema.get<bool>() ? "" : at + ": false schema";
    if (const auto ref = schema.find("$ref"); ref != schema.end()) {
      const std::string target = ref->get<std::string>();
      const Value& resolved =
          target == "#" ? root_ : root_.at(Value::json_pointer(target.substr(1)));
      return check(value, resolved, at);
    }
    if (const auto list = schema.find("anyOf"); list != schema.end()) {
      for (const Value& option : *list)
        if (check(value, option, at).empty()) return "";
      return at + ": no anyOf alternative fits";
    }
    if (const auto list = schema.find("oneOf"); list != schema.end()) {
      int fits = 0;
      for (const Value& option : *list)
        fits += check(value, option, at).empty();
      return fits == 1 ? "" : at + ": " + std::to_string(fits) + " oneOf alternatives fit";
    }
    if (const auto list = schema.find("allOf"); list != schema.end()) {
      for (const Value& option : *list)
        if (auto why = check(value, option, at); !why.empty()) return why;
    }
    if (const auto values = schema.find("enum"); values != schema.end()) {
      if (std::find(values->begin(), values->end(), value) == values->end())
        return at + ": not in enum";
    }
    if (const auto constant = schema.find("const"); constant != schema.end()) {
      if (*constant != value) return at + ": not the const";
    }
    if (const auto type = schema.find("type"); type != schema.end()) {
      const Value types = type->is_array() ? *type : Value::array({*type});
      bool fits = false;
      for (const Value& t : types)
        fits = fits || is_type(value, t.get<std::string>());
      if (!fits) return at + ": not of type " + type->dump();
    }
    if (value.is_string()) return check_string(value.get<std::string>(), schema, at);
    if (value.is_number()) return check_number(value.get<double>(), schema, at);
    if (value.is_array()) return check_array(value, schema, at);
    if (value.is_object()) return check_object(value, schema, at);
    return "";
  }

 private:
  std::string check_string(const std::string& text, const Value& schema, const std::string& at) {
    const std::size_t length = code_points(text);
    if (schema.contains("minLength") && length < schema["minLength"].get<std::size_t>())
      return at + ": shorter than minLength";
    if (schema.contains("maxLength") && length > schema["maxLength"].get<std::size_t>())
      return at + ": longer than maxLength";
    if (schema.contains("pattern")) {
      const std::wregex pattern(wide(schema["pattern"].get<std::string>()), std::regex::ECMAScript);
      if (!std::regex_search(wide(text), pattern)) return at + ": does not match the pattern";
    }
    if (schema.contains("format")) {
      const std::string format = schema["format"].get<std::string>();
      bool fits = true;
      if (format == "date") fits = valid_date(text);
      if (format == "time") fits = valid_time(text);
      if (format == "date-time") {
        const auto t = text.find_first_of("Tt");
        fits = t != std::string::npos && valid_date(text.substr(0, t)) &&
               valid_time(text.substr(t + 1));
      }
      if (format == "email") {
        static const std::regex email("^[^@\\s]+@[^@\\s]+\\.[^@\\s]+$");
        fits = std::regex_match(text, email);
      }
      if (format == "uri") {
        static const std::regex uri("^[a-zA-Z][a-zA-Z0-9+.-]*:[^\\s]*$");
        fits = std::regex_match(text, uri);
      }
      if (format == "ipv4") {
        static const std::regex ipv4("^([0-9]{1,3})\\.([0-9]{1,3})\\.([0-9]{1,3})\\.([0-9]{1,3})$");
        std::smatch parts;
        fits = std::regex_match(text, parts, ipv4);
        for (std::size_t i = 1; fits && i <= 4; ++i) {
          const std::string part = parts[i];
          fits = std::stoi(part) <= 255 && (part.size() == 1 || part[0] != '0');
        }
      }
      if (format == "uuid") {
        static const std::regex uuid(
            "^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$");
        fits = std::regex_match(text, uuid);
      }
      if (!fits) return at + ": not a valid " + format;
    }
    return "";
  }

  std::string check_number(double number, const Value& schema, const std::string& at) {
    if (schema.contains("minimum") && number < schema["minimum"].get<double>())
      return at + ": below minimum";
    if (schema.contains("maximum") && number > schema["maximum"].get<double>())
      return at + ": above maximum";
    if (schema.contains("exclusiveMinimum") && number <= schema["exclusiveMinimum"].get<double>())
      return at + ": not above exclusiveMinimum";
    if (schema.contains("exclusiveMaximum") && number >= schema["exclusiveMaximum"].get<double>())
      return at + ": not below exclusiveMaximum";
    return "";
  }

  std::string check_array(const Value& array, const Value& schema, const std::string& at) {
    if (schema.contains("minItems") && array.size() < schema["minItems"].get<std::size_t>())
      return at + ": fewer than minItems";
    if (schema.contains("maxItems") && array.size() > schema["maxItems"].get<std::size_t>())
      return at + ": more than maxItems";
    std::size_t prefix = 0;
    if (const auto items = schema.find("prefixItems"); items != schema.end()) {
      for (; prefix < items->size() && prefix < array.size(); ++prefix) {
        if (auto why = check(array[prefix], (*items)[prefix], at + "/" + std::to_string(prefix));
            !why.empty())
          return why;
      }
      prefix = items->size();
    }
    if (const auto items = schema.find("items"); items != schema.end()) {
      for (std::size_t i = prefix; i < array.size(); ++i)
        if (auto why = check(array[i], *items, at + "/" + std::to_string(i)); !why.empty())
          return why;
    }
    return "";
  }

  std::string check_object(const Value& object, const Value& schema, const std::string& at) {
    const Value no_properties = Value::object();
    const Value& properties = schema.contains("properties") ? schema["properties"] : no_properties;
    if (const auto required = schema.find("required"); required != schema.end()) {
      for (const Value& name : *required)
        if (!object.contains(name.get<std::string>()))
          return at + ": lacks required " + name.dump();
    }
    for (const auto& [key, member] : object.items()) {
      const std::string member_at = at + "/" + key;
      if (properties.contains(key)) {
        if (auto why = check(member, properties[key], member_at); !why.empty()) return why;
      } else if (const auto extra = schema.find("additionalProperties"); extra != schema.end()) {
        if (auto why = check(member, *extra, member_at); !why.empty()) return why;
      }
    }
    return "";
  }

  const Value& root_;
};

}  // namespace

std::string schema_violation(const nlohmann::ordered_json& value,
                             const nlohmann::ordered_json& schema) {
  return Validator(schema).check(value, schema, "#");
}

}  // namespace quire::test
