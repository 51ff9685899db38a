// jinja2's built-in tests (`x is defined`, `x is divisibleby 3`...).

#include <map>

#include "runtime.h"

namespace quire::engine::jinja {
namespace {

using Test = bool (*)(const Value& input, const Params& params);

const Value& argument(const Params& params) {
  if (!params.has(0)) params.fail("takes one argument");
  return *params.get(0);
}

bool t_defined(const Value& v, const Params&) {
  return !v.is_undefined();
}
bool t_undefined(const Value& v, const Params&) {
  return v.is_undefined();
}
bool t_none(const Value& v, const Params&) {
  return v.is_none();
}
bool t_string(const Value& v, const Params&) {
  return v.is_string();
}
bool t_mapping(const Value& v, const Params&) {
  return v.is_dict();
}
bool t_iterable(const Value& v, const Params&) {
  return v.is_string() || v.is_list() || v.is_dict() || v.is_undefined();
}
bool t_sequence(const Value& v, const Params&) {
  return v.is_string() || v.is_list() || v.is_dict();
}
bool t_number(const Value& v, const Params&) {
  return v.is_number();
}
bool t_integer(const Value& v, const Params&) {
  return v.is_int();
}
bool t_float(const Value& v, const Params&) {
  return v.is_float();
}
bool t_boolean(const Value& v, const Params&) {
  return v.is_bool();
}
bool t_callable(const Value& v, const Params&) {
  return v.is_callable();
}
bool t_true(const Value& v, const Params&) {
  return v.is_bool() && v.as_bool();
}
bool t_false(const Value& v, const Params&) {
  return v.is_bool() && !v.as_bool();
}
bool t_escaped(const Value&, const Params&) {
  return false;
}
bool t_eq(const Value& v, const Params& p) {
  return compare("==", v, argument(p));
}
bool t_ne(const Value& v, const Params& p) {
  return compare("!=", v, argument(p));
}
bool t_lt(const Value& v, const Params& p) {
  return compare("<", v, argument(p));
}
bool t_le(const Value& v, const Params& p) {
  return compare("<=", v, argument(p));
}
bool t_gt(const Value& v, const Params& p) {
  return compare(">", v, argument(p));
}
bool t_ge(const Value& v, const Params& p) {
  return compare(">=", v, argument(p));
}
bool t_in(const Value& v, const Params& p) {
  return contains(argument(p), v);
}

std::int64_t remainder(const Value& v, std::int64_t divisor) {
  return binary_operation("%", v, Value(divisor)).as_int();
}
bool t_odd(const Value& v, const Params&) {
  return remainder(v, 2) == 1;
}
bool t_even(const Value& v, const Params&) {
  return remainder(v, 2) == 0;
}
bool t_divisibleby(const Value& v, const Params& p) {
  return binary_operation("%", v, argument(p)).as_double() == 0.0;
}

bool t_lower(const Value& v, const Params&) {
  const std::string text = v.str().bytes();
  return text == python_lower(text) && text != python_upper(text);
}
bool t_upper(const Value& v, const Params&) {
  const std::string text = v.str().bytes();
  return text == python_upper(text) && text != python_lower(text);
}

// Python's `is`: the same object. Scalars that CPython interns (None, the
// booleans, small integers) are the same object when equal.
bool t_sameas(const Value& v, const Params& p) {
  const Value& other = argument(p);
  if (v.kind() != other.kind()) return false;
  switch (v.kind()) {
    case Value::Kind::None:
    case Value::Kind::Undefined:
      return true;
    case Value::Kind::Bool:
      return v.as_bool() == other.as_bool();
    case Value::Kind::Int:
      return v.as_int() == other.as_int() && v.as_int() >= -5 && v.as_int() <= 256;
    case Value::Kind::String:
      return &v.as_text() == &other.as_text();
    case Value::Kind::List:
      return &v.as_list() == &other.as_list();
    case Value::Kind::Dict:
    case Value::Kind::Namespace:
      return &v.as_dict() == &other.as_dict();
    case Value::Kind::Callable:
      return &v.as_callable() == &other.as_callable();
    default:
      return false;
  }
}

bool t_filter(const Value& v, const Params&) {
  return v.is_string() && filter_status(v.as_string()) != NameStatus::Unknown;
}
bool t_test(const Value& v, const Params&) {
  return v.is_string() && test_status(v.as_string()) != NameStatus::Unknown;
}

const std::map<std::string, Test, std::less<>>& tests() {
  static const std::map<std::string, Test, std::less<>> table = {
      {"!=", t_ne},
      {"<", t_lt},
      {"<=", t_le},
      {"==", t_eq},
      {">", t_gt},
      {">=", t_ge},
      {"boolean", t_boolean},
      {"callable", t_callable},
      {"defined", t_defined},
      {"divisibleby", t_divisibleby},
      {"eq", t_eq},
      {"equalto", t_eq},
      {"escaped", t_escaped},
      {"even", t_even},
      {"false", t_false},
      {"filter", t_filter},
      {"float", t_float},
      {"ge", t_ge},
      {"greaterthan", t_gt},
      {"gt", t_gt},
      {"in", t_in},
      {"integer", t_integer},
      {"iterable", t_iterable},
      {"le", t_le},
      {"lessthan", t_lt},
      {"lower", t_lower},
      {"lt", t_lt},
      {"mapping", t_mapping},
      {"ne", t_ne},
      {"none", t_none},
      {"number", t_number},
      {"odd", t_odd},
      {"sameas", t_sameas},
      {"sequence", t_sequence},
      {"string", t_string},
      {"test", t_test},
      {"true", t_true},
      {"undefined", t_undefined},
      {"upper", t_upper},
  };
  return table;
}

}  // namespace

NameStatus test_status(std::string_view name) {
  return tests().count(name) > 0 ? NameStatus::Supported : NameStatus::Unknown;
}

bool apply_test(const std::string& name, const Value& input, CallArgs& args) {
  const auto it = tests().find(name);
  if (it == tests().end())
    throw TemplateError("no test named '" + name + "'", 0, "test '" + name + "'");
  const Params params(args, "test '" + name + "'", {"other"});
  return it->second(input, params);
}

}  // namespace quire::engine::jinja
