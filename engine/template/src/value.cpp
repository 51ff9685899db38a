#include "quire/engine/template/value.h"

#include <charconv>
#include <cmath>
#include <cstdio>

#include "quire/engine/template/error.h"
#include "utf8.h"

namespace quire::engine::jinja {

Value::Value() : storage_(UndefinedState{}) {}
Value::Value(Storage storage, bool flag) : storage_(std::move(storage)), flag_(flag) {}
Value Value::undefined(std::string hint) {
  return Value(UndefinedState{std::make_shared<const std::string>(std::move(hint))});
}
Value Value::none() {
  return Value(Storage(nullptr));
}
Value::Value(bool value) : storage_(value) {}
Value::Value(std::int64_t value) : storage_(value) {}
Value::Value(int value) : storage_(static_cast<std::int64_t>(value)) {}
Value::Value(double value) : storage_(value) {}
Value::Value(Text text) : storage_(std::make_shared<const Text>(std::move(text))) {}
Value::Value(std::string_view bytes, bool literal)
    : storage_(std::make_shared<const Text>(std::string(bytes), literal)) {}
Value::Value(const char* bytes) : Value(std::string_view(bytes)) {}
Value Value::list(ValueList items) {
  return Value(Storage(std::make_shared<ValueList>(std::move(items))));
}
Value Value::tuple(ValueList items) {
  return Value(Storage(std::make_shared<ValueList>(std::move(items))), true);
}
Value Value::dict(Dict entries) {
  return Value(Storage(std::make_shared<Dict>(std::move(entries))));
}
Value Value::make_namespace(Dict attributes) {
  return Value(Storage(std::make_shared<Dict>(std::move(attributes))), true);
}
Value Value::function(std::string name, std::function<Value(CallArgs&)> call) {
  return Value(
      Storage(std::make_shared<const Callable>(Callable{std::move(name), std::move(call)})));
}

Value::Kind Value::kind() const {
  switch (storage_.index()) {
    case 0:
      return Kind::Undefined;
    case 1:
      return Kind::None;
    case 2:
      return Kind::Bool;
    case 3:
      return Kind::Int;
    case 4:
      return Kind::Float;
    case 5:
      return Kind::String;
    case 6:
      return Kind::List;
    case 7:
      return flag_ ? Kind::Namespace : Kind::Dict;
    default:
      return Kind::Callable;
  }
}

bool Value::is_number() const {
  return is_bool() || is_int() || is_float();
}
bool Value::is_tuple() const {
  return is_list() && flag_;
}

bool Value::as_bool() const {
  return std::get<bool>(storage_);
}
std::int64_t Value::as_int() const {
  if (is_bool()) return as_bool() ? 1 : 0;
  return std::get<std::int64_t>(storage_);
}
double Value::as_double() const {
  if (is_float()) return std::get<double>(storage_);
  return static_cast<double>(as_int());
}
const Text& Value::as_text() const {
  return *std::get<std::shared_ptr<const Text>>(storage_);
}
const ValueList& Value::as_list() const {
  return *std::get<std::shared_ptr<ValueList>>(storage_);
}
ValueList& Value::mutable_list() const {
  return *std::get<std::shared_ptr<ValueList>>(storage_);
}
Dict& Value::as_dict() const {
  return *std::get<std::shared_ptr<Dict>>(storage_);
}
const Callable& Value::as_callable() const {
  return *std::get<std::shared_ptr<const Callable>>(storage_);
}
const std::string& Value::undefined_hint() const {
  static const std::string empty;
  const auto& hint = std::get<UndefinedState>(storage_).hint;
  return hint ? *hint : empty;
}

bool Value::truthy() const {
  switch (kind()) {
    case Kind::Undefined:
    case Kind::None:
      return false;
    case Kind::Bool:
      return as_bool();
    case Kind::Int:
      return as_int() != 0;
    case Kind::Float:
      return as_double() != 0.0;
    case Kind::String:
      return !as_string().empty();
    case Kind::List:
      return !as_list().empty();
    case Kind::Dict:
      return !as_dict().empty();
    default:
      return true;
  }
}

std::string Value::type_name() const {
  switch (kind()) {
    case Kind::Undefined:
      return "Undefined";
    case Kind::None:
      return "NoneType";
    case Kind::Bool:
      return "bool";
    case Kind::Int:
      return "int";
    case Kind::Float:
      return "float";
    case Kind::String:
      return "str";
    case Kind::List:
      return flag_ ? "tuple" : "list";
    case Kind::Dict:
      return "dict";
    case Kind::Namespace:
      return "Namespace";
    default:
      return "function";
  }
}

std::string python_float_repr(double value) {
  if (std::isnan(value)) return "nan";
  if (std::isinf(value)) return value < 0 ? "-inf" : "inf";
  if (value == 0.0) return std::signbit(value) ? "-0.0" : "0.0";
  char buffer[64];
  const auto result =
      std::to_chars(buffer, buffer + sizeof buffer, value, std::chars_format::scientific);
  const std::string text(buffer, result.ptr);
  const bool negative = text[0] == '-';
  const std::size_t e = text.find('e');
  std::string digits;
  for (std::size_t i = negative ? 1 : 0; i < e; ++i) {
    if (text[i] != '.') digits.push_back(text[i]);
  }
  const int exponent = std::stoi(text.substr(e + 1));
  std::string out = negative ? "-" : "";
  if (exponent >= -4 && exponent < 16) {
    if (exponent >= 0) {
      const auto int_digits = static_cast<std::size_t>(exponent) + 1;
      while (digits.size() < int_digits)
        digits.push_back('0');
      out += digits.substr(0, int_digits);
      out += '.';
      out += digits.size() > int_digits ? digits.substr(int_digits) : "0";
    } else {
      out += "0.";
      out.append(static_cast<std::size_t>(-exponent - 1), '0');
      out += digits;
    }
    return out;
  }
  out += digits.substr(0, 1);
  if (digits.size() > 1) out += "." + digits.substr(1);
  char exponent_text[16];
  std::snprintf(exponent_text, sizeof exponent_text, "e%c%02d", exponent < 0 ? '-' : '+',
                std::abs(exponent));
  return out + exponent_text;
}

namespace {

// Python's str.isprintable, for the characters chat text meets: controls,
// format characters, separators other than the space, private use.
bool printable(char32_t c) {
  if (c < 0x20 || (c >= 0x7F && c <= 0xA0) || c == 0xAD) return false;
  if ((c >= 0x600 && c <= 0x605) || c == 0x61C || c == 0x6DD || c == 0x70F || c == 0x180E ||
      c == 0x1680)
    return false;
  if ((c >= 0x2000 && c <= 0x200F) || (c >= 0x2028 && c <= 0x202F) ||
      (c >= 0x205F && c <= 0x206F) || c == 0x3000 || c == 0xFEFF)
    return false;
  if ((c >= 0xD800 && c <= 0xF8FF) || (c >= 0xFFF9 && c <= 0xFFFB) || c == 0xFFFE || c == 0xFFFF ||
      c >= 0xF0000)
    return false;
  return true;
}

std::string repr_string(std::string_view s) {
  const bool has_single = s.find('\'') != std::string_view::npos;
  const bool has_double = s.find('"') != std::string_view::npos;
  const char quote = has_single && !has_double ? '"' : '\'';
  std::string out(1, quote);
  for (std::size_t pos = 0; pos < s.size();) {
    const std::size_t length = utf8::sequence_length(s, pos);
    const char32_t c = utf8::decode(s, pos);
    if (c == static_cast<char32_t>(quote) || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\r') {
      out += "\\r";
    } else if (c == '\t') {
      out += "\\t";
    } else if (length == 1 && c >= 0x80) {
      // A byte that is not UTF-8: Python would never hold it; show it escaped.
      char escaped[16];
      std::snprintf(escaped, sizeof escaped, "\\x%02x", static_cast<unsigned>(c));
      out += escaped;
    } else if (!printable(c)) {
      char escaped[16];
      if (c < 0x100)
        std::snprintf(escaped, sizeof escaped, "\\x%02x", static_cast<unsigned>(c));
      else if (c < 0x10000)
        std::snprintf(escaped, sizeof escaped, "\\u%04x", static_cast<unsigned>(c));
      else
        std::snprintf(escaped, sizeof escaped, "\\U%08x", static_cast<unsigned>(c));
      out += escaped;
    } else {
      out.append(s.substr(pos, length));
    }
    pos += length;
  }
  out += quote;
  return out;
}

// Containers nest this deep at most when printed: a namespace may hold itself.
constexpr int kMaxPrintDepth = 200;

Text container_text(const Value& value) {
  thread_local int depth = 0;
  if (depth >= kMaxPrintDepth) throw TemplateError("a value nests too deeply to print");
  struct Nesting {
    Nesting() { ++depth; }
    ~Nesting() { --depth; }
  } nesting;
  Text out;
  if (value.is_list()) {
    const ValueList& items = value.as_list();
    out.append(value.is_tuple() ? "(" : "[");
    for (std::size_t i = 0; i < items.size(); ++i) {
      if (i > 0) out.append(", ");
      out.append(items[i].repr());
    }
    if (value.is_tuple() && items.size() == 1) out.append(",");
    out.append(value.is_tuple() ? ")" : "]");
    return out;
  }
  if (value.is_namespace()) out.append("<Namespace ");
  out.append("{");
  bool first = true;
  for (const auto& [key, item] : value.as_dict().entries()) {
    if (!first) out.append(", ");
    first = false;
    out.append(key.repr());
    out.append(": ");
    out.append(item.repr());
  }
  out.append("}");
  if (value.is_namespace()) out.append(">");
  return out;
}

}  // namespace

Text Value::str() const {
  switch (kind()) {
    case Kind::Undefined:
      return Text();
    case Kind::None:
      return Text("None");
    case Kind::Bool:
      return Text(as_bool() ? "True" : "False");
    case Kind::Int:
      return Text(std::to_string(as_int()));
    case Kind::Float:
      return Text(python_float_repr(as_double()));
    case Kind::String:
      return as_text();
    case Kind::List:
    case Kind::Dict:
    case Kind::Namespace:
      return container_text(*this);
    default:
      return Text("<function " + as_callable().name + ">");
  }
}

Text Value::repr() const {
  if (is_string()) return Text(repr_string(as_string()), as_text().any_literal());
  if (is_undefined()) return Text("Undefined");
  return str();
}

bool operator==(const Value& a, const Value& b) {
  using Kind = Value::Kind;
  if (a.is_number() && b.is_number()) {
    if (a.is_float() || b.is_float()) return a.as_double() == b.as_double();
    return a.as_int() == b.as_int();
  }
  if (a.kind() != b.kind()) return false;
  switch (a.kind()) {
    case Kind::Undefined:
    case Kind::None:
      return true;
    case Kind::String:
      return a.as_string() == b.as_string();
    case Kind::List: {
      if (a.is_tuple() != b.is_tuple()) return false;
      const ValueList& x = a.as_list();
      const ValueList& y = b.as_list();
      if (x.size() != y.size()) return false;
      for (std::size_t i = 0; i < x.size(); ++i) {
        if (!(x[i] == y[i])) return false;
      }
      return true;
    }
    case Kind::Dict: {
      const Dict& x = a.as_dict();
      const Dict& y = b.as_dict();
      if (x.size() != y.size()) return false;
      for (const auto& [key, value] : x.entries()) {
        const Value* other = y.find(key);
        if (other == nullptr || !(*other == value)) return false;
      }
      return true;
    }
    case Kind::Namespace:
      return &a.as_dict() == &b.as_dict();
    case Kind::Callable:
      return &a.as_callable() == &b.as_callable();
    default:
      return false;
  }
}

bool python_less(const Value& a, const Value& b) {
  if (a.is_number() && b.is_number()) {
    if (a.is_float() || b.is_float()) return a.as_double() < b.as_double();
    return a.as_int() < b.as_int();
  }
  if (a.is_string() && b.is_string()) return a.as_string() < b.as_string();
  if (a.is_list() && b.is_list() && a.is_tuple() == b.is_tuple()) {
    const ValueList& x = a.as_list();
    const ValueList& y = b.as_list();
    for (std::size_t i = 0; i < x.size() && i < y.size(); ++i) {
      if (!(x[i] == y[i])) return python_less(x[i], y[i]);
    }
    return x.size() < y.size();
  }
  throw TemplateError("'<' not supported between instances of '" + a.type_name() + "' and '" +
                      b.type_name() + "'");
}

const Value* Dict::find(const Value& key) const {
  for (const Entry& entry : entries_) {
    if (entry.first == key) return &entry.second;
  }
  return nullptr;
}

const Value* Dict::find(std::string_view key) const {
  for (const Entry& entry : entries_) {
    if (entry.first.is_string() && entry.first.as_string() == key) return &entry.second;
  }
  return nullptr;
}

void Dict::set(Value key, Value value) {
  for (Entry& entry : entries_) {
    if (entry.first == key) {
      entry.second = std::move(value);
      return;
    }
  }
  entries_.emplace_back(std::move(key), std::move(value));
}

}  // namespace quire::engine::jinja
