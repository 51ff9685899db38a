#include "json_scan.h"

#include <algorithm>
#include <cctype>
#include <nlohmann/json.hpp>

namespace quire::engine::tools::detail {

bool is_json_space(char c) {
  return c == ' ' || c == '\n' || c == '\r' || c == '\t';
}

std::size_t skip_space(std::string_view text, std::size_t pos) {
  while (pos < text.size() && is_json_space(text[pos]))
    ++pos;
  return pos;
}

bool all_space(std::string_view text) {
  return skip_space(text, 0) == text.size();
}

std::string_view trim_space_right(std::string_view text) {
  std::size_t end = text.size();
  while (end > 0 && is_json_space(text[end - 1]))
    --end;
  return text.substr(0, end);
}

Match match_literal(std::string_view text, std::size_t pos, std::string_view literal) {
  if (pos > text.size()) return Match::Partial;
  const std::string_view rest = text.substr(pos);
  if (rest.starts_with(literal)) return Match::Yes;
  if (rest.size() < literal.size() && literal.starts_with(rest)) return Match::Partial;
  return Match::No;
}

StartSearch find_markers(std::string_view text, std::initializer_list<std::string_view> markers) {
  StartSearch search;
  for (std::string_view marker : markers) {
    const std::size_t at = text.find(marker);
    if (at != std::string_view::npos && (search.start == StartSearch::none || at < search.start))
      search.start = at;
  }
  if (search.start != StartSearch::none) return search;
  // The longest suffix that is a proper prefix of a marker is held back.
  std::size_t held = 0;
  for (std::string_view marker : markers) {
    for (std::size_t length = std::min(marker.size() - 1, text.size()); length > held; --length) {
      if (marker.starts_with(text.substr(text.size() - length))) {
        held = length;
        break;
      }
    }
  }
  search.safe = text.size() - held;
  return search;
}

ValueEnd scan_json_value(std::string_view text, std::size_t pos) {
  if (pos >= text.size()) return {};
  const char first = text[pos];
  if (first == '"') {
    for (std::size_t i = pos + 1; i < text.size(); ++i) {
      if (text[i] == '\\') {
        ++i;
      } else if (text[i] == '"') {
        return {ScanStatus::Complete, i + 1};
      }
    }
    return {};
  }
  if (first == '{' || first == '[') {
    std::string open;
    bool in_string = false;
    for (std::size_t i = pos; i < text.size(); ++i) {
      const char c = text[i];
      if (in_string) {
        if (c == '\\') {
          ++i;
        } else if (c == '"') {
          in_string = false;
        }
      } else if (c == '"') {
        in_string = true;
      } else if (c == '{' || c == '[') {
        open.push_back(c);
      } else if (c == '}' || c == ']') {
        if (open.empty() || (c == '}') != (open.back() == '{')) return {ScanStatus::Invalid, i};
        open.pop_back();
        if (open.empty()) return {ScanStatus::Complete, i + 1};
      }
    }
    return {};
  }
  // A number, true, false or null: ends at the first byte that cannot continue it.
  std::size_t i = pos;
  while (i < text.size() && (std::isalnum(static_cast<unsigned char>(text[i])) != 0 ||
                             text[i] == '+' || text[i] == '-' || text[i] == '.'))
    ++i;
  if (i == pos) return {ScanStatus::Invalid, pos};
  if (i == text.size()) return {};
  return {ScanStatus::Complete, i};
}

bool is_json_object(std::string_view text) {
  const std::size_t start = skip_space(text, 0);
  if (start >= text.size() || text[start] != '{') return false;
  return nlohmann::json::accept(text);
}

namespace {

// The decoded value of a complete JSON string token; false when it is not valid.
bool decode_string(std::string_view token, std::string& out) {
  const nlohmann::json value = nlohmann::json::parse(token, nullptr, false);
  if (!value.is_string()) return false;
  out = value.get<std::string>();
  return true;
}

}  // namespace

ArgumentsScan scan_arguments(std::string_view text, std::size_t pos) {
  ArgumentsScan scan;
  if (pos >= text.size()) return scan;
  // Decided on the first byte, so that the verdict does not depend on how
  // much of the value has arrived.
  if (text[pos] != '{' && text[pos] != '"') {
    scan.status = ScanStatus::Invalid;
    scan.error = "the arguments are not a JSON object";
    return scan;
  }
  const ValueEnd value = scan_json_value(text, pos);
  if (value.status == ScanStatus::Invalid) {
    scan.status = ScanStatus::Invalid;
    scan.error = "the arguments are not valid JSON";
    return scan;
  }
  if (text[pos] == '{') {
    if (value.status == ScanStatus::Incomplete) {
      scan.arguments = std::string(text.substr(pos));
      return scan;
    }
    scan.arguments = std::string(text.substr(pos, value.end - pos));
    if (!is_json_object(scan.arguments)) {
      scan.status = ScanStatus::Invalid;
      scan.error = "the arguments are not valid JSON";
      return scan;
    }
    scan.status = ScanStatus::Complete;
    scan.end = value.end;
    return scan;
  }
  if (text[pos] == '"') {
    if (value.status == ScanStatus::Incomplete) return scan;
    std::string decoded;
    if (!decode_string(text.substr(pos, value.end - pos), decoded) || !is_json_object(decoded)) {
      scan.status = ScanStatus::Invalid;
      scan.error = "the arguments are not a JSON object";
      return scan;
    }
    scan.status = ScanStatus::Complete;
    scan.arguments = std::move(decoded);
    scan.end = value.end;
    return scan;
  }
  scan.status = ScanStatus::Invalid;
  scan.error = "the arguments are not a JSON object";
  return scan;
}

CallObjectScan scan_call_object(std::string_view text, std::size_t pos, bool strict) {
  CallObjectScan scan;
  // Strict scans name the call only once its arguments begin: before that,
  // {"name": "Bob", "age": 3} may still turn out to be no call.
  bool seen_arguments = false;
  bool have_name = false;
  const auto settle = [&] { scan.call.name_done = have_name && (!strict || seen_arguments); };
  const auto fail = [&](std::string error) {
    // Once it has reached its arguments it was meant as a call, and a flaw breaks it.
    scan.status = strict && !seen_arguments ? ScanStatus::NotASection : ScanStatus::Invalid;
    scan.error = std::move(error);
    scan.end = pos + 1;
    return scan;
  };
  const auto broken = [&](std::string error) {
    scan.status = ScanStatus::Invalid;
    scan.error = std::move(error);
    return scan;
  };
  std::size_t i = pos + 1;  // past '{'
  bool first = true;
  while (true) {
    i = skip_space(text, i);
    if (i >= text.size()) return scan;
    if (first && text[i] == '}') return fail("the call object is empty");
    if (text[i] != '"') return fail("the call object's keys are not JSON strings");
    const ValueEnd key_end = scan_json_value(text, i);
    if (key_end.status != ScanStatus::Complete) return scan;
    std::string key;
    if (!decode_string(text.substr(i, key_end.end - i), key)) return fail("a key is not valid");
    const bool is_name = key == "name";
    const bool is_arguments = key == "arguments" || key == "parameters";
    if (strict && !is_name && !is_arguments && key != "type")
      return fail("a JSON object that is no call");
    // What was streamed of the first name or arguments cannot be taken back.
    if ((is_name && have_name) || (is_arguments && seen_arguments))
      return broken("the call repeats its " + key);
    i = skip_space(text, key_end.end);
    if (i >= text.size()) return scan;
    if (text[i] != ':') return fail("a key without a value");
    i = skip_space(text, i + 1);
    if (i >= text.size()) return scan;
    if (is_name) {
      if (text[i] != '"') return fail("the call's name is not a string");
      const ValueEnd name_end = scan_json_value(text, i);
      if (name_end.status != ScanStatus::Complete) return scan;
      if (!decode_string(text.substr(i, name_end.end - i), scan.call.name) ||
          scan.call.name.empty())
        return fail("the call's name is not valid");
      have_name = true;
      settle();
      i = name_end.end;
    } else if (is_arguments) {
      seen_arguments = true;
      settle();
      ArgumentsScan arguments = scan_arguments(text, i);
      if (arguments.status == ScanStatus::Invalid) return broken(arguments.error);
      scan.call.arguments = std::move(arguments.arguments);
      if (arguments.status != ScanStatus::Complete) return scan;
      scan.call.arguments_done = true;
      i = arguments.end;
    } else {
      const ValueEnd skipped = scan_json_value(text, i);
      if (skipped.status == ScanStatus::Invalid) return fail("a value is not valid JSON");
      if (skipped.status != ScanStatus::Complete) return scan;
      i = skipped.end;
    }
    first = false;
    i = skip_space(text, i);
    if (i >= text.size()) return scan;
    if (text[i] == ',') {
      ++i;
      continue;
    }
    if (text[i] != '}') return fail("the call object is not valid JSON");
    if (!have_name) return fail("the call has no name");
    scan.call.name_done = true;
    if (!scan.call.arguments_done) {
      // A call without arguments: the function takes none.
      scan.call.arguments = "{}";
      scan.call.arguments_done = true;
    }
    scan.status = ScanStatus::Complete;
    scan.end = i + 1;
    return scan;
  }
}

}  // namespace quire::engine::tools::detail
