// The two families whose calls are JSON objects with a name and arguments:
// Hermes (Qwen2.5, Qwen3) wraps each in <tool_call>...</tool_call>; Llama 3.1
// to 3.3 answer with the object itself ({"name": ..., "parameters": ...}),
// optionally after <|python_tag|>, several separated by ';'.
#include "family.h"
#include "json_scan.h"

namespace quire::engine::tools::detail {
namespace {

constexpr std::string_view kHermesOpen = "<tool_call>";
constexpr std::string_view kHermesClose = "</tool_call>";
constexpr std::string_view kPythonTag = "<|python_tag|>";

// What follows a call object: the closing tag (Hermes) or nothing (Llama).
SectionScan finish_call(CallObjectScan object, std::string_view text, std::string_view closing,
                        bool at_end) {
  SectionScan scan;
  scan.calls.push_back(std::move(object.call));
  if (object.status != ScanStatus::Complete) {
    scan.status = object.status;
    scan.error = std::move(object.error);
    scan.end = object.end;
    return scan;
  }
  if (closing.empty()) {
    scan.status = ScanStatus::Complete;
    scan.end = object.end;
    return scan;
  }
  const std::size_t i = skip_space(text, object.end);
  switch (match_literal(text, i, closing)) {
    case Match::Yes:
      scan.status = ScanStatus::Complete;
      scan.end = i + closing.size();
      return scan;
    case Match::Partial:
      // The closing tag may be cut by the stop condition; the call is whole.
      if (at_end) {
        scan.status = ScanStatus::Complete;
        scan.end = text.size();
      }
      return scan;
    case Match::No:
      scan.status = ScanStatus::Invalid;
      scan.error = "a tool call is not closed by " + std::string(closing);
      return scan;
  }
  return scan;
}

class HermesFamily final : public Family {
 public:
  StartSearch find_start(std::string_view text, bool, bool) const override {
    return find_markers(text, {kHermesOpen});
  }

  SectionScan scan(std::string_view text, bool at_end) const override {
    const std::size_t i = skip_space(text, kHermesOpen.size());
    if (i >= text.size()) return {};
    if (text[i] != '{') {
      SectionScan scan;
      scan.status = ScanStatus::Invalid;
      scan.error = "<tool_call> is not followed by a JSON object";
      return scan;
    }
    return finish_call(scan_call_object(text, i, false), text, kHermesClose, at_end);
  }
};

class Llama3Family final : public Family {
 public:
  StartSearch find_start(std::string_view text, bool reply_start,
                         bool after_section) const override {
    if (reply_start || after_section) {
      std::size_t i = skip_space(text, 0);
      if (after_section && i < text.size() && text[i] == ';') i = skip_space(text, i + 1);
      if (i >= text.size()) return {};  // only space (and ';') so far: wait
      if (text[i] == '{') {
        StartSearch search;
        search.start = skip_space(text, 0);
        return search;
      }
    }
    return find_markers(text, {kPythonTag});
  }

  SectionScan scan(std::string_view text, bool) const override {
    std::size_t i = 0;
    bool tagged = false;
    if (text.starts_with(kPythonTag)) {
      i = kPythonTag.size();
      tagged = true;
    }
    i = skip_space(text, i);
    if (i < text.size() && text[i] == ';') i = skip_space(text, i + 1);
    if (i >= text.size()) return {};
    if (text[i] != '{') {
      SectionScan scan;
      if (tagged) {
        scan.status = ScanStatus::Invalid;
        scan.error = "<|python_tag|> is not followed by a JSON call";
      } else {
        scan.status = ScanStatus::NotASection;
        scan.end = i;
      }
      return scan;
    }
    // Without the tag, the reply may be JSON the user asked for.
    return finish_call(scan_call_object(text, i, !tagged), text, {}, false);
  }
};

}  // namespace

std::unique_ptr<const Family> make_hermes_family() {
  return std::make_unique<HermesFamily>();
}
std::unique_ptr<const Family> make_llama3_family() {
  return std::make_unique<Llama3Family>();
}

}  // namespace quire::engine::tools::detail
