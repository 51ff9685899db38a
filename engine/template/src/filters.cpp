// jinja2's built-in filters, with transformers' tojson.

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <set>

#include "filter_support.h"
#include "runtime.h"
#include "utf8.h"

namespace quire::engine::jinja {

namespace detail {

Value attribute_path(const Value& item, const std::string& path) {
  Value current = item;
  std::size_t begin = 0;
  while (begin <= path.size()) {
    std::size_t end = path.find('.', begin);
    if (end == std::string::npos) end = path.size();
    const std::string part = path.substr(begin, end - begin);
    if (!part.empty() && part.find_first_not_of("0123456789") == std::string::npos)
      current = get_item(current, Value(static_cast<std::int64_t>(std::stoll(part))));
    else
      current = get_item(current, Value(std::string_view(part)));
    begin = end + 1;
  }
  return current;
}

Value lowered_if(const Value& value, bool case_sensitive) {
  if (!case_sensitive && value.is_string()) return Value(python_lower(value.as_string()));
  return value;
}

}  // namespace detail

namespace {

using detail::attribute_path;
using detail::Filter;
using detail::FilterTable;
using detail::lowered_if;

Text soft_str(const Value& value) {
  return value.str();
}

Value rewritten(std::string bytes, const Text& source) {
  return Value(Text(std::move(bytes), source.any_literal()));
}

Value call_method(const Value& self, std::string_view name, CallArgs args) {
  return bind_method(self, name).as_callable().call(args);
}

Value f_trim(const Value& input, CallArgs& args) {
  Params params(args, "trim", {"chars"});
  CallArgs inner;
  if (params.has(0)) inner.positional.push_back(*params.get(0));
  return call_method(Value(soft_str(input)), "strip", std::move(inner));
}

Value f_length(const Value& input, CallArgs& args) {
  Params(args, "length", {});
  return Value(length(input));
}

Value f_tojson(const Value& input, CallArgs& args) {
  Params params(args, "tojson", {"ensure_ascii", "indent", "separators", "sort_keys"});
  if (params.has(0) && params.get(0)->truthy()) params.fail("ensure_ascii=True is not supported");
  int indent = -1;
  std::string indent_text;
  if (params.has(1) && !params.get(1)->is_none()) {
    const Value& value = *params.get(1);
    if (value.is_string()) {
      indent = 0;
      indent_text = value.as_string();
    } else {
      indent = static_cast<int>(std::clamp<std::int64_t>(to_index(value, "tojson indent"), 0, 64));
      indent_text = std::string(static_cast<std::size_t>(indent), ' ');
    }
  }
  std::string item = indent >= 0 ? "," : ", ";
  std::string key = ": ";
  if (params.has(2) && !params.get(2)->is_none()) {
    const Value& separators = *params.get(2);
    if (!separators.is_list() || separators.as_list().size() != 2 ||
        !separators.as_list()[0].is_string() || !separators.as_list()[1].is_string())
      params.fail("separators must be a pair of strings");
    item = separators.as_list()[0].as_string();
    key = separators.as_list()[1].as_string();
  }
  const bool sort = params.has(3) && params.get(3)->truthy();
  return Value(to_json(input, indent, item, key, sort, indent_text));
}

Value f_upper(const Value& input, CallArgs& args) {
  Params(args, "upper", {});
  const Text text = soft_str(input);
  return rewritten(python_upper(text.bytes()), text);
}

Value f_lower(const Value& input, CallArgs& args) {
  Params(args, "lower", {});
  const Text text = soft_str(input);
  return rewritten(python_lower(text.bytes()), text);
}

Value f_replace(const Value& input, CallArgs& args) {
  Params params(args, "replace", {"old", "new", "count"});
  if (!params.has(0) || !params.has(1)) params.fail("needs the old and the new text");
  CallArgs inner;
  inner.positional = {Value(params.get(0)->str()), Value(params.get(1)->str())};
  if (params.has(2) && !params.get(2)->is_none()) inner.positional.push_back(*params.get(2));
  return call_method(Value(soft_str(input)), "replace", std::move(inner));
}

Value f_default(const Value& input, CallArgs& args) {
  Params params(args, "default", {"default_value", "boolean"});
  const bool boolean = params.has(1) && params.get(1)->truthy();
  if (input.is_undefined() || (boolean && !input.truthy())) return params.get_or(0, Value(""));
  return input;
}

Value f_string(const Value& input, CallArgs& args) {
  Params(args, "string", {});
  return Value(soft_str(input));
}

// Python's str.splitlines boundaries (without keepends).
std::vector<std::pair<std::size_t, std::size_t>> line_ranges(const std::string& bytes) {
  std::vector<std::pair<std::size_t, std::size_t>> lines;
  std::size_t begin = 0;
  std::size_t pos = 0;
  while (pos < bytes.size()) {
    const std::size_t n = utf8::sequence_length(bytes, pos);
    const char32_t c = utf8::decode(bytes, pos);
    const bool boundary = c == '\n' || c == '\r' || c == '\v' || c == '\f' || c == 0x1C ||
                          c == 0x1D || c == 0x1E || c == 0x85 || c == 0x2028 || c == 0x2029;
    if (!boundary) {
      pos += n;
      continue;
    }
    lines.emplace_back(begin, pos);
    pos += n;
    if (c == '\r' && pos < bytes.size() && bytes[pos] == '\n') ++pos;
    begin = pos;
  }
  if (begin < bytes.size()) lines.emplace_back(begin, bytes.size());
  return lines;
}

Value f_indent(const Value& input, CallArgs& args) {
  Params params(args, "indent", {"width", "first", "blank"});
  std::string indentation(4, ' ');
  if (params.has(0)) {
    const Value& width = *params.get(0);
    indentation = width.is_string() ? width.as_string()
                                    : std::string(static_cast<std::size_t>(std::clamp<std::int64_t>(
                                                      to_index(width, "indent"), 0, 4096)),
                                                  ' ');
  }
  const bool first = params.has(1) && params.get(1)->truthy();
  const bool blank = params.has(2) && params.get(2)->truthy();
  Text text = soft_str(input);
  text.append("\n");
  const auto lines = line_ranges(text.bytes());
  Text out;
  for (std::size_t i = 0; i < lines.size(); ++i) {
    const auto [begin, end] = lines[i];
    if (i > 0) {
      out.append("\n");
      if (blank || end > begin) out.append(indentation);
    }
    out.append(text.slice(begin, end));
  }
  if (first) {
    Text prefixed(indentation);
    prefixed.append(out);
    return Value(std::move(prefixed));
  }
  return Value(std::move(out));
}

Value f_capitalize(const Value& input, CallArgs& args) {
  Params(args, "capitalize", {});
  return call_method(Value(soft_str(input)), "capitalize", {});
}

Value f_title(const Value& input, CallArgs& args) {
  Params(args, "title", {});
  const Text text = soft_str(input);
  std::string out = text.bytes();
  // jinja2 starts a word after whitespace, '-', '(', '{', '[' and '<'.
  bool word_start = true;
  for (char& c : out) {
    const bool separator = c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' ||
                           c == '\v' || c == '-' || c == '(' || c == '{' || c == '[' || c == '<';
    if (separator) {
      word_start = true;
      continue;
    }
    c = word_start ? python_upper(std::string(1, c))[0] : python_lower(std::string(1, c))[0];
    word_start = false;
  }
  return rewritten(std::move(out), text);
}

std::optional<std::int64_t> parse_int(std::string text, int base) {
  auto is_space = [](char c) { return c == ' ' || (c >= '\t' && c <= '\r'); };
  while (!text.empty() && is_space(text.back()))
    text.pop_back();
  std::size_t begin = 0;
  while (begin < text.size() && is_space(text[begin]))
    ++begin;
  text = text.substr(begin);
  std::string digits;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '_' && i > 0 && i + 1 < text.size()) continue;
    digits.push_back(text[i]);
  }
  if (digits.empty()) return std::nullopt;
  std::size_t start = (digits[0] == '-' || digits[0] == '+') ? 1 : 0;
  if (base == 0 || base == 16 || base == 8 || base == 2) {
    const std::string prefix = python_lower(digits.substr(start, 2));
    int detected = prefix == "0x" ? 16 : prefix == "0o" ? 8 : prefix == "0b" ? 2 : 0;
    if (detected != 0 && (base == 0 || base == detected)) {
      digits.erase(start, 2);
      base = detected;
    } else if (base == 0) {
      base = 10;
    }
  }
  if (start >= digits.size()) return std::nullopt;
  errno = 0;
  char* end = nullptr;
  const long long value = std::strtoll(digits.c_str(), &end, base);
  if (errno != 0 || *end != '\0' || end == digits.c_str() + start) return std::nullopt;
  return value;
}

