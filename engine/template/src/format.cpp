// Python's two string formatting languages: printf-style `format % args`
// (behind jinja2's format filter) and str.format.

#include <cmath>
#include <cstdio>

#include "runtime.h"
#include "utf8.h"

namespace quire::engine::jinja {
namespace {

struct Spec {
  char fill = ' ';
  char align = '\0';  // < > ^ =
  char sign = '-';    // + - space
  bool alternate = false;
  bool zero = false;
  int width = -1;
  int precision = -1;
  char type = '\0';
  bool grouping = false;  // "," in str.format: thousands separators
};

std::string grouped(const std::string& digits) {
  std::string out;
  const std::size_t n = digits.size();
  for (std::size_t i = 0; i < n; ++i) {
    if (i > 0 && (n - i) % 3 == 0) out.push_back(',');
    out.push_back(digits[i]);
  }
  return out;
}

std::string pad(std::string body, const Spec& spec, bool numeric) {
  const auto width = static_cast<std::size_t>(std::max(spec.width, 0));
  const std::size_t length = utf8::count(body);
  if (length >= width) return body;
  const std::size_t missing = width - length;
  char align = spec.align != '\0' ? spec.align : (numeric ? '>' : '<');
  char fill = spec.fill;
  if (spec.zero && spec.align == '\0' && numeric) {
    align = '=';
    fill = '0';
  }
  if (align == '<') return body + std::string(missing, fill);
  if (align == '^')
    return std::string(missing / 2, fill) + body + std::string(missing - missing / 2, fill);
  if (align == '=' && !body.empty() && (body[0] == '-' || body[0] == '+' || body[0] == ' '))
    return body.substr(0, 1) + std::string(missing, fill) + body.substr(1);
  return std::string(missing, fill) + body;
}

std::string signed_text(bool negative, std::string digits, const Spec& spec) {
  if (negative) return "-" + digits;
  if (spec.sign == '+') return "+" + digits;
  if (spec.sign == ' ') return " " + digits;
  return digits;
}

std::string format_integer(std::int64_t value, const Spec& spec) {
  const bool negative = value < 0;
  const unsigned long long magnitude = negative ? 0ULL - static_cast<unsigned long long>(value)
                                                : static_cast<unsigned long long>(value);
  char buffer[80];
  const char type = spec.type == '\0' ? 'd' : spec.type;
  if (type == 'x')
    std::snprintf(buffer, sizeof buffer, spec.alternate ? "0x%llx" : "%llx", magnitude);
  else if (type == 'X')
    std::snprintf(buffer, sizeof buffer, spec.alternate ? "0X%llX" : "%llX", magnitude);
  else if (type == 'o')
    std::snprintf(buffer, sizeof buffer, spec.alternate ? "0o%llo" : "%llo", magnitude);
  else
    std::snprintf(buffer, sizeof buffer, "%llu", magnitude);
  std::string digits = buffer;
  if (spec.precision >= 0 && static_cast<std::size_t>(spec.precision) > digits.size())
    digits.insert(0, static_cast<std::size_t>(spec.precision) - digits.size(), '0');
  if (spec.grouping && type == 'd') digits = grouped(digits);
  return signed_text(negative, digits, spec);
}

std::string format_float(double value, const Spec& spec) {
  char type = spec.type;
  if (std::isnan(value) || std::isinf(value)) {
    std::string text = std::isnan(value) ? "nan" : "inf";
    if (type == 'F' || type == 'E' || type == 'G') text = python_upper(text);
    return signed_text(std::signbit(value) && !std::isnan(value), text, spec);
  }
  if (type == '\0' && spec.precision < 0) {
    std::string text = python_float_repr(std::fabs(value));
    return signed_text(std::signbit(value), text, spec);
  }
  if (type == '\0') type = 'g';
  if (type == '%') {
    value *= 100;
    type = 'f';
  }
  const int precision = spec.precision >= 0 ? spec.precision : 6;
  char format[16];
  std::snprintf(format, sizeof format, "%%%s.%d%c", spec.alternate ? "#" : "", precision, type);
  char buffer[512];
  std::snprintf(buffer, sizeof buffer, format, std::fabs(value));
  std::string text = buffer;
  if (spec.type == '%') text += "%";
  return signed_text(std::signbit(value), text, spec);
}

// Formats one value under a spec; `percent` selects printf-style rules.
Text format_value(const Value& value, const Spec& spec, bool percent) {
  const char type = spec.type;
  if (type == 's' || (type == '\0' && !value.is_number()) || type == 'r' || type == 'a') {
    Text text = type == 'r' || type == 'a' ? value.repr() : value.str();
    if (spec.precision < 0 && spec.width < 0) return text;
    std::string bytes = text.bytes();
    if (spec.precision >= 0) {
      const std::vector<std::size_t> offsets = utf8::offsets(bytes);
      const auto keep =
          std::min<std::size_t>(static_cast<std::size_t>(spec.precision), offsets.size() - 1);
      bytes.resize(offsets[keep]);
    }
    Spec plain = spec;
    plain.zero = false;
    return Text(pad(std::move(bytes), plain, false), text.any_literal());
  }
  if (type == 'c') {
    if (value.is_string()) return value.as_text();
    std::string out;
    utf8::encode(static_cast<char32_t>(to_index(value, "%c")), out);
    return Text(pad(std::move(out), spec, false));
  }
  const bool integer_type = type == 'd' || type == 'i' || type == 'x' || type == 'X' ||
                            type == 'o' || type == 'n' || type == 'b';
  if (!value.is_number()) {
    require_defined(value);
    if (percent)
      throw TemplateError(std::string("%") + type + " format: a real number is required, not " +
                          value.type_name());
    throw TemplateError(std::string("Unknown format code '") + type + "' for object of type '" +
                        value.type_name() + "'");
  }
  if (integer_type) {
    if (value.is_float() && !percent)
      throw TemplateError(std::string("Unknown format code '") + type +
                          "' for object of type 'float'");
    const std::int64_t number =
        value.is_float() ? static_cast<std::int64_t>(value.as_double()) : value.as_int();
    Spec integer = spec;
    if (integer.type == 'i' || integer.type == 'n') integer.type = 'd';
    return Text(pad(format_integer(number, integer), spec, true));
  }
  if (type == '\0' && !value.is_float())
    return Text(pad(format_integer(value.as_int(), spec), spec, true));
  return Text(pad(format_float(value.as_double(), spec), spec, true));
}

}  // namespace

Text percent_format(const Text& format, const Value& args) {
  const std::string& bytes = format.bytes();
  ValueList positional;
  const Dict* named = nullptr;
  if (args.is_tuple())
    positional = args.as_list();
  else if (args.is_dict())
    named = &args.as_dict();
  else
    positional.push_back(args);
  if (named) positional.push_back(args);
  std::size_t next = 0;
  bool used_named = false;
  Text out;
  std::size_t literal_begin = 0;
  for (std::size_t i = 0; i < bytes.size(); ++i) {
    if (bytes[i] != '%') continue;
    out.append(format.slice(literal_begin, i));
    ++i;
    if (i >= bytes.size()) throw TemplateError("incomplete format");
    const Value* value = nullptr;
    if (bytes[i] == '(') {
      const std::size_t close = bytes.find(')', i);
      if (close == std::string::npos || !named) throw TemplateError("format requires a mapping");
      value = named->find(std::string_view(bytes).substr(i + 1, close - i - 1));
      if (!value)
        throw TemplateError("format key " + bytes.substr(i + 1, close - i - 1) + " missing");
      used_named = true;
      i = close + 1;
    }
    Spec spec;
    for (; i < bytes.size(); ++i) {
      const char c = bytes[i];
      if (c == '-')
        spec.align = '<';
      else if (c == '0')
        spec.zero = true;
      else if (c == '+')
        spec.sign = '+';
      else if (c == ' ' && spec.sign != '+')
        spec.sign = ' ';
      else if (c == '#')
        spec.alternate = true;
      else
        break;
    }
    // Widths and precisions past a million characters are refused before they
    // overflow (Python runs out of memory there).
    constexpr int kMaxField = 1 << 20;
    auto digit = [&](int field) {
      field = field * 10 + (bytes[i++] - '0');
      if (field > kMaxField) throw TemplateError("format width or precision too large");
      return field;
    };
    while (i < bytes.size() && bytes[i] >= '0' && bytes[i] <= '9')
      spec.width = digit(std::max(spec.width, 0));
    if (i < bytes.size() && bytes[i] == '.') {
      spec.precision = 0;
      ++i;
      while (i < bytes.size() && bytes[i] >= '0' && bytes[i] <= '9')
        spec.precision = digit(spec.precision);
    }
    if (i >= bytes.size()) throw TemplateError("incomplete format");
    spec.type = bytes[i];
    literal_begin = i + 1;
    if (spec.type == '%') {
      out.append("%");
      continue;
    }
    if (std::string("sradiouxXeEfFgGc").find(spec.type) == std::string::npos)
      throw TemplateError(std::string("unsupported format character '") + spec.type + "'");
    if (!value) {
      if (next >= positional.size() || named)
        throw TemplateError("not enough arguments for format string");
      value = &positional[next++];
    }
    if (spec.align == '<') spec.zero = false;
    out.append(format_value(*value, spec, true));
  }
  out.append(format.slice(literal_begin, bytes.size()));
  if (!named && next < positional.size())
    throw TemplateError("not all arguments converted during string formatting");
  (void)used_named;
  return out;
}

namespace {

Spec parse_spec(std::string_view text) {
  Spec spec;
  std::size_t i = 0;
  auto is_align = [](char c) { return c == '<' || c == '>' || c == '^' || c == '='; };
  if (text.size() >= 2 && is_align(text[1])) {
    spec.fill = text[0];
    spec.align = text[1];
    i = 2;
  } else if (!text.empty() && is_align(text[0])) {
    spec.align = text[0];
    i = 1;
  }
  if (i < text.size() && (text[i] == '+' || text[i] == '-' || text[i] == ' '))
    spec.sign = text[i++];
  if (i < text.size() && text[i] == '#') {
    spec.alternate = true;
    ++i;
  }
  if (i < text.size() && text[i] == '0') {
    spec.zero = true;
    ++i;
  }
  while (i < text.size() && text[i] >= '0' && text[i] <= '9')
    spec.width = std::max(spec.width, 0) * 10 + (text[i++] - '0');
  if (i < text.size() && text[i] == ',') {
    spec.grouping = true;
    ++i;
  }
  if (i < text.size() && text[i] == '.') {
    spec.precision = 0;
    ++i;
    while (i < text.size() && text[i] >= '0' && text[i] <= '9')
      spec.precision = spec.precision * 10 + (text[i++] - '0');
  }
  if (i < text.size()) spec.type = text[i++];
  if (i != text.size()) throw TemplateError("invalid format specifier");
  return spec;
}

}  // namespace

Text str_format(const Text& format, const CallArgs& args) {
  const std::string& bytes = format.bytes();
  Text out;
  std::size_t automatic = 0;
  std::size_t literal_begin = 0;
  for (std::size_t i = 0; i < bytes.size(); ++i) {
    if (bytes[i] == '}') {
      if (i + 1 < bytes.size() && bytes[i + 1] == '}') {
        out.append(format.slice(literal_begin, i + 1));
        literal_begin = ++i + 1;
        continue;
      }
      throw TemplateError("Single '}' encountered in format string");
    }
    if (bytes[i] != '{') continue;
    if (i + 1 < bytes.size() && bytes[i + 1] == '{') {
      out.append(format.slice(literal_begin, i + 1));
      literal_begin = ++i + 1;
      continue;
    }
    out.append(format.slice(literal_begin, i));
    const std::size_t close = bytes.find('}', i);
    if (close == std::string::npos) throw TemplateError("expected '}' before end of string");
    std::string field = bytes.substr(i + 1, close - i - 1);
    std::string spec_text;
    char conversion = '\0';
    if (const std::size_t colon = field.find(':'); colon != std::string::npos) {
      spec_text = field.substr(colon + 1);
      field.resize(colon);
    }
    if (const std::size_t bang = field.find('!'); bang != std::string::npos) {
      if (bang + 2 != field.size()) throw TemplateError("invalid conversion in format string");
      conversion = field[bang + 1];
      field.resize(bang);
    }
    const Value* value = nullptr;
    if (field.empty()) {
      if (automatic >= args.positional.size())
        throw TemplateError("Replacement index " + std::to_string(automatic) +
                            " out of range for positional args tuple");
      value = &args.positional[automatic++];
    } else if (field.find_first_not_of("0123456789") == std::string::npos) {
      const std::size_t index = std::stoul(field);
      if (index >= args.positional.size())
        throw TemplateError("Replacement index " + field +
                            " out of range for positional args tuple");
      value = &args.positional[index];
    } else {
      for (const auto& [name, v] : args.keyword) {
        if (name == field) value = &v;
      }
      if (!value) throw TemplateError("'" + field + "'");
    }
    Spec spec = parse_spec(spec_text);
    Value converted = *value;
    if (conversion == 'r' || conversion == 'a')
      converted = Value(value->repr());
    else if (conversion == 's')
      converted = Value(value->str());
    out.append(format_value(converted, spec, false));
    literal_begin = close + 1;
    i = close;
  }
  out.append(format.slice(literal_begin, bytes.size()));
  return out;
}

}  // namespace quire::engine::jinja
