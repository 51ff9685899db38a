// Python methods of str, list and dict that templates call, bound to their
// value. Methods that would change a list or dict are refused, as jinja2's
// ImmutableSandboxedEnvironment (the one transformers uses) refuses them.

#include <algorithm>
#include <set>

#include "runtime.h"
#include "utf8.h"

namespace quire::engine::jinja {
namespace {

using Method = Value (*)(const Value& self, CallArgs& args);

Value text_value(std::string bytes, const Text& source) {
  return Value(Text(std::move(bytes), source.any_literal()));
}

const Text& string_arg(const Params& params, std::size_t index) {
  const Value* value = params.get(index);
  if (!value || !value->is_string())
    params.fail("expects a string argument, not " + (value ? value->type_name() : "nothing"));
  return value->as_text();
}

// Code points of `chars`, or Python whitespace when none are given.
bool strip_char(char32_t c, const std::vector<char32_t>* chars) {
  if (!chars) return is_python_space(c);
  return std::find(chars->begin(), chars->end(), c) != chars->end();
}

Value strip_impl(const Value& self, CallArgs& args, bool left, bool right, const char* name) {
  Params params(args, name, {"chars"});
  std::vector<char32_t> chars;
  const bool custom = params.has(0) && !params.get(0)->is_none();
  if (custom) {
    const std::string& set = string_arg(params, 0).bytes();
    for (std::size_t pos = 0; pos < set.size(); pos += utf8::sequence_length(set, pos))
      chars.push_back(utf8::decode(set, pos));
  }
  const Text& text = self.as_text();
  const std::string& bytes = text.bytes();
  std::size_t begin = 0;
  std::size_t end = bytes.size();
  if (left) {
    while (begin < end && strip_char(utf8::decode(bytes, begin), custom ? &chars : nullptr))
      begin += utf8::sequence_length(bytes, begin);
  }
  if (right) {
    const std::vector<std::size_t> offsets = utf8::offsets(bytes);
    std::size_t i = offsets.size() - 1;
    while (i > 0 && offsets[i - 1] >= begin &&
           strip_char(utf8::decode(bytes, offsets[i - 1]), custom ? &chars : nullptr))
      --i;
    end = std::max(begin, offsets[i]);
  }
  return Value(text.slice(begin, end));
}

Value str_strip(const Value& s, CallArgs& a) {
  return strip_impl(s, a, true, true, "strip()");
}
Value str_lstrip(const Value& s, CallArgs& a) {
  return strip_impl(s, a, true, false, "lstrip()");
}
Value str_rstrip(const Value& s, CallArgs& a) {
  return strip_impl(s, a, false, true, "rstrip()");
}

// Whitespace-separated words: [begin, end) byte ranges.
std::vector<std::pair<std::size_t, std::size_t>> words(const std::string& bytes) {
  std::vector<std::pair<std::size_t, std::size_t>> out;
  std::size_t pos = 0;
  while (pos < bytes.size()) {
    while (pos < bytes.size() && is_python_space(utf8::decode(bytes, pos)))
      pos += utf8::sequence_length(bytes, pos);
    if (pos >= bytes.size()) break;
    const std::size_t begin = pos;
    while (pos < bytes.size() && !is_python_space(utf8::decode(bytes, pos)))
      pos += utf8::sequence_length(bytes, pos);
    out.emplace_back(begin, pos);
  }
  return out;
}

Value split_impl(const Value& self, CallArgs& args, bool from_right) {
  Params params(args, from_right ? "rsplit()" : "split()", {"sep", "maxsplit"});
  const Text& text = self.as_text();
  const std::string& bytes = text.bytes();
  std::int64_t max = params.has(1) ? to_index(*params.get(1), "maxsplit") : -1;
  ValueList parts;
  if (!params.has(0) || params.get(0)->is_none()) {
    auto ranges = words(bytes);
    if (max >= 0 && ranges.size() > static_cast<std::size_t>(max) + 1) {
      // The unsplit remainder keeps its inner whitespace and loses the outer.
      const std::size_t keep = static_cast<std::size_t>(max);
      if (from_right) {
        const std::size_t first = ranges.size() - keep - 1;
        ranges[first].first = 0;
        ranges.erase(ranges.begin(), ranges.begin() + static_cast<std::ptrdiff_t>(first));
      } else {
        ranges[keep].second = bytes.size();
        ranges.resize(keep + 1);
      }
    }
    for (const auto& [begin, end] : ranges)
      parts.emplace_back(text.slice(begin, end));
    return Value::list(std::move(parts));
  }
  const std::string& sep = string_arg(params, 0).bytes();
  if (sep.empty()) throw TemplateError("empty separator");
  std::vector<std::pair<std::size_t, std::size_t>> ranges;
  if (!from_right) {
    std::size_t begin = 0;
    while (max != 0) {
      const std::size_t at = bytes.find(sep, begin);
      if (at == std::string::npos) break;
      ranges.emplace_back(begin, at);
      begin = at + sep.size();
      --max;
    }
    ranges.emplace_back(begin, bytes.size());
  } else {
    std::size_t end = bytes.size();
    while (max != 0 && end >= sep.size()) {
      const std::size_t at = bytes.rfind(sep, end - sep.size());
      if (at == std::string::npos) break;
      ranges.emplace_back(at + sep.size(), end);
      end = at;
      --max;
    }
    ranges.emplace_back(0, end);
    std::reverse(ranges.begin(), ranges.end());
  }
  for (const auto& [begin, end] : ranges)
    parts.emplace_back(text.slice(begin, end));
  return Value::list(std::move(parts));
}

Value str_split(const Value& s, CallArgs& a) {
  return split_impl(s, a, false);
}
Value str_rsplit(const Value& s, CallArgs& a) {
  return split_impl(s, a, true);
}

Value affix_impl(const Value& self, CallArgs& args, bool prefix) {
  Params params(args, prefix ? "startswith()" : "endswith()", {"affix", "start", "end"});
  if (!params.has(0)) params.fail("takes at least 1 argument");
  Value target = self;
  if (params.has(1) || params.has(2))
    target = slice(self, params.get_or(1, Value::none()), params.get_or(2, Value::none()),
                   Value::none());
  const std::string& bytes = target.as_string();
  ValueList options =
      params.get(0)->is_tuple() ? params.get(0)->as_list() : ValueList{*params.get(0)};
  for (const Value& option : options) {
    if (!option.is_string())
      params.fail("first arg must be str or a tuple of str, not " + option.type_name());
    const std::string& affix = option.as_string();
    if (affix.size() > bytes.size()) continue;
    if (prefix ? bytes.compare(0, affix.size(), affix) == 0
               : bytes.compare(bytes.size() - affix.size(), affix.size(), affix) == 0)
      return Value(true);
  }
  return Value(false);
}

Value str_startswith(const Value& s, CallArgs& a) {
  return affix_impl(s, a, true);
}
Value str_endswith(const Value& s, CallArgs& a) {
  return affix_impl(s, a, false);
}

Value str_upper(const Value& s, CallArgs& a) {
  Params(a, "upper()", {});
  return text_value(python_upper(s.as_string()), s.as_text());
}
Value str_lower(const Value& s, CallArgs& a) {
  Params(a, "lower()", {});
  return text_value(python_lower(s.as_string()), s.as_text());
}

bool is_ascii_letter(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

Value str_title(const Value& s, CallArgs& a) {
  Params(a, "title()", {});
  std::string out = s.as_string();
  bool previous_cased = false;
  for (char& c : out) {
    const bool letter = is_ascii_letter(c);
    if (letter)
      c = previous_cased ? python_lower(std::string(1, c))[0] : python_upper(std::string(1, c))[0];
    // Bytes of other scripts count as letters: words do not break inside them.
    previous_cased = letter || static_cast<unsigned char>(c) >= 0x80;
  }
  return text_value(std::move(out), s.as_text());
}

Value str_capitalize(const Value& s, CallArgs& a) {
  Params(a, "capitalize()", {});
  std::string out = python_lower(s.as_string());
  if (!out.empty()) out[0] = python_upper(out.substr(0, 1))[0];
  return text_value(std::move(out), s.as_text());
}

Value str_replace(const Value& s, CallArgs& a) {
  Params params(a, "replace()", {"old", "new", "count"});
  const Text& old_text = string_arg(params, 0);
  const Text& new_text = string_arg(params, 1);
  std::int64_t count = params.has(2) ? to_index(*params.get(2), "replace()") : -1;
  const Text& text = s.as_text();
  const std::string& bytes = text.bytes();
  const std::string& old = old_text.bytes();
  Text out;
  auto put_new = [&](std::size_t begin, std::size_t end) {
    const bool literal = new_text.any_literal() || old_text.any_literal() ||
                         text.any_literal_in(begin, std::max(end, begin + 1));
    out.append(new_text.bytes(), literal);
  };
  if (old.empty()) {
    std::size_t pos = 0;
    while (true) {
      if (count != 0) {
        put_new(pos, pos);
        --count;
      }
      if (pos >= bytes.size()) break;
      const std::size_t n = utf8::sequence_length(bytes, pos);
      out.append(text.slice(pos, pos + n));
      pos += n;
    }
    return Value(std::move(out));
  }
  std::size_t pos = 0;
  while (count != 0) {
    const std::size_t at = bytes.find(old, pos);
    if (at == std::string::npos) break;
    out.append(text.slice(pos, at));
    put_new(at, at + old.size());
    pos = at + old.size();
    --count;
  }
  out.append(text.slice(pos, bytes.size()));
  return Value(std::move(out));
}

// Code point index of a byte offset.
std::int64_t char_index(const std::string& bytes, std::size_t byte) {
  return static_cast<std::int64_t>(utf8::count(std::string_view(bytes).substr(0, byte)));
}

Value find_impl(const Value& s, CallArgs& a, bool from_right) {
  Params params(a, from_right ? "rfind()" : "find()", {"sub", "start", "end"});
  const std::string& sub = string_arg(params, 0).bytes();
  const std::string& bytes = s.as_string();
  const std::int64_t n = length(s);
  auto position = [&](std::size_t index, std::int64_t fallback) {
    if (!params.has(index) || params.get(index)->is_none()) return fallback;
    std::int64_t v = to_index(*params.get(index), params.what());
    if (v < 0) v += n;
    return std::clamp<std::int64_t>(v, 0, n);
  };
  const std::int64_t start = position(1, 0);
  const std::int64_t end = position(2, n);
  if (start > end) return Value(std::int64_t{-1});
  const std::vector<std::size_t> offsets = utf8::offsets(bytes);
  const std::string window = bytes.substr(
      offsets[static_cast<std::size_t>(start)],
      offsets[static_cast<std::size_t>(end)] - offsets[static_cast<std::size_t>(start)]);
  const std::size_t at = from_right ? window.rfind(sub) : window.find(sub);
  if (at == std::string::npos) return Value(std::int64_t{-1});
  return Value(start + char_index(window, at));
}

Value str_find(const Value& s, CallArgs& a) {
  return find_impl(s, a, false);
}
Value str_rfind(const Value& s, CallArgs& a) {
  return find_impl(s, a, true);
}

Value str_count(const Value& s, CallArgs& a) {
  Params params(a, "count()", {"sub"});
  const std::string& sub = string_arg(params, 0).bytes();
  const std::string& bytes = s.as_string();
  if (sub.empty()) return Value(length(s) + 1);
  std::int64_t n = 0;
  for (std::size_t at = bytes.find(sub); at != std::string::npos;
       at = bytes.find(sub, at + sub.size()))
    ++n;
  return Value(n);
}

Value str_join(const Value& s, CallArgs& a) {
  Params params(a, "join()", {"iterable"});
  if (!params.has(0)) params.fail("takes exactly one argument");
  Text out;
  bool first = true;
  for (const Value& item : iterate(*params.get(0))) {
    if (!item.is_string())
      throw TemplateError("sequence item: expected str instance, " + item.type_name() + " found");
    if (!first) out.append(s.as_text());
    first = false;
    out.append(item.as_text());
  }
  return Value(std::move(out));
}

Value str_format_method(const Value& s, CallArgs& a) {
  return Value(str_format(s.as_text(), a));
}

template <bool (*Predicate)(char32_t)>
Value all_chars(const Value& s, CallArgs& a) {
  Params(a, "str method", {});
  const std::string& bytes = s.as_string();
  if (bytes.empty()) return Value(false);
  for (std::size_t pos = 0; pos < bytes.size(); pos += utf8::sequence_length(bytes, pos)) {
    if (!Predicate(utf8::decode(bytes, pos))) return Value(false);
  }
  return Value(true);
}

bool digit(char32_t c) {
  return c >= '0' && c <= '9';
}
bool alpha(char32_t c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c >= 0xC0;
}
bool alnum(char32_t c) {
  return digit(c) || alpha(c);
}

Value cased_check(const Value& s, bool want_upper) {
  bool any = false;
  for (const char c : s.as_string()) {
    if (c >= 'a' && c <= 'z') {
      if (want_upper) return Value(false);
      any = true;
    } else if (c >= 'A' && c <= 'Z') {
      if (!want_upper) return Value(false);
      any = true;
    }
  }
  return Value(any);
}

Value str_islower(const Value& s, CallArgs& a) {
  Params(a, "islower()", {});
  return cased_check(s, false);
}
Value str_isupper(const Value& s, CallArgs& a) {
  Params(a, "isupper()", {});
  return cased_check(s, true);
}

Value str_removeprefix(const Value& s, CallArgs& a) {
  Params params(a, "removeprefix()", {"prefix"});
  const std::string& affix = string_arg(params, 0).bytes();
  const std::string& bytes = s.as_string();
  if (bytes.compare(0, affix.size(), affix) == 0 && affix.size() <= bytes.size())
    return Value(s.as_text().slice(affix.size(), bytes.size()));
  return s;
}

Value str_removesuffix(const Value& s, CallArgs& a) {
  Params params(a, "removesuffix()", {"suffix"});
  const std::string& affix = string_arg(params, 0).bytes();
  const std::string& bytes = s.as_string();
  if (!affix.empty() && affix.size() <= bytes.size() &&
      bytes.compare(bytes.size() - affix.size(), affix.size(), affix) == 0)
    return Value(s.as_text().slice(0, bytes.size() - affix.size()));
  return s;
}

Value str_splitlines(const Value& s, CallArgs& a) {
  Params(a, "splitlines()", {});
  const Text& text = s.as_text();
  const std::string& bytes = text.bytes();
  ValueList lines;
  std::size_t begin = 0;
  for (std::size_t i = 0; i < bytes.size(); ++i) {
    if (bytes[i] == '\n' || bytes[i] == '\r') {
      lines.emplace_back(text.slice(begin, i));
      if (bytes[i] == '\r' && i + 1 < bytes.size() && bytes[i + 1] == '\n') ++i;
      begin = i + 1;
    }
  }
  if (begin < bytes.size()) lines.emplace_back(text.slice(begin, bytes.size()));
  return Value::list(std::move(lines));
}

Value list_index(const Value& self, CallArgs& a) {
  Params params(a, "index()", {"value"});
  if (!params.has(0)) params.fail("takes exactly one argument");
  const ValueList& items = self.as_list();
  for (std::size_t i = 0; i < items.size(); ++i) {
    if (items[i] == *params.get(0)) return Value(static_cast<std::int64_t>(i));
  }
  throw TemplateError(params.get(0)->repr().bytes() + " is not in list");
}

Value list_count(const Value& self, CallArgs& a) {
  Params params(a, "count()", {"value"});
  if (!params.has(0)) params.fail("takes exactly one argument");
  std::int64_t n = 0;
  for (const Value& item : self.as_list())
    n += item == *params.get(0) ? 1 : 0;
  return Value(n);
}

Value list_pop(const Value& self, CallArgs& a) {
  Params params(a, "pop()", {"index"});
  ValueList& items = self.mutable_list();
  if (items.empty()) throw TemplateError("pop from empty list");
  std::int64_t index = params.has(0) ? to_index(*params.get(0), "pop()") : -1;
  const auto size = static_cast<std::int64_t>(items.size());
  if (index < 0) index += size;
  if (index < 0 || index >= size) throw TemplateError("pop index out of range");
  Value item = items[static_cast<std::size_t>(index)];
  items.erase(items.begin() + index);
  return item;
}

Value list_clear(const Value& self, CallArgs& a) {
  Params(a, "clear()", {});
  self.mutable_list().clear();
  return Value::none();
}

Value dict_get(const Value& self, CallArgs& a) {
  Params params(a, "get()", {"key", "default"});
  if (!params.has(0)) params.fail("expected at least 1 argument");
  const Value* found = self.as_dict().find(*params.get(0));
  return found ? *found : params.get_or(1, Value::none());
}

Value dict_items(const Value& self, CallArgs& a) {
  Params(a, "items()", {});
  ValueList items;
  for (const auto& [key, value] : self.as_dict().entries())
    items.push_back(Value::tuple({key, value}));
  return Value::list(std::move(items));
}

Value dict_keys(const Value& self, CallArgs& a) {
  Params(a, "keys()", {});
  return Value::list(iterate(self));
}

Value dict_values(const Value& self, CallArgs& a) {
  Params(a, "values()", {});
  ValueList values;
  for (const auto& entry : self.as_dict().entries())
    values.push_back(entry.second);
  return Value::list(std::move(values));
}

Value dict_copy(const Value& self, CallArgs& a) {
  Params(a, "copy()", {});
  return Value::dict(self.as_dict());
}

struct MethodEntry {
  const char* name;
  Method method;
};

const MethodEntry kStringMethods[] = {
    {"strip", str_strip},
    {"lstrip", str_lstrip},
    {"rstrip", str_rstrip},
    {"split", str_split},
    {"rsplit", str_rsplit},
    {"startswith", str_startswith},
    {"endswith", str_endswith},
    {"upper", str_upper},
    {"lower", str_lower},
    {"title", str_title},
    {"capitalize", str_capitalize},
    {"replace", str_replace},
    {"find", str_find},
    {"rfind", str_rfind},
    {"count", str_count},
    {"join", str_join},
    {"format", str_format_method},
    {"isdigit", all_chars<digit>},
    {"isnumeric", all_chars<digit>},
    {"isdecimal", all_chars<digit>},
    {"isalpha", all_chars<alpha>},
    {"isalnum", all_chars<alnum>},
    {"isspace", all_chars<is_python_space>},
    {"islower", str_islower},
    {"isupper", str_isupper},
    {"removeprefix", str_removeprefix},
    {"removesuffix", str_removesuffix},
    {"splitlines", str_splitlines},
};

const MethodEntry kListMethods[] = {
    {"index", list_index}, {"count", list_count}, {"pop", list_pop}, {"clear", list_clear}};
const MethodEntry kTupleMethods[] = {{"index", list_index}, {"count", list_count}};

const MethodEntry kDictMethods[] = {{"get", dict_get},
                                    {"items", dict_items},
                                    {"keys", dict_keys},
                                    {"values", dict_values},
                                    {"copy", dict_copy}};

// jinja2's sandbox refuses these (it lets pop and clear through).
const std::set<std::string_view> kListMutators = {"append", "extend",  "insert",
                                                  "remove", "reverse", "sort"};
const std::set<std::string_view> kDictMutators = {"update", "pop", "popitem", "setdefault",
                                                  "clear"};

template <std::size_t N>
Value find_method(const MethodEntry (&table)[N], const Value& self, std::string_view name) {
  for (const MethodEntry& entry : table) {
    if (name == entry.name) {
      const Method method = entry.method;
      return Value::function(std::string(name),
                             [self, method](CallArgs& args) { return method(self, args); });
    }
  }
  return Value::undefined();
}

Value unsafe(const Value& self, std::string_view name) {
  std::string problem = "access to attribute '" + std::string(name) + "' of '" + self.type_name() +
                        "' object is unsafe.";
  return Value::function(std::string(name),
                         [problem](CallArgs&) -> Value { throw TemplateError(problem); });
}

}  // namespace

Value bind_method(const Value& self, std::string_view name) {
  if (self.is_string()) return find_method(kStringMethods, self, name);
  if (self.is_list()) {
    if (self.is_tuple()) return find_method(kTupleMethods, self, name);
    if (kListMutators.count(name) > 0) return unsafe(self, name);
    return find_method(kListMethods, self, name);
  }
  if (self.is_dict()) {
    if (kDictMutators.count(name) > 0) return unsafe(self, name);
    return find_method(kDictMethods, self, name);
  }
  return Value::undefined();
}

}  // namespace quire::engine::jinja