std::optional<double> parse_float(const std::string& text) {
  char* end = nullptr;
  std::string trimmed = text;
  while (!trimmed.empty() &&
         (trimmed.back() == ' ' || trimmed.back() == '\n' || trimmed.back() == '\t'))
    trimmed.pop_back();
  if (trimmed.empty()) return std::nullopt;
  const double value = std::strtod(trimmed.c_str(), &end);
  if (*end != '\0') return std::nullopt;
  return value;
}

Value f_int(const Value& input, CallArgs& args) {
  Params params(args, "int", {"default", "base"});
  const Value fallback = params.get_or(0, Value(std::int64_t{0}));
  const int base = params.has(1) ? static_cast<int>(to_index(*params.get(1), "int base")) : 10;
  require_defined(input);
  if (input.is_int() || input.is_bool()) return Value(input.as_int());
  if (input.is_float()) {
    const double v = input.as_double();
    if (!std::isfinite(v)) return fallback;
    return Value(static_cast<std::int64_t>(v));
  }
  if (input.is_string()) {
    if (auto v = parse_int(input.as_string(), base)) return Value(*v);
    if (auto v = parse_float(input.as_string()); v && std::isfinite(*v))
      return Value(static_cast<std::int64_t>(*v));
  }
  return fallback;
}

