#pragma once

// Small scanners over JSON text that may still be growing: each says whether
// what it looks at is complete, broken, or needs more bytes, and never reads
// past the end of the text.

#include <cstddef>
#include <initializer_list>
#include <string>
#include <string_view>

#include "family.h"

namespace quire::engine::tools::detail {

bool is_json_space(char c);
std::size_t skip_space(std::string_view text, std::size_t pos);
bool all_space(std::string_view text);
std::string_view trim_space_right(std::string_view text);

// Whether text[pos...] begins with `literal`: Partial when the text ends
// inside it.
enum class Match { Yes, Partial, No };
Match match_literal(std::string_view text, std::size_t pos, std::string_view literal);

// Finds the first of `markers` in text; without one, `safe` stops before a
// suffix that may be the beginning of one.
StartSearch find_markers(std::string_view text, std::initializer_list<std::string_view> markers);

// The end of the JSON value at text[pos]: Complete (end set), Incomplete or
// Invalid. Syntax inside is checked later, by nlohmann::json::accept.
struct ValueEnd {
  ScanStatus status = ScanStatus::Incomplete;
  std::size_t end = 0;
};
ValueEnd scan_json_value(std::string_view text, std::size_t pos);

// Whether `text` is one JSON object and nothing else.
bool is_json_object(std::string_view text);

// Arguments at text[pos]: an object, streamed as written, or a string that
// holds an object's text (some models quote them), taken whole once closed.
struct ArgumentsScan {
  ScanStatus status = ScanStatus::Incomplete;
  std::string arguments;  // final so far
  std::size_t end = 0;
  std::string error;
};
ArgumentsScan scan_arguments(std::string_view text, std::size_t pos);

// A call object at text[pos] ('{'): {"name": "...", "arguments": {...}} with
// keys in any order, "parameters" for "arguments", other keys skipped. With
// `strict`, any key but type, name, arguments and parameters (or a missing
// name) makes it NotASection: Llama 3 replies may be JSON that is no call.
struct CallObjectScan {
  ScanStatus status = ScanStatus::Incomplete;
  ScannedCall call;
  std::size_t end = 0;
  std::string error;
};
CallObjectScan scan_call_object(std::string_view text, std::size_t pos, bool strict);

}  // namespace quire::engine::tools::detail
