#include "builtins.h"

#include <ctime>

#include "runtime.h"

namespace quire::engine::jinja {
namespace {

const char* const kWeekdays[] = {"Sunday",   "Monday", "Tuesday", "Wednesday",
                                 "Thursday", "Friday", "Saturday"};
const char* const kMonths[] = {"January",   "February", "March",    "April",
                               "May",       "June",     "July",     "August",
                               "September", "October",  "November", "December"};

std::string two_digits(int value, bool pad) {
  std::string text = std::to_string(value);
  if (pad && text.size() < 2) text.insert(0, "0");
  return text;
}

Value range(CallArgs& args, std::size_t max_range) {
  if (!args.keyword.empty()) throw TemplateError("range() takes no keyword arguments");
  std::int64_t start = 0;
  std::int64_t stop = 0;
  std::int64_t step = 1;
  const auto& p = args.positional;
  if (p.size() == 1) {
    stop = to_index(p[0], "range()");
  } else if (p.size() == 2 || p.size() == 3) {
    start = to_index(p[0], "range()");
    stop = to_index(p[1], "range()");
    if (p.size() == 3) step = to_index(p[2], "range()");
  } else {
    throw TemplateError("range expected 1 to 3 arguments, got " + std::to_string(p.size()));
  }
  if (step == 0) throw TemplateError("range() arg 3 must not be zero");
  ValueList items;
  for (std::int64_t i = start; step > 0 ? i < stop : i > stop; i += step) {
    if (items.size() >= max_range)
      throw TemplateError("range too big, maximum size for range is " + std::to_string(max_range),
                          0, "limit");
    items.emplace_back(i);
  }
  return Value::list(std::move(items));
}

Dict keyword_dict(CallArgs& args, const char* what) {
  Dict dict;
  if (args.positional.size() > 1)
    throw TemplateError(std::string(what) + " expected at most 1 positional argument");
  if (!args.positional.empty()) {
    const Value& initial = args.positional[0];
    if (initial.is_dict()) {
      dict = initial.as_dict();
    } else {
      for (const Value& pair : iterate(initial)) {
        const ValueList items = iterate(pair);
        if (items.size() != 2)
          throw TemplateError(std::string(what) + ": each element must be a pair");
        dict.set(items[0], items[1]);
      }
    }
  }
  for (const auto& [name, value] : args.keyword)
    dict.set(Value(std::string_view(name)), value);
  return dict;
}

}  // namespace

std::string python_strftime(const std::string& format, std::chrono::system_clock::time_point now) {
  const std::time_t seconds = std::chrono::system_clock::to_time_t(now);
  std::tm tm{};
  localtime_r(&seconds, &tm);
  std::string out;
  for (std::size_t i = 0; i < format.size(); ++i) {
    if (format[i] != '%' || i + 1 >= format.size()) {
      out.push_back(format[i]);
      continue;
    }
    char code = format[++i];
    bool pad = true;
    if (code == '-' && i + 1 < format.size()) {
      pad = false;
      code = format[++i];
    }
    const int hour12 = tm.tm_hour % 12 == 0 ? 12 : tm.tm_hour % 12;
    switch (code) {
      case 'd':
        out += two_digits(tm.tm_mday, pad);
        break;
      case 'e':
        out += (tm.tm_mday < 10 && pad ? " " : "") + std::to_string(tm.tm_mday);
        break;
      case 'm':
        out += two_digits(tm.tm_mon + 1, pad);
        break;
      case 'y':
        out += two_digits(tm.tm_year % 100, pad);
        break;
      case 'Y':
        out += std::to_string(tm.tm_year + 1900);
        break;
      case 'H':
        out += two_digits(tm.tm_hour, pad);
        break;
      case 'I':
        out += two_digits(hour12, pad);
        break;
      case 'M':
        out += two_digits(tm.tm_min, pad);
        break;
      case 'S':
        out += two_digits(tm.tm_sec, pad);
        break;
      case 'p':
        out += tm.tm_hour < 12 ? "AM" : "PM";
        break;
      case 'B':
        out += kMonths[tm.tm_mon];
        break;
      case 'b':
      case 'h':
        out += std::string(kMonths[tm.tm_mon]).substr(0, 3);
        break;
      case 'A':
        out += kWeekdays[tm.tm_wday];
        break;
      case 'a':
        out += std::string(kWeekdays[tm.tm_wday]).substr(0, 3);
        break;
      case 'w':
        out += std::to_string(tm.tm_wday);
        break;
      case 'u':
        out += std::to_string(tm.tm_wday == 0 ? 7 : tm.tm_wday);
        break;
      case 'j': {
        std::string day = std::to_string(tm.tm_yday + 1);
        if (pad) day.insert(0, 3 - day.size(), '0');
        out += day;
        break;
      }
      case 'F':
        out += std::to_string(tm.tm_year + 1900) + "-" + two_digits(tm.tm_mon + 1, true) + "-" +
               two_digits(tm.tm_mday, true);
        break;
      case 'T':
        out += two_digits(tm.tm_hour, true) + ":" + two_digits(tm.tm_min, true) + ":" +
               two_digits(tm.tm_sec, true);
        break;
      case '%':
        out += '%';
        break;
      default:
        out += '%';
        if (!pad) out += '-';
        out += code;
    }
  }
  return out;
}

void add_builtins(std::unordered_map<std::string, Value>& globals, const RenderOptions& options,
                  std::vector<Value>& namespaces) {
  const std::size_t max_range = options.max_range;
  globals["range"] =
      Value::function("range", [max_range](CallArgs& args) { return range(args, max_range); });
  std::vector<Value>* made = &namespaces;
  globals["namespace"] = Value::function("namespace", [made](CallArgs& args) {
    if (made->size() >= 100'000) throw TemplateError("too many namespaces", 0, "limit");
    made->push_back(Value::make_namespace(keyword_dict(args, "namespace")));
    return made->back();
  });
  globals["dict"] = Value::function(
      "dict", [](CallArgs& args) { return Value::dict(keyword_dict(args, "dict")); });
  globals["raise_exception"] = Value::function("raise_exception", [](CallArgs& args) -> Value {
    Params params(args, "raise_exception()", {"message"});
    throw TemplateError(params.has(0) ? params.get(0)->str().bytes() : std::string(), 0,
                        "raise_exception", true);
  });
  const auto now = options.now;
  globals["strftime_now"] = Value::function("strftime_now", [now](CallArgs& args) {
    Params params(args, "strftime_now()", {"format"});
    if (!params.has(0) || !params.get(0)->is_string()) params.fail("expects a format string");
    return Value(python_strftime(params.get(0)->as_string(), now));
  });
}

}  // namespace quire::engine::jinja
