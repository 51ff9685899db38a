// gpt-oss's Harmony: the reply is a run of messages, each a header
// (<|start|>assistant, <|channel|>NAME, maybe " to=functions.NAME" and
// "<|constrain|>json") up to <|message|>, then a body up to <|end|>, <|call|>
// or <|return|>. The analysis channel is reasoning, final and commentary are
// content, and a message addressed to functions.NAME is a call whose body is
// the arguments. Headers are sections; bodies of text flow through the
// stream, routed by the header before them.
#include "family.h"
#include "json_scan.h"

namespace quire::engine::tools::detail {
namespace {

constexpr std::string_view kStart = "<|start|>";
constexpr std::string_view kChannel = "<|channel|>";
constexpr std::string_view kMessage = "<|message|>";
constexpr std::string_view kEnd = "<|end|>";
constexpr std::string_view kCall = "<|call|>";
constexpr std::string_view kReturn = "<|return|>";
constexpr std::size_t kLongestHeader = 512;

// The word after `key` in a header ("to=" → "functions.get_weather").
std::string_view word_after(std::string_view header, std::string_view key) {
  const std::size_t at = header.find(key);
  if (at == std::string_view::npos) return {};
  std::size_t i = at + key.size();
  std::size_t end = i;
  while (end < header.size() && !is_json_space(header[end]) && header[end] != '<')
    ++end;
  return header.substr(i, end - i);
}

class HarmonyFamily final : public Family {
 public:
  StartSearch find_start(std::string_view text, bool, bool) const override {
    return find_markers(text, {kStart, kChannel, kEnd, kCall, kReturn});
  }

  SectionScan scan(std::string_view text, bool at_end) const override {
    SectionScan scan;
    for (std::string_view closing : {kEnd, kCall, kReturn}) {
      if (text.starts_with(closing)) {
        scan.status = ScanStatus::Complete;
        scan.end = closing.size();
        return scan;
      }
    }
    const std::size_t message = text.find(kMessage);
    if (message == std::string_view::npos ? text.size() >= kLongestHeader + kMessage.size()
                                          : message > kLongestHeader) {
      // No header is this long: the marker was text, unless it began a call.
      // Judged on the first bytes only, the same however the text was split.
      const bool call = !word_after(text.substr(0, kLongestHeader), "to=").empty();
      scan.status = call ? ScanStatus::Invalid : ScanStatus::NotASection;
      scan.end = text.starts_with(kStart) ? kStart.size() : kChannel.size();
      scan.error = "a tool call's header has no <|message|>";
      return scan;
    }
    const std::string_view header = text.substr(0, message);
    const std::string_view recipient = word_after(header, "to=");
    if (message == std::string_view::npos) {
      if (at_end) {
        // A header cut off by the end: nothing to show, unless it was a call.
        scan.status = recipient.empty() ? ScanStatus::Complete : ScanStatus::Invalid;
        scan.end = text.size();
        scan.error = "generation ended inside a tool call's header";
      }
      return scan;
    }
    const std::size_t body = message + kMessage.size();
    if (recipient.empty()) {
      scan.status = ScanStatus::Complete;
      scan.end = body;
      scan.route_after =
          word_after(header, kChannel) == "analysis" ? Route::Reasoning : Route::Content;
      return scan;
    }
    ScannedCall call;
    call.name = std::string(recipient.starts_with("functions.") ? recipient.substr(10) : recipient);
    if (call.name.empty()) {
      scan.status = ScanStatus::Invalid;
      scan.error = "a tool call names no function";
      return scan;
    }
    call.name_done = true;
    // The body ends at the first closing marker; JSON strings may hold '<'
    // but not these, which are single tokens.
    std::size_t close = std::string_view::npos;
    std::size_t close_size = 0;
    for (std::string_view closing : {kCall, kEnd, kReturn}) {
      const std::size_t at = text.find(closing, body);
      if (at != std::string_view::npos && at < close) {
        close = at;
        close_size = closing.size();
      }
    }
    std::string_view arguments =
        text.substr(body, close == std::string_view::npos ? std::string_view::npos : close - body);
    if (close == std::string_view::npos && !at_end) {
      // Hold back what may be the beginning of a closing marker.
      arguments = arguments.substr(0, find_markers(arguments, {kCall, kEnd, kReturn}).safe);
    }
    const std::size_t first = skip_space(arguments, 0);
    if (first < arguments.size() && arguments[first] != '{') {
      scan.status = ScanStatus::Invalid;
      scan.error = "a tool call's arguments are not a JSON object";
      return scan;
    }
    call.arguments = std::string(arguments.substr(first));
    if (close != std::string_view::npos || at_end) {
      call.arguments = std::string(trim_space_right(call.arguments));
      if (!is_json_object(call.arguments)) {
        scan.status = ScanStatus::Invalid;
        scan.error = close == std::string_view::npos
                         ? "generation ended inside a tool call"
                         : "a tool call's arguments are not a JSON object";
        return scan;
      }
      call.arguments_done = true;
      scan.status = ScanStatus::Complete;
      // <|call|> is a stop token and may be cut: the end of text closes it too.
      scan.end = close == std::string_view::npos ? text.size() : close + close_size;
    } else {
      // Trailing space may still be followed by more of the object, or not:
      // send it only once something follows.
      call.arguments = std::string(trim_space_right(call.arguments));
    }
    scan.calls.push_back(std::move(call));
    return scan;
  }
};

}  // namespace

std::unique_ptr<const Family> make_harmony_family() {
  return std::make_unique<HarmonyFamily>();
}

}  // namespace quire::engine::tools::detail