Value f_float(const Value& input, CallArgs& args) {
  Params params(args, "float", {"default"});
  require_defined(input);
  if (input.is_number()) return Value(input.as_double());
  if (input.is_string()) {
    if (auto v = parse_float(input.as_string())) return Value(*v);
  }
  return params.get_or(0, Value(0.0));
}

Value f_abs(const Value& input, CallArgs& args) {
  Params(args, "abs", {});
  require_defined(input);
  if (input.is_float()) return Value(std::fabs(input.as_double()));
  if (input.is_number()) return input.as_int() < 0 ? negate(input) : Value(input.as_int());
  throw TemplateError("bad operand type for abs(): '" + input.type_name() + "'");
}

Value f_round(const Value& input, CallArgs& args) {
  Params params(args, "round", {"precision", "method"});
  const std::int64_t precision = params.has(0) ? to_index(*params.get(0), "round") : 0;
  const std::string method = params.has(1) ? params.get(1)->str().bytes() : "common";
  require_defined(input);
  if (!input.is_number())
    throw TemplateError("round: a number is required, not " + input.type_name());
  if (method == "common") {
    if (!input.is_float()) return Value(input.as_int());
    // printf rounds the exact binary value half to even, as Python's round does.
    char buffer[400];
    std::snprintf(buffer, sizeof buffer, "%.*f",
                  static_cast<int>(std::clamp<std::int64_t>(precision, 0, 300)), input.as_double());
    return Value(std::strtod(buffer, nullptr));
  }
  const double scale = std::pow(10.0, static_cast<double>(precision));
  if (method == "floor") return Value(std::floor(input.as_double() * scale) / scale);
  if (method == "ceil") return Value(std::ceil(input.as_double() * scale) / scale);
  params.fail("method must be 'common', 'ceil' or 'floor'");
}

Value f_wordcount(const Value& input, CallArgs& args) {
  Params(args, "wordcount", {});
  const std::string bytes = soft_str(input).bytes();
  std::int64_t count = 0;
  bool in_word = false;
  for (const char c : bytes) {
    const bool word = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                      c == '_' || static_cast<unsigned char>(c) >= 0x80;
    if (word && !in_word) ++count;
    in_word = word;
  }
  return Value(count);
}

Value f_center(const Value& input, CallArgs& args) {
  Params params(args, "center", {"width"});
  const std::int64_t width = params.has(0) ? to_index(*params.get(0), "center") : 80;
  const Text text = soft_str(input);
  const auto size = static_cast<std::int64_t>(utf8::count(text.bytes()));
  if (width <= size) return Value(text);
  const std::int64_t margin = std::min<std::int64_t>(width - size, 1 << 20);
  const std::int64_t left = margin / 2 + (margin & width & 1);
  Text out(std::string(static_cast<std::size_t>(left), ' '));
  out.append(text);
  out.append(std::string(static_cast<std::size_t>(margin - left), ' '));
  return Value(std::move(out));
}

