#pragma once

// What expressions, filters, tests and methods share: Python's operators,
// attribute and item access with jinja2's fallbacks, iteration, argument
// binding, and the text conversions (tojson, % formatting, str.format).

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "quire/engine/template/error.h"
#include "quire/engine/template/value.h"

namespace quire::engine::jinja {

// Throws jinja2's UndefinedError for an undefined value used where a value
// is needed (arithmetic, attributes, calls).
void require_defined(const Value& value);
[[noreturn]] void fail_undefined(const Value& value);

// Python's binary operators: + - * / // % ** and jinja2's ~.
Value binary_operation(std::string_view op, const Value& a, const Value& b);
Value negate(const Value& value);
// Python's `item in container`.
bool contains(const Value& container, const Value& item);
// jinja2's comparison operators (== != < > <= >=).
bool compare(std::string_view op, const Value& a, const Value& b);

// x.name: an attribute (a method, a namespace attribute) first, then an item.
Value get_attribute(const Value& object, std::string_view name);
// x[key]: an item first, then an attribute.
Value get_item(const Value& object, const Value& key);
// x[start:stop:step] on strings, lists and tuples.
Value slice(const Value& object, const Value& start, const Value& stop, const Value& step);
// The method `name` of `self` bound to it, or undefined when it has none.
Value bind_method(const Value& self, std::string_view name);

// What a for loop visits: list items, dict keys, the characters of a string;
// nothing for undefined. Throws for values Python cannot iterate.
ValueList iterate(const Value& value);
// Python's len().
std::int64_t length(const Value& value);

// Parameters of a filter, test or method, bound as Python binds arguments.
class Params {
 public:
  // `names` in positional order; `what` names the callee in errors.
  Params(CallArgs& args, std::string what, std::vector<std::string> names);
  // The argument for parameter `index`, or nullptr when not given.
  const Value* get(std::size_t index) const { return bound_[index]; }
  Value get_or(std::size_t index, const Value& fallback) const {
    return bound_[index] ? *bound_[index] : fallback;
  }
  bool has(std::size_t index) const { return bound_[index] != nullptr; }
  const std::string& what() const { return what_; }
  [[noreturn]] void fail(const std::string& problem) const;

 private:
  std::string what_;
  std::vector<const Value*> bound_;
};

// Python's int() of an argument that must be an integer.
std::int64_t to_index(const Value& value, const std::string& what);

// JSON as Python's json.dumps(ensure_ascii=False, ...) writes it; string
// contents keep their provenance. `indent` < 0 means none.
Text to_json(const Value& value, int indent, std::string_view item_separator,
             std::string_view key_separator, bool sort_keys, const std::string& indent_text);
// Python's `format % args` (printf-style: %s %d %i %f %r %x %%...).
Text percent_format(const Text& format, const Value& args);
// Python's str.format with positional ({}, {0}) and named ({name}) fields.
Text str_format(const Text& format, const CallArgs& args);

// Filters and tests by name; throw TemplateError (construct "filter 'x'" or
// "test 'x'") for names jinja2 does not have.
Value apply_filter(const std::string& name, const Value& input, CallArgs& args);
bool apply_test(const std::string& name, const Value& input, CallArgs& args);
enum class NameStatus { Supported, Unsupported, Unknown };
// Whether jinja2 has a filter or test of this name, and whether it is
// implemented here; jinja2 rejects unknown names when it compiles a template.
NameStatus filter_status(std::string_view name);
NameStatus test_status(std::string_view name);

// Python's str.upper() and str.lower() for ASCII, Latin, Greek and Cyrillic;
// other scripts pass unchanged.
std::string python_upper(std::string_view text);
std::string python_lower(std::string_view text);
bool is_python_space(char32_t c);

}  // namespace quire::engine::jinja
