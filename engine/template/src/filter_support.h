#pragma once

// Private to the filters: what the files that define jinja2's filters share.
// filters.cpp holds the table and the filters of text and numbers,
// filters_sequences.cpp those that walk lists and dicts.

#include <functional>
#include <map>
#include <string>
#include <string_view>

#include "runtime.h"

namespace quire::engine::jinja::detail {

using Filter = Value (*)(const Value& input, CallArgs& args);
using FilterTable = std::map<std::string, Filter, std::less<>>;

// An item's attribute by a dotted path ("a.b", or "0" for an index), as
// jinja2's make_attrgetter reads it.
Value attribute_path(const Value& item, const std::string& path);
// The value lowercased when it is a string and the comparison ignores case.
Value lowered_if(const Value& value, bool case_sensitive);

// join, first, last, list, map, select, reject, selectattr, rejectattr,
// items, dictsort, unique, sort, reverse, sum, min, max, batch, slice.
void add_sequence_filters(FilterTable& table);

}  // namespace quire::engine::jinja::detail
