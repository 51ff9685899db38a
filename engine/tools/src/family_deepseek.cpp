// DeepSeek V3 and R1: calls between <｜tool▁calls▁begin｜> and
// <｜tool▁calls▁end｜>, each <｜tool▁call▁begin｜>function<｜tool▁sep｜>NAME
// then the arguments in a ```json fence, then <｜tool▁call▁end｜>. DeepSeek
// V3.1 drops the type and the fence: <｜tool▁call▁begin｜>NAME<｜tool▁sep｜>{...}.
#include "family.h"
#include "json_scan.h"

namespace quire::engine::tools::detail {
namespace {

constexpr std::string_view kCallsBegin = "<｜tool▁calls▁begin｜>";
constexpr std::string_view kCallsEnd = "<｜tool▁calls▁end｜>";
constexpr std::string_view kCallBegin = "<｜tool▁call▁begin｜>";
constexpr std::string_view kCallEnd = "<｜tool▁call▁end｜>";
constexpr std::string_view kSep = "<｜tool▁sep｜>";
constexpr std::string_view kFence = "```json";
constexpr std::string_view kFenceEnd = "```";
constexpr std::size_t kLongestName = 256;

// Whether a marker of `size` bytes found at `at` (npos: not yet) lies
// further than kLongestName bytes from `from`. A marker not found is too far
// only once one starting within the limit would have arrived whole.
bool too_far(std::string_view text, std::size_t from, std::size_t at, std::size_t size) {
  if (at == std::string_view::npos) return text.size() - from >= kLongestName + size;
  return at - from > kLongestName;
}

class DeepSeekFamily final : public Family {
 public:
  StartSearch find_start(std::string_view text, bool, bool) const override {
    return find_markers(text, {kCallsBegin, kCallBegin});
  }

  SectionScan scan(std::string_view text, bool at_end) const override {
    SectionScan scan;
    const auto invalid = [&](std::string error) {
      scan.status = ScanStatus::Invalid;
      scan.error = std::move(error);
      return scan;
    };
    std::size_t i = 0;
    if (text.starts_with(kCallsBegin)) i = kCallsBegin.size();
    while (true) {
      i = skip_space(text, i);
      if (i >= text.size()) break;
      if (!scan.calls.empty()) {
        const Match end = match_literal(text, i, kCallsEnd);
        if (end == Match::Yes) {
          scan.status = ScanStatus::Complete;
          scan.end = i + kCallsEnd.size();
          return scan;
        }
        if (end == Match::Partial) break;
      }
      const Match begin = match_literal(text, i, kCallBegin);
      if (begin == Match::Partial) break;
      if (begin == Match::No) return invalid("tool calls are not separated by their markers");
      i += kCallBegin.size();
      // Limits count from the start, never from how much has arrived, so
      // that the verdict is the same however the text was split.
      const std::size_t sep = text.find(kSep, i);
      if (too_far(text, i, sep, kSep.size())) return invalid("a tool call has no <｜tool▁sep｜>");
      if (sep == std::string_view::npos) return scan;
      ScannedCall call;
      const std::string_view first = text.substr(i, sep - i);
      i = sep + kSep.size();
      bool fenced = false;
      if (first == "function") {
        // V3: the name runs to the end of the line, then the fence.
        const std::size_t line_end = text.find('\n', i);
        if (too_far(text, i, line_end, 1)) return invalid("a tool call's name has no end");
        if (line_end == std::string_view::npos) return scan;
        call.name = std::string(text.substr(i, line_end - i));
        i = skip_space(text, line_end);
        const Match fence = match_literal(text, i, kFence);
        if (fence == Match::Partial) return scan;
        if (fence == Match::Yes) {
          fenced = true;
          i = skip_space(text, i + kFence.size());
        }
      } else {
        call.name = std::string(first);
      }
      if (call.name.empty()) return invalid("a tool call has no name");
      call.name_done = true;
      ArgumentsScan arguments = scan_arguments(text, i);
      if (arguments.status == ScanStatus::Invalid) return invalid(arguments.error);
      call.arguments = std::move(arguments.arguments);
      call.arguments_done = arguments.status == ScanStatus::Complete;
      scan.calls.push_back(std::move(call));
      if (!scan.calls.back().arguments_done) return scan;
      i = skip_space(text, arguments.end);
      if (fenced) {
        const Match fence_end = match_literal(text, i, kFenceEnd);
        if (fence_end == Match::Partial) break;
        if (fence_end == Match::No) return invalid("a tool call's ```json fence is not closed");
        i = skip_space(text, i + kFenceEnd.size());
      }
      const Match call_end = match_literal(text, i, kCallEnd);
      if (call_end == Match::Partial) break;
      if (call_end == Match::No) return invalid("a tool call is not closed by its marker");
      i += kCallEnd.size();
    }
    // The closing markers may be cut by the stop condition: every call is whole.
    if (at_end && !scan.calls.empty() && scan.calls.back().arguments_done) {
      scan.status = ScanStatus::Complete;
      scan.end = text.size();
    }
    return scan;
  }
};

}  // namespace

std::unique_ptr<const Family> make_deepseek_family() {
  return std::make_unique<DeepSeekFamily>();
}

}  // namespace quire::engine::tools::detail
