// Python's operators and jinja2's access rules over Values.

#include <algorithm>
#include <cmath>
#include <limits>

#include "runtime.h"
#include "utf8.h"

namespace quire::engine::jinja {
namespace {

// Strings and lists built by * may not grow past this: a template cannot
// allocate unbounded memory with 'x' * 10**12.
constexpr std::size_t kMaxBuiltBytes = 64u << 20;

[[noreturn]] void unsupported(std::string_view op, const Value& a, const Value& b) {
  throw TemplateError("unsupported operand type(s) for " + std::string(op) + ": '" + a.type_name() +
                      "' and '" + b.type_name() + "'");
}

[[noreturn]] void overflow() {
  throw TemplateError("integer overflow (the result does not fit 64 bits)");
}

std::int64_t add(std::int64_t a, std::int64_t b) {
  std::int64_t r = 0;
  if (__builtin_add_overflow(a, b, &r)) overflow();
  return r;
}

std::int64_t subtract(std::int64_t a, std::int64_t b) {
  std::int64_t r = 0;
  if (__builtin_sub_overflow(a, b, &r)) overflow();
  return r;
}

std::int64_t multiply(std::int64_t a, std::int64_t b) {
  std::int64_t r = 0;
  if (__builtin_mul_overflow(a, b, &r)) overflow();
  return r;
}

Value integer_power(std::int64_t base, std::int64_t exponent) {
  std::int64_t result = 1;
  while (exponent > 0) {
    if (exponent & 1) result = multiply(result, base);
    exponent >>= 1;
    if (exponent > 0) base = multiply(base, base);
  }
  return Value(result);
}

Value repeat(const Value& sequence, std::int64_t times) {
  if (times <= 0) return sequence.is_string() ? Value("") : Value::list({});
  const std::size_t count = static_cast<std::size_t>(times);
  if (sequence.is_string()) {
    const Text& text = sequence.as_text();
    if (text.size() != 0 && count > kMaxBuiltBytes / text.size())
      throw TemplateError("string repetition would exceed the size limit", 0, "limit");
    Text out;
    for (std::size_t i = 0; i < count; ++i)
      out.append(text);
    return Value(std::move(out));
  }
  const ValueList& items = sequence.as_list();
  if (items.size() != 0 && count > kMaxBuiltBytes / 16 / items.size())
    throw TemplateError("list repetition would exceed the size limit", 0, "limit");
  ValueList out;
  for (std::size_t i = 0; i < count; ++i)
    out.insert(out.end(), items.begin(), items.end());
  return sequence.is_tuple() ? Value::tuple(std::move(out)) : Value::list(std::move(out));
}

double python_fmod(double a, double b) {
  double result = std::fmod(a, b);
  if (result != 0.0 && ((result < 0) != (b < 0))) result += b;
  return result;
}

}  // namespace

[[noreturn]] void fail_undefined(const Value& value) {
  const std::string& hint = value.undefined_hint();
  throw TemplateError(hint.empty() ? "a value is undefined" : hint);
}

void require_defined(const Value& value) {
  if (value.is_undefined()) fail_undefined(value);
}

Value binary_operation(std::string_view op, const Value& a, const Value& b) {
  if (op == "~") {
    Text out = a.str();
    out.append(b.str());
    return Value(std::move(out));
  }
  require_defined(a);
  require_defined(b);
  const bool numbers = a.is_number() && b.is_number();
  const bool floats = numbers && (a.is_float() || b.is_float());
  if (op == "%" && a.is_string()) return Value(percent_format(a.as_text(), b));
  if (op == "+") {
    if (floats) return Value(a.as_double() + b.as_double());
    if (numbers) return Value(add(a.as_int(), b.as_int()));
    if (a.is_string() && b.is_string()) {
      Text out = a.as_text();
      out.append(b.as_text());
      return Value(std::move(out));
    }
    if (a.is_list() && b.is_list() && a.is_tuple() == b.is_tuple()) {
      ValueList out = a.as_list();
      out.insert(out.end(), b.as_list().begin(), b.as_list().end());
      return a.is_tuple() ? Value::tuple(std::move(out)) : Value::list(std::move(out));
    }
    if (a.is_string() || b.is_string())
      throw TemplateError("can only concatenate str (not \"" + (a.is_string() ? b : a).type_name() +
                          "\") to str");
    unsupported(op, a, b);
  }
  if (op == "*") {
    if (floats) return Value(a.as_double() * b.as_double());
    if (numbers) return Value(multiply(a.as_int(), b.as_int()));
    if ((a.is_string() || a.is_list()) && (b.is_int() || b.is_bool())) return repeat(a, b.as_int());
    if ((b.is_string() || b.is_list()) && (a.is_int() || a.is_bool())) return repeat(b, a.as_int());
    unsupported(op, a, b);
  }
  if (!numbers) unsupported(op, a, b);
  if (op == "-") {
    if (floats) return Value(a.as_double() - b.as_double());
    return Value(subtract(a.as_int(), b.as_int()));
  }
  if (op == "/") {
    if (b.as_double() == 0.0) throw TemplateError("division by zero");
    return Value(a.as_double() / b.as_double());
  }
  if (op == "//") {
    if (b.as_double() == 0.0) throw TemplateError("integer division or modulo by zero");
    if (floats) return Value(std::floor(a.as_double() / b.as_double()));
    const std::int64_t x = a.as_int();
    const std::int64_t y = b.as_int();
    if (x == std::numeric_limits<std::int64_t>::min() && y == -1) overflow();
    std::int64_t q = x / y;
    if ((x % y != 0) && ((x < 0) != (y < 0))) --q;
    return Value(q);
  }
  if (op == "%") {
    if (b.as_double() == 0.0) throw TemplateError("integer division or modulo by zero");
    if (floats) return Value(python_fmod(a.as_double(), b.as_double()));
    const std::int64_t x = a.as_int();
    const std::int64_t y = b.as_int();
    if (y == -1) return Value(std::int64_t{0});
    std::int64_t r = x % y;
    if (r != 0 && ((r < 0) != (y < 0))) r += y;
    return Value(r);
  }
  if (op == "**") {
    if (!floats && b.as_int() >= 0) return integer_power(a.as_int(), b.as_int());
    if (a.as_double() == 0.0 && b.as_double() < 0)
      throw TemplateError("0.0 cannot be raised to a negative power");
    return Value(std::pow(a.as_double(), b.as_double()));
  }
  unsupported(op, a, b);
}

Value negate(const Value& value) {
  require_defined(value);
  if (value.is_float()) return Value(-value.as_double());
  if (value.is_number()) return Value(subtract(0, value.as_int()));
  throw TemplateError("bad operand type for unary -: '" + value.type_name() + "'");
}

bool contains(const Value& container, const Value& item) {
  if (container.is_string()) {
    if (!item.is_string())
      throw TemplateError("'in <string>' requires string as left operand, not " + item.type_name());
    return container.as_string().find(item.as_string()) != std::string::npos;
  }
  if (container.is_list()) {
    for (const Value& element : container.as_list()) {
      if (element == item) return true;
    }
    return false;
  }
  if (container.is_dict()) return container.as_dict().find(item) != nullptr;
  if (container.is_undefined()) return false;
  throw TemplateError("argument of type '" + container.type_name() + "' is not iterable");
}

bool compare(std::string_view op, const Value& a, const Value& b) {
  if (op == "==") return a == b;
  if (op == "!=") return !(a == b);
  require_defined(a);
  require_defined(b);
  if (op == "<") return python_less(a, b);
  if (op == ">") return python_less(b, a);
  if (op == "<=") return python_less(a, b) || (a == b && !python_less(b, a));
  if (op == ">=") return python_less(b, a) || (a == b && !python_less(a, b));
  throw TemplateError("unknown comparison " + std::string(op));
}

Value get_attribute(const Value& object, std::string_view name) {
  require_defined(object);
  const std::string missing =
      "'" + object.type_name() + " object' has no attribute '" + std::string(name) + "'";
  if (object.is_namespace()) {
    const Value* found = object.as_dict().find(name);
    return found ? *found : Value::undefined(missing);
  }
  Value method = bind_method(object, name);
  if (!method.is_undefined()) return method;
  if (object.is_dict()) {
    const Value* found = object.as_dict().find(name);
    return found ? *found : Value::undefined(missing);
  }
  return Value::undefined(missing);
}

Value get_item(const Value& object, const Value& key) {
  require_defined(object);
  if (object.is_dict() || object.is_namespace()) {
    const Value* found = object.as_dict().find(key);
    if (found) return *found;
    if (object.is_dict() && key.is_string()) {
      Value method = bind_method(object, key.as_string());
      if (!method.is_undefined()) return method;
    }
    return Value::undefined("'" + object.type_name() + " object' has no attribute " +
                            key.repr().bytes());
  }
  if ((object.is_list() || object.is_string()) && (key.is_int() || key.is_bool())) {
    const std::int64_t size = length(object);
    std::int64_t index = key.as_int();
    if (index < 0) index += size;
    if (index < 0 || index >= size)
      return Value::undefined("'" + object.type_name() + " object' has no element " +
                              key.str().bytes());
    if (object.is_list()) return object.as_list()[static_cast<std::size_t>(index)];
    const std::string& bytes = object.as_string();
    if (utf8::is_ascii(bytes)) return Value(object.as_text().slice(index, index + 1));
    const std::vector<std::size_t> offsets = utf8::offsets(bytes);
    const auto i = static_cast<std::size_t>(index);
    return Value(object.as_text().slice(offsets[i], offsets[i + 1]));
  }
  if (key.is_string()) {
    Value method = bind_method(object, key.as_string());
    if (!method.is_undefined()) return method;
  }
  if (object.is_list() || object.is_string()) {
    if (!key.is_string() && !key.is_undefined())
      throw TemplateError(object.type_name() + " indices must be integers or slices, not " +
                          key.type_name());
  }
  return Value::undefined("'" + object.type_name() + " object' has no attribute " +
                          key.repr().bytes());
}

Value slice(const Value& object, const Value& start, const Value& stop, const Value& step) {
  require_defined(object);
  if (!object.is_list() && !object.is_string())
    throw TemplateError("'" + object.type_name() + "' object is not subscriptable");
  auto bound = [](const Value& v, const char* what) -> std::optional<std::int64_t> {
    if (v.is_none() || v.is_undefined()) return std::nullopt;
    if (!v.is_int() && !v.is_bool())
      throw TemplateError(std::string("slice ") + what + " must be an integer or None");
    return v.as_int();
  };
  const std::int64_t size = length(object);
  const std::int64_t stride = bound(step, "step").value_or(1);
  if (stride == 0) throw TemplateError("slice step cannot be zero");
  auto clamp = [&](std::optional<std::int64_t> v, std::int64_t fallback) {
    if (!v) return fallback;
    std::int64_t x = *v;
    if (x < 0) x += size;
    if (stride > 0) return std::clamp<std::int64_t>(x, 0, size);
    return std::clamp<std::int64_t>(x, -1, size - 1);
  };
  const std::int64_t begin = clamp(bound(start, "start"), stride > 0 ? 0 : size - 1);
  const std::int64_t end = clamp(bound(stop, "stop"), stride > 0 ? size : -1);
  std::vector<std::size_t> picked;
  for (std::int64_t i = begin; stride > 0 ? i < end : i > end; i += stride)
    picked.push_back(static_cast<std::size_t>(i));
  if (object.is_list()) {
    ValueList out;
    for (const std::size_t i : picked)
      out.push_back(object.as_list()[i]);
    return object.is_tuple() ? Value::tuple(std::move(out)) : Value::list(std::move(out));
  }
  const Text& text = object.as_text();
  const std::vector<std::size_t> offsets = utf8::offsets(text.bytes());
  if (stride == 1) {
    if (picked.empty()) return Value("");
    return Value(text.slice(offsets[picked.front()], offsets[picked.back() + 1]));
  }
  Text out;
  for (const std::size_t i : picked)
    out.append(text.slice(offsets[i], offsets[i + 1]));
  return Value(std::move(out));
}

ValueList iterate(const Value& value) {
  switch (value.kind()) {
    case Value::Kind::Undefined:
      return {};
    case Value::Kind::List:
      return value.as_list();
    case Value::Kind::Dict: {
      ValueList keys;
      for (const auto& entry : value.as_dict().entries())
        keys.push_back(entry.first);
      return keys;
    }
    case Value::Kind::String: {
      ValueList chars;
      const Text& text = value.as_text();
      const std::string& bytes = text.bytes();
      for (std::size_t pos = 0; pos < bytes.size();) {
        const std::size_t n = utf8::sequence_length(bytes, pos);
        chars.emplace_back(text.slice(pos, pos + n));
        pos += n;
      }
      return chars;
    }
    default:
      throw TemplateError("'" + value.type_name() + "' object is not iterable");
  }
}

std::int64_t length(const Value& value) {
  switch (value.kind()) {
    case Value::Kind::Undefined:
      return 0;
    case Value::Kind::String:
      return static_cast<std::int64_t>(utf8::count(value.as_string()));
    case Value::Kind::List:
      return static_cast<std::int64_t>(value.as_list().size());
    case Value::Kind::Dict:
      return static_cast<std::int64_t>(value.as_dict().size());
    default:
      throw TemplateError("object of type '" + value.type_name() + "' has no len()");
  }
}

Params::Params(CallArgs& args, std::string what, std::vector<std::string> names)
    : what_(std::move(what)), bound_(names.size(), nullptr) {
  if (args.positional.size() > names.size())
    fail("takes at most " + std::to_string(names.size()) + " argument(s), " +
         std::to_string(args.positional.size()) + " given");
  for (std::size_t i = 0; i < args.positional.size(); ++i)
    bound_[i] = &args.positional[i];
  for (const auto& [name, value] : args.keyword) {
    std::size_t i = 0;
    while (i < names.size() && names[i] != name)
      ++i;
    if (i == names.size()) fail("got an unexpected keyword argument '" + name + "'");
    if (bound_[i]) fail("got multiple values for argument '" + name + "'");
    bound_[i] = &value;
  }
}

void Params::fail(const std::string& problem) const {
  throw TemplateError(what_ + " " + problem);
}

std::int64_t to_index(const Value& value, const std::string& what) {
  if (value.is_int() || value.is_bool()) return value.as_int();
  require_defined(value);
  throw TemplateError(what + ": '" + value.type_name() +
                      "' object cannot be interpreted as an integer");
}

namespace {

// Case pairs of Latin-1, Latin Extended-A, Greek and Cyrillic: the scripts
// where chat text meets Python's Unicode-aware upper() and lower().
char32_t upper_of(char32_t c) {
  if (c >= 'a' && c <= 'z') return c - 32;
  if (c < 0xB5) return c;
  if (c == 0xB5) return 0x39C;
  if ((c >= 0xE0 && c <= 0xFE && c != 0xF7)) return c - 32;
  if (c == 0xFF) return 0x178;
  if (c >= 0x100 && c <= 0x17F && c != 0x130 && c != 0x131 && c != 0x138 && c != 0x149 &&
      c != 0x17F) {
    const bool odd_lower = (c <= 0x137) || (c >= 0x14A && c <= 0x177);
    if (odd_lower) return (c & 1) ? c - 1 : c;
    return (c & 1) ? c : c - 1;
  }
  if (c == 0x131) return 'I';
  if (c >= 0x3B1 && c <= 0x3C9) return c == 0x3C2 ? 0x3A3 : c - 32;
  if (c >= 0x3AC && c <= 0x3AF) return c == 0x3AC ? 0x386 : c - 37;
  if (c == 0x3CC) return 0x38C;
  if (c == 0x3CD || c == 0x3CE) return c - 63;
  if (c >= 0x430 && c <= 0x44F) return c - 32;
  if (c >= 0x450 && c <= 0x45F) return c - 80;
  return c;
}

char32_t lower_of(char32_t c) {
  if (c >= 'A' && c <= 'Z') return c + 32;
  if (c < 0xC0) return c;
  if (c >= 0xC0 && c <= 0xDE && c != 0xD7) return c + 32;
  if (c == 0x178) return 0xFF;
  if (c >= 0x100 && c <= 0x17F && c != 0x130 && c != 0x131 && c != 0x138 && c != 0x149 &&
      c != 0x17F) {
    const bool even_upper = (c <= 0x137) || (c >= 0x14A && c <= 0x177);
    if (even_upper) return (c & 1) ? c : c + 1;
    return (c & 1) ? c + 1 : c;
  }
  if (c >= 0x391 && c <= 0x3A9 && c != 0x3A2) return c + 32;
  if (c == 0x386) return 0x3AC;
  if (c >= 0x388 && c <= 0x38A) return c + 37;
  if (c == 0x38C) return 0x3CC;
  if (c == 0x38E || c == 0x38F) return c + 63;
  if (c >= 0x410 && c <= 0x42F) return c + 32;
  if (c >= 0x400 && c <= 0x40F) return c + 80;
  return c;
}

template <char32_t (*Map)(char32_t)>
std::string map_case(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t pos = 0; pos < text.size();) {
    const std::size_t n = utf8::sequence_length(text, pos);
    const char32_t c = utf8::decode(text, pos);
    if (n == 1 && c >= 0x80)
      out.push_back(text[pos]);
    else if (Map == upper_of && c == 0xDF)
      out += "SS";
    else
      utf8::encode(Map(c), out);
    pos += n;
  }
  return out;
}

}  // namespace

std::string python_upper(std::string_view text) {
  return map_case<upper_of>(text);
}

std::string python_lower(std::string_view text) {
  return map_case<lower_of>(text);
}

bool is_python_space(char32_t c) {
  return c == ' ' || (c >= 0x09 && c <= 0x0D) || (c >= 0x1C && c <= 0x1F) || c == 0x85 ||
         c == 0xA0 || c == 0x1680 || (c >= 0x2000 && c <= 0x200A) || c == 0x2028 || c == 0x2029 ||
         c == 0x202F || c == 0x205F || c == 0x3000;
}

}  // namespace quire::engine::jinja
