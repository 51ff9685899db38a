#pragma once

// What each format family knows: where a section (a call, or a group of
// calls, or Harmony's message header) may begin in undecided text, and how
// far a section's text has got. ToolCallStream does the rest: holding back,
// sending deltas, breaking off. Scans start from the section's first byte
// every time, so that what a scan decides depends only on the text, never on
// how it was split.

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "quire/engine/tools/tool_call.h"

namespace quire::engine::tools::detail {

enum class ScanStatus {
  Incomplete,   // more text is needed to decide
  Complete,     // the section ends at `end`
  NotASection,  // text[0, end) is plain text after all
  Invalid,      // a call was begun and is broken
};

// Where the text after a section goes: Harmony's analysis channel is reasoning.
enum class Route { Content, Reasoning };

struct ScannedCall {
  std::string name;
  bool name_done = false;
  // What is final of the arguments so far: a prefix of the JSON text.
  std::string arguments;
  bool arguments_done = false;
};

struct SectionScan {
  ScanStatus status = ScanStatus::Incomplete;
  std::vector<ScannedCall> calls;
  std::size_t end = 0;
  Route route_after = Route::Content;
  std::string error;  // Invalid: why
};

struct StartSearch {
  static constexpr std::size_t none = std::string_view::npos;
  std::size_t start = none;  // where a section begins, or none
  std::size_t safe = 0;      // without a start: text[0, safe) begins no section
};

class Family {
 public:
  virtual ~Family() = default;
  // `reply_start`: nothing but whitespace came before `text` in the reply;
  // `after_section`: only whitespace since the last section ended.
  virtual StartSearch find_start(std::string_view text, bool reply_start,
                                 bool after_section) const = 0;
  // `text` begins where find_start said; `at_end`: no more text will come.
  virtual SectionScan scan(std::string_view text, bool at_end) const = 0;
};

std::unique_ptr<const Family> make_hermes_family();
std::unique_ptr<const Family> make_llama3_family();
std::unique_ptr<const Family> make_mistral_family();
std::unique_ptr<const Family> make_harmony_family();
std::unique_ptr<const Family> make_deepseek_family();

}  // namespace quire::engine::tools::detail
