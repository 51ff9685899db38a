#pragma once

// Reading the fields of a request's JSON objects with their types and ranges
// checked, shared by the request parsers (openai_request.cpp,
// tools_request_parser.cpp). Every failure is an ApiException 400 that
// names the field.

#include <cstdint>
#include <limits>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

namespace quire::server::request {

using nlohmann::json;

[[noreturn]] void fail(std::string message, std::string param = {});
// "null", "a boolean", "a string", ... for messages.
std::string_view kind_of(const json& value);
// 1.5 as "1.5", 2.0 as "2".
std::string format_number(double value);

// The fields of one JSON object, each read with its type and range checked.
// A field that is null counts as absent, as in OpenAI's API.
class Fields {
 public:
  explicit Fields(const json& object) : object_(object) {}

  const json* find(const char* name) const {
    const auto it = object_.find(name);
    return it == object_.end() || it->is_null() ? nullptr : &*it;
  }

  std::optional<double> number(const char* name, double low, double high) const {
    const json* value = find(name);
    if (!value) return std::nullopt;
    if (!value->is_number()) {
      fail(std::string(name) + " must be a number, not " + std::string(kind_of(*value)) + ".",
           name);
    }
    const double number = value->get<double>();
    if (!(number >= low && number <= high)) {
      fail(std::string(name) + " must be between " + format_number(low) + " and " +
               format_number(high) + "; it is " + format_number(number) + ".",
           name);
    }
    return number;
  }

  std::optional<std::int64_t> integer(const char* name, std::int64_t low, std::int64_t high) const {
    const json* value = find(name);
    if (!value) return std::nullopt;
    return integer_value(*value, name, low, high);
  }

  bool boolean(const char* name) const {
    const json* value = find(name);
    if (!value) return false;
    if (!value->is_boolean()) {
      fail(std::string(name) + " must be a boolean, not " + std::string(kind_of(*value)) + ".",
           name);
    }
    return value->get<bool>();
  }

  std::string string(const char* name) const {
    const json* value = find(name);
    if (!value) return {};
    if (!value->is_string()) {
      fail(std::string(name) + " must be a string, not " + std::string(kind_of(*value)) + ".",
           name);
    }
    return value->get<std::string>();
  }

  // `param`: the field an error names, when `name` is an item inside it.
  static std::int64_t integer_value(const json& value, const std::string& name, std::int64_t low,
                                    std::int64_t high, std::string param = {}) {
    if (param.empty()) param = name;
    if (!value.is_number_integer()) {
      fail(name + " must be an integer, not " + std::string(kind_of(value)) + ".", param);
    }
    const bool too_large = value.is_number_unsigned() &&
                           value.get<std::uint64_t>() >
                               static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max());
    const std::int64_t number =
        too_large ? std::numeric_limits<std::int64_t>::max() : value.get<std::int64_t>();
    if (too_large || number < low || number > high) {
      fail(name + " must be an integer from " + std::to_string(low) + " to " +
               std::to_string(high) + "; it is " + value.dump() + ".",
           param);
    }
    return number;
  }

 private:
  const json& object_;
};

}  // namespace quire::server::request