Value f_format(const Value& input, CallArgs& args) {
  if (!args.keyword.empty()) {
    if (!args.positional.empty())
      throw TemplateError("format can't handle positional and keyword arguments at the same time");
    Dict named;
    for (const auto& [name, value] : args.keyword)
      named.set(Value(std::string_view(name)), value);
    return Value(percent_format(soft_str(input), Value::dict(std::move(named))));
  }
  return Value(percent_format(soft_str(input), Value::tuple(args.positional)));
}

Value f_truncate(const Value& input, CallArgs& args) {
  Params params(args, "truncate", {"length", "killwords", "end", "leeway"});
  const std::int64_t size = params.has(0) ? to_index(*params.get(0), "truncate") : 255;
  const bool killwords = params.has(1) && params.get(1)->truthy();
  const Text end = params.has(2) ? params.get(2)->str() : Text("...");
  const std::int64_t leeway =
      params.has(3) && !params.get(3)->is_none() ? to_index(*params.get(3), "truncate") : 5;
  const Value text(soft_str(input));
  const auto end_size = static_cast<std::int64_t>(utf8::count(end.bytes()));
  if (size < end_size) params.fail("expected length >= " + std::to_string(end_size));
  if (leeway < 0) params.fail("expected leeway >= 0");
  if (length(text) <= size + leeway) return text;
  Value kept = slice(text, Value(std::int64_t{0}), Value(size - end_size), Value::none());
  if (!killwords) {
    CallArgs inner{{Value(" "), Value(std::int64_t{1})}, {}};
    kept = call_method(kept, "rsplit", std::move(inner)).as_list().front();
  }
  Text out = kept.as_text();
  out.append(end);
  return Value(std::move(out));
}

Value f_escape(const Value& input, CallArgs& args) {
  Params(args, "escape", {});
  const Text text = soft_str(input);
  std::string out;
  for (const char c : text.bytes()) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&#34;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        out.push_back(c);
    }
  }
  return rewritten(std::move(out), text);
}

Value f_attr(const Value& input, CallArgs& args) {
  Params params(args, "attr", {"name"});
  if (!params.has(0)) params.fail("needs an attribute name");
  const std::string name = params.get(0)->str().bytes();
  require_defined(input);
  if (input.is_namespace()) {
    const Value* found = input.as_dict().find(name);
    return found ? *found : Value::undefined();
  }
  return bind_method(input, name);
}

const FilterTable& filters() {
  static const FilterTable table = [] {
    FilterTable built = {
        {"abs", f_abs},
        {"attr", f_attr},
        {"capitalize", f_capitalize},
        {"center", f_center},
        {"count", f_length},
        {"d", f_default},
        {"default", f_default},
        {"e", f_escape},
        {"escape", f_escape},
        {"float", f_float},
        {"forceescape", f_escape},
        {"format", f_format},
        {"indent", f_indent},
        {"int", f_int},
        {"length", f_length},
        {"lower", f_lower},
        {"replace", f_replace},
        {"round", f_round},
        {"safe", f_string},
        {"string", f_string},
        {"title", f_title},
        {"tojson", f_tojson},
        {"trim", f_trim},
        {"truncate", f_truncate},
        {"upper", f_upper},
        {"wordcount", f_wordcount},
    };
    detail::add_sequence_filters(built);
    return built;
  }();
  return table;
}

// jinja2 filters this interpreter does not implement: templates that name
// them parse (as in Python) and fail only when one runs.
const std::set<std::string, std::less<>> kUnsupportedFilters = {
    "filesizeformat", "groupby", "pprint",   "random", "striptags",
    "urlencode",      "urlize",  "wordwrap", "xmlattr"};

}  // namespace

NameStatus filter_status(std::string_view name) {
  if (filters().count(name) > 0) return NameStatus::Supported;
  if (kUnsupportedFilters.count(name) > 0) return NameStatus::Unsupported;
  return NameStatus::Unknown;
}

Value apply_filter(const std::string& name, const Value& input, CallArgs& args) {
  const auto it = filters().find(name);
  if (it == filters().end()) {
    if (kUnsupportedFilters.count(name) > 0)
      throw TemplateError("filter '" + name + "' is not supported", 0, "filter '" + name + "'");
    throw TemplateError("no filter named '" + name + "'", 0, "filter '" + name + "'");
  }
  return it->second(input, args);
}

}  // namespace quire::engine::jinja
