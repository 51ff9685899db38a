// jinja2's filters over lists and dicts: join, first, last, list, map, the
// select family, items, dictsort, unique, sort, reverse, sum, min, max, batch
// and slice.

#include <algorithm>
#include <cmath>
#include <set>

#include "filter_support.h"
#include "runtime.h"

namespace quire::engine::jinja::detail {
namespace {

Value f_join(const Value& input, CallArgs& args) {
  Params params(args, "join", {"d", "attribute"});
  const Text separator = params.has(0) ? params.get(0)->str() : Text();
  const bool by_attribute = params.has(1) && !params.get(1)->is_none();
  Text out;
  bool first = true;
  for (const Value& item : iterate(input)) {
    if (!first) out.append(separator);
    first = false;
    out.append((by_attribute ? attribute_path(item, params.get(1)->str().bytes()) : item).str());
  }
  return Value(std::move(out));
}

Value f_first(const Value& input, CallArgs& args) {
  Params(args, "first", {});
  const ValueList items = iterate(input);
  if (items.empty()) return Value::undefined("No first item, sequence was empty.");
  return items.front();
}

Value f_last(const Value& input, CallArgs& args) {
  Params(args, "last", {});
  require_defined(input);
  const ValueList items = iterate(input);
  if (items.empty()) return Value::undefined("No last item, sequence was empty.");
  return items.back();
}

Value f_list(const Value& input, CallArgs& args) {
  Params(args, "list", {});
  return Value::list(iterate(input));
}

Value f_map(const Value& input, CallArgs& args) {
  ValueList out;
  const ValueList items = iterate(input);
  std::string attribute;
  Value fallback = Value::undefined();
  bool by_attribute = false;
  for (const auto& [name, value] : args.keyword) {
    if (name == "attribute") {
      attribute = value.str().bytes();
      by_attribute = true;
    } else if (name == "default") {
      fallback = value;
    } else if (args.positional.empty()) {
      throw TemplateError("map got an unexpected keyword argument '" + name + "'");
    }
  }
  if (by_attribute) {
    for (const Value& item : items) {
      Value value = attribute_path(item, attribute);
      out.push_back(value.is_undefined() && !fallback.is_undefined() ? fallback : value);
    }
    return Value::list(std::move(out));
  }
  if (args.positional.empty()) return Value::list(items);
  if (!args.positional[0].is_string()) throw TemplateError("map expects a filter name");
  const std::string filter = args.positional[0].as_string();
  for (const Value& item : items) {
    CallArgs inner{ValueList(args.positional.begin() + 1, args.positional.end()), args.keyword};
    out.push_back(apply_filter(filter, item, inner));
  }
  return Value::list(std::move(out));
}

// select, reject, selectattr and rejectattr.
Value select_impl(const Value& input, CallArgs& args, bool keep, bool by_attribute) {
  const char* name =
      by_attribute ? (keep ? "selectattr" : "rejectattr") : (keep ? "select" : "reject");
  std::size_t next = 0;
  std::string attribute;
  if (by_attribute) {
    if (args.positional.empty()) throw TemplateError(std::string(name) + " needs an attribute");
    attribute = args.positional[next++].str().bytes();
  }
  std::string test;
  if (next < args.positional.size()) test = args.positional[next++].str().bytes();
  ValueList test_args(
      args.positional.begin() + static_cast<std::ptrdiff_t>(std::min(next, args.positional.size())),
      args.positional.end());
  ValueList out;
  for (const Value& item : iterate(input)) {
    const Value subject = by_attribute ? attribute_path(item, attribute) : item;
    bool passed = false;
    if (test.empty()) {
      passed = subject.truthy();
    } else {
      CallArgs inner{test_args, args.keyword};
      passed = apply_test(test, subject, inner);
    }
    if (passed == keep) out.push_back(item);
  }
  return Value::list(std::move(out));
}

Value f_select(const Value& i, CallArgs& a) {
  return select_impl(i, a, true, false);
}
Value f_reject(const Value& i, CallArgs& a) {
  return select_impl(i, a, false, false);
}
Value f_selectattr(const Value& i, CallArgs& a) {
  return select_impl(i, a, true, true);
}
Value f_rejectattr(const Value& i, CallArgs& a) {
  return select_impl(i, a, false, true);
}

Value f_items(const Value& input, CallArgs& args) {
  Params(args, "items", {});
  if (input.is_undefined()) return Value::list({});
  if (!input.is_dict()) throw TemplateError("Can only get item pairs from a mapping.");
  ValueList out;
  for (const auto& [key, value] : input.as_dict().entries())
    out.push_back(Value::tuple({key, value}));
  return Value::list(std::move(out));
}

Value f_dictsort(const Value& input, CallArgs& args) {
  Params params(args, "dictsort", {"case_sensitive", "by", "reverse"});
  if (!input.is_dict()) throw TemplateError("dictsort expects a mapping");
  const bool case_sensitive = params.has(0) && params.get(0)->truthy();
  const std::string by = params.has(1) ? params.get(1)->str().bytes() : "key";
  if (by != "key" && by != "value") params.fail("You can only sort by either 'key' or 'value'");
  const std::size_t position = by == "key" ? 0 : 1;
  const bool reverse = params.has(2) && params.get(2)->truthy();
  ValueList pairs;
  for (const auto& [key, value] : input.as_dict().entries())
    pairs.push_back(Value::tuple({key, value}));
  std::stable_sort(pairs.begin(), pairs.end(), [&](const Value& a, const Value& b) {
    const Value x = lowered_if(a.as_list()[position], case_sensitive);
    const Value y = lowered_if(b.as_list()[position], case_sensitive);
    return reverse ? python_less(y, x) : python_less(x, y);
  });
  return Value::list(std::move(pairs));
}

Value f_unique(const Value& input, CallArgs& args) {
  Params params(args, "unique", {"case_sensitive", "attribute"});
  const bool case_sensitive = params.has(0) && params.get(0)->truthy();
  ValueList seen;
  ValueList out;
  for (const Value& item : iterate(input)) {
    Value key = params.has(1) ? attribute_path(item, params.get(1)->str().bytes()) : item;
    key = lowered_if(key, case_sensitive);
    if (std::find(seen.begin(), seen.end(), key) != seen.end()) continue;
    seen.push_back(key);
    out.push_back(item);
  }
  return Value::list(std::move(out));
}

Value f_sort(const Value& input, CallArgs& args) {
  Params params(args, "sort", {"reverse", "case_sensitive", "attribute"});
  const bool reverse = params.has(0) && params.get(0)->truthy();
  const bool case_sensitive = params.has(1) && params.get(1)->truthy();
  ValueList items = iterate(input);
  auto key = [&](const Value& item) {
    Value k = params.has(2) && !params.get(2)->is_none()
                  ? attribute_path(item, params.get(2)->str().bytes())
                  : item;
    return lowered_if(k, case_sensitive);
  };
  std::stable_sort(items.begin(), items.end(), [&](const Value& a, const Value& b) {
    return reverse ? python_less(key(b), key(a)) : python_less(key(a), key(b));
  });
  return Value::list(std::move(items));
}

Value f_reverse(const Value& input, CallArgs& args) {
  Params(args, "reverse", {});
  if (input.is_string()) {
    ValueList chars = iterate(input);
    Text out;
    for (auto it = chars.rbegin(); it != chars.rend(); ++it)
      out.append(it->as_text());
    return Value(std::move(out));
  }
  ValueList items = iterate(input);
  std::reverse(items.begin(), items.end());
  return Value::list(std::move(items));
}

Value f_sum(const Value& input, CallArgs& args) {
  Params params(args, "sum", {"attribute", "start"});
  Value total = params.get_or(1, Value(std::int64_t{0}));
  for (const Value& item : iterate(input)) {
    const Value value = params.has(0) && !params.get(0)->is_none()
                            ? attribute_path(item, params.get(0)->str().bytes())
                            : item;
    total = binary_operation("+", total, value);
  }
  return total;
}

Value extreme(const Value& input, CallArgs& args, bool want_max) {
  Params params(args, want_max ? "max" : "min", {"case_sensitive", "attribute"});
  const bool case_sensitive = params.has(0) && params.get(0)->truthy();
  const ValueList items = iterate(input);
  if (items.empty()) return Value::undefined("No aggregated item, sequence was empty.");
  auto key = [&](const Value& item) {
    Value k = params.has(1) && !params.get(1)->is_none()
                  ? attribute_path(item, params.get(1)->str().bytes())
                  : item;
    return lowered_if(k, case_sensitive);
  };
  const Value* best = &items.front();
  for (const Value& item : items) {
    if (want_max ? python_less(key(*best), key(item)) : python_less(key(item), key(*best)))
      best = &item;
  }
  return *best;
}

Value f_min(const Value& i, CallArgs& a) {
  return extreme(i, a, false);
}
Value f_max(const Value& i, CallArgs& a) {
  return extreme(i, a, true);
}

Value f_batch(const Value& input, CallArgs& args) {
  Params params(args, "batch", {"linecount", "fill_with"});
  if (!params.has(0)) params.fail("needs a line count");
  const std::int64_t size = to_index(*params.get(0), "batch");
  if (size <= 0) params.fail("needs a positive line count");
  ValueList out;
  ValueList current;
  for (const Value& item : iterate(input)) {
    current.push_back(item);
    if (static_cast<std::int64_t>(current.size()) == size) {
      out.push_back(Value::list(std::move(current)));
      current.clear();
    }
  }
  if (!current.empty()) {
    if (params.has(1) && !params.get(1)->is_none()) {
      while (static_cast<std::int64_t>(current.size()) < size)
        current.push_back(*params.get(1));
    }
    out.push_back(Value::list(std::move(current)));
  }
  return Value::list(std::move(out));
}

Value f_slice(const Value& input, CallArgs& args) {
  Params params(args, "slice", {"slices", "fill_with"});
  if (!params.has(0)) params.fail("needs a number of slices");
  const std::int64_t slices = to_index(*params.get(0), "slice");
  if (slices <= 0) params.fail("needs a positive number of slices");
  const ValueList items = iterate(input);
  const auto count = static_cast<std::int64_t>(items.size());
  const std::int64_t per = count / slices;
  const std::int64_t extra = count % slices;
  std::int64_t offset = 0;
  ValueList out;
  for (std::int64_t i = 0; i < slices; ++i) {
    const std::int64_t start = offset + i * per;
    if (i < extra) ++offset;
    const std::int64_t end = offset + (i + 1) * per;
    ValueList part(items.begin() + start, items.begin() + end);
    if (params.has(1) && !params.get(1)->is_none() && i >= extra) part.push_back(*params.get(1));
    out.push_back(Value::list(std::move(part)));
  }
  return Value::list(std::move(out));
}

}  // namespace

void add_sequence_filters(FilterTable& table) {
  table.emplace("batch", f_batch);
  table.emplace("dictsort", f_dictsort);
  table.emplace("first", f_first);
  table.emplace("items", f_items);
  table.emplace("join", f_join);
  table.emplace("last", f_last);
  table.emplace("list", f_list);
  table.emplace("map", f_map);
  table.emplace("max", f_max);
  table.emplace("min", f_min);
  table.emplace("reject", f_reject);
  table.emplace("rejectattr", f_rejectattr);
  table.emplace("reverse", f_reverse);
  table.emplace("select", f_select);
  table.emplace("selectattr", f_selectattr);
  table.emplace("slice", f_slice);
  table.emplace("sort", f_sort);
  table.emplace("sum", f_sum);
  table.emplace("unique", f_unique);
}

}  // namespace quire::engine::jinja::detail
