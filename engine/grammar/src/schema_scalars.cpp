// Strings and numbers of a schema: lengths, patterns, formats and bounds.
#include <cmath>
#include <limits>

#include "number_range.h"
#include "regex_pattern.h"
#include "schema_compiler.h"

namespace quire::engine::grammar {
namespace {

// Formats as anchored patterns. Each allows a subset of the format's valid
// texts, so that what is generated is always valid: days stop at 28 so that
// every month has them, UUIDs are lower case, URIs are http(s) URLs.
const char* format_pattern(const std::string& format) {
  static constexpr const char* kDate = "[0-9]{4}-(0[1-9]|1[0-2])-(0[1-9]|1[0-9]|2[0-8])";
  static constexpr const char* kTime =
      "([01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9](\\.[0-9]{1,6})?(Z|[+-]([01][0-9]|2[0-3]):[0-5][0-9]"
      ")";
  if (format == "date") return "^[0-9]{4}-(0[1-9]|1[0-2])-(0[1-9]|1[0-9]|2[0-8])$";
  if (format == "time") {
    return "^([01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9](\\.[0-9]{1,6})?"
           "(Z|[+-]([01][0-9]|2[0-3]):[0-5][0-9])$";
  }
  if (format == "date-time") {
    static const std::string date_time = std::string("^") + kDate + "T" + kTime + "$";
    return date_time.c_str();
  }
  if (format == "uuid") {
    return "^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$";
  }
  // Lower-case addresses whose domain labels are letters and digits only.
  if (format == "email") {
    return "^[a-z0-9_+-]{1,32}(\\.[a-z0-9_+-]{1,32}){0,2}@([a-z0-9]{1,20}\\.){1,3}[a-z]{2,8}$";
  }
  if (format == "uri") {
    return "^https?://([a-z0-9]{1,20}\\.){1,3}[a-z]{2,8}(/[A-Za-z0-9_.~-]{1,20}){0,5}/?$";
  }
  if (format == "ipv4") {
    return "^(25[0-5]|2[0-4][0-9]|1[0-9]{2}|[1-9]?[0-9])"
           "(\\.(25[0-5]|2[0-4][0-9]|1[0-9]{2}|[1-9]?[0-9])){3}$";
  }
  return nullptr;
}

constexpr double kLargestBound = 1e18;

double bound_value(const SchemaJson& schema, const char* keyword, const std::string& path) {
  const SchemaJson& bound = schema.at(keyword);
  if (bound.is_boolean()) {
    refuse_keyword(keyword, path,
                   "is a boolean (the draft 4 form); give the bound itself, as draft 6 and later "
                   "do");
  }
  if (!bound.is_number()) refuse_keyword(keyword, path, "must be a number");
  const double value = bound.get<double>();
  if (!(std::fabs(value) <= kLargestBound)) {
    refuse_keyword(keyword, path, "is beyond ±10^18, which the grammar does not express");
  }
  return value;
}

}  // namespace

NodeId SchemaCompiler::string(const SchemaJson& schema, NodeId from, const std::string& path) {
  const auto min_length = count_keyword(schema, "minLength", path);
  const auto max_length = count_keyword(schema, "maxLength", path);
  if (schema.contains("format")) {
    const SchemaJson& format = schema.at("format");
    if (!format.is_string()) refuse_keyword("format", path, "must be a string");
    const std::string& format_name = format.get_ref<const std::string&>();
    const char* format_regex = format_pattern(format_name);
    if (!format_regex) {
      refuse_keyword("format", path,
                     "is \"" + format_name +
                         "\", which the grammar does not enforce (it enforces date, time, "
                         "date-time, uuid, email, uri and ipv4)");
    }
    for (const char* other : {"pattern", "minLength", "maxLength"}) {
      if (schema.contains(other)) {
        refuse_keyword(other, path, "together with \"format\" is not supported");
      }
    }
    return string_matching_pattern(text_, from, format_regex, child_path(path, "format"));
  }
  if (schema.contains("pattern")) {
    const SchemaJson& pattern = schema.at("pattern");
    if (!pattern.is_string()) refuse_keyword("pattern", path, "must be a string");
    for (const char* other : {"minLength", "maxLength"}) {
      if (schema.contains(other)) {
        refuse_keyword(other, path,
                       "together with \"pattern\" is not supported; put the length into the "
                       "pattern ({n,m})");
      }
    }
    const std::string& pattern_text = pattern.get_ref<const std::string&>();
    return string_matching_pattern(text_, from, pattern_text, child_path(path, "pattern"));
  }
  if (min_length && max_length && *min_length > *max_length) {
    refuse_keyword("minLength", path, "is above maxLength, so no string satisfies the schema");
  }
  return text_.string(from, min_length.value_or(0), max_length);
}

NodeId SchemaCompiler::number(const SchemaJson& schema, bool integer, NodeId from,
                              const std::string& path) {
  std::optional<std::int64_t> low;
  std::optional<std::int64_t> high;
  auto raise_low = [&](std::int64_t value) { low = low ? std::max(*low, value) : value; };
  auto lower_high = [&](std::int64_t value) { high = high ? std::min(*high, value) : value; };
  for (const char* keyword : {"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"}) {
    if (!schema.contains(keyword)) continue;
    const double value = bound_value(schema, keyword, path);
    const std::string_view name = keyword;
    const bool whole = value == std::floor(value);
    if (!integer && (!whole || name.starts_with("exclusive"))) {
      refuse_keyword(keyword, path,
                     "is expressed for numbers only as an inclusive whole-number bound "
                     "(minimum or maximum); use type integer, or a whole-number minimum/maximum");
    }
    const auto floor_value = static_cast<std::int64_t>(std::floor(value));
    const auto ceil_value = static_cast<std::int64_t>(std::ceil(value));
    if (name == "minimum") raise_low(ceil_value);
    if (name == "maximum") lower_high(floor_value);
    if (name == "exclusiveMinimum") raise_low(floor_value + 1);
    if (name == "exclusiveMaximum") lower_high(ceil_value - 1);
  }
  if (low && high && *low > *high) {
    throw GrammarError("the bounds at " + path + " leave no " +
                       (integer ? std::string("integer") : std::string("number")) +
                       " between them (" + std::to_string(*low) + " > " + std::to_string(*high) +
                       ")");
  }
  if (!low && !high) return integer ? text_.integer(from) : text_.number(from);
  return integer ? integer_in_range(text_, from, low, high)
                 : number_in_range(text_, from, low, high);
}

}  // namespace quire::engine::grammar
