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
  // Bounds as whole numbers: integers round inward; numbers take whole
  // bounds only, inclusive or not.
  std::optional<NumberBound> low;
  std::optional<NumberBound> high;
  auto raise_low = [&](NumberBound bound) {
    if (!low || bound.value > low->value || (bound.value == low->value && bound.exclusive)) {
      low = bound;
    }
  };
  auto lower_high = [&](NumberBound bound) {
    if (!high || bound.value < high->value || (bound.value == high->value && bound.exclusive)) {
      high = bound;
    }
  };
  for (const char* keyword : {"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"}) {
    if (!schema.contains(keyword)) continue;
    const double value = bound_value(schema, keyword, path);
    const std::string_view name = keyword;
    const bool exclusive = name.starts_with("exclusive");
    const bool lower = name == "minimum" || name == "exclusiveMinimum";
    if (!integer && value != std::floor(value)) {
      refuse_keyword(keyword, path,
                     "is not a whole number; number bounds are expressed only when whole (or use "
                     "type integer)");
    }
    const auto floor_value = static_cast<std::int64_t>(std::floor(value));
    const auto ceil_value = static_cast<std::int64_t>(std::ceil(value));
    if (integer) {
      // The integers above or below the bound, inclusively.
      if (lower) raise_low({exclusive ? floor_value + 1 : ceil_value, false});
      if (!lower) lower_high({exclusive ? ceil_value - 1 : floor_value, false});
    } else {
      if (lower) raise_low({floor_value, exclusive});
      if (!lower) lower_high({floor_value, exclusive});
    }
  }
  if (!low && !high) return integer ? text_.integer(from) : text_.number(from);
  try {
    if (integer) {
      return integer_in_range(text_, from, low ? std::optional(low->value) : std::nullopt,
                              high ? std::optional(high->value) : std::nullopt);
    }
    return number_in_range(text_, from, low, high);
  } catch (const GrammarError& error) {
    throw GrammarError("the bounds at " + path + " leave no " +
                       (integer ? std::string("integer") : std::string("number")) +
                       " between them (" + error.what() + ")");
  }
}

}  // namespace quire::engine::grammar
