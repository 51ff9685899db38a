// Mistral: [TOOL_CALLS] followed by a JSON array of call objects (v0.3,
// Nemo, Small 3.1), or by NAME[ARGS]{...} with an optional [CALL_ID]id
// between (the tokenizers of Mistral Small 3.2 and later), one marker per call.
#include <cctype>

#include "family.h"
#include "json_scan.h"

namespace quire::engine::tools::detail {
namespace {

constexpr std::string_view kToolCalls = "[TOOL_CALLS]";
constexpr std::string_view kArgs = "[ARGS]";
constexpr std::string_view kCallId = "[CALL_ID]";

SectionScan invalid(std::string error) {
  SectionScan scan;
  scan.status = ScanStatus::Invalid;
  scan.error = std::move(error);
  return scan;
}

SectionScan scan_array(std::string_view text, std::size_t i) {
  SectionScan scan;
  ++i;  // '['
  while (true) {
    i = skip_space(text, i);
    if (i >= text.size()) return scan;
    if (text[i] == ']' && scan.calls.empty()) return invalid("[TOOL_CALLS] lists no calls");
    if (text[i] != '{') return invalid("[TOOL_CALLS] is not followed by call objects");
    CallObjectScan object = scan_call_object(text, i, false);
    scan.calls.push_back(std::move(object.call));
    if (object.status == ScanStatus::Incomplete) return scan;
    if (object.status != ScanStatus::Complete) return invalid(object.error);
    i = skip_space(text, object.end);
    if (i >= text.size()) return scan;
    if (text[i] == ',') {
      ++i;
      continue;
    }
    if (text[i] != ']') return invalid("the list of [TOOL_CALLS] is not valid JSON");
    scan.status = ScanStatus::Complete;
    scan.end = i + 1;
    return scan;
  }
}

bool is_name_byte(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_' || c == '-' || c == '.';
}

SectionScan scan_named(std::string_view text, std::size_t i) {
  SectionScan scan;
  ScannedCall call;
  const std::size_t name_start = i;
  while (i < text.size() && is_name_byte(text[i]))
    ++i;
  if (i >= text.size()) return scan;
  if (i == name_start) return invalid("[TOOL_CALLS] is not followed by a function name");
  call.name = std::string(text.substr(name_start, i - name_start));
  if (match_literal(text, i, kCallId) == Match::Yes) {
    i += kCallId.size();
    while (i < text.size() && is_name_byte(text[i]))
      ++i;
  }
  switch (match_literal(text, i, kArgs)) {
    case Match::Partial:
      return scan;
    case Match::No:
      if (match_literal(text, i, kCallId) == Match::Partial) return scan;
      return invalid("a call's name is not followed by [ARGS]");
    case Match::Yes:
      break;
  }
  call.name_done = true;
  ArgumentsScan arguments = scan_arguments(text, skip_space(text, i + kArgs.size()));
  if (arguments.status == ScanStatus::Invalid) return invalid(arguments.error);
  call.arguments = std::move(arguments.arguments);
  call.arguments_done = arguments.status == ScanStatus::Complete;
  scan.calls.push_back(std::move(call));
  if (arguments.status == ScanStatus::Complete) {
    scan.status = ScanStatus::Complete;
    scan.end = arguments.end;
  }
  return scan;
}

class MistralFamily final : public Family {
 public:
  StartSearch find_start(std::string_view text, bool, bool) const override {
    return find_markers(text, {kToolCalls});
  }

  SectionScan scan(std::string_view text, bool) const override {
    const std::size_t i = skip_space(text, kToolCalls.size());
    if (i >= text.size()) return {};
    if (text[i] == '[') return scan_array(text, i);
    return scan_named(text, i);
  }
};

}  // namespace

std::unique_ptr<const Family> make_mistral_family() {
  return std::make_unique<MistralFamily>();
}

}  // namespace quire::engine::tools::detail
