#pragma once

// From a model's generated text to content and tool calls, whole or streamed.
//
//   ToolCallStream stream(ToolCallFormat::Hermes);
//   for (piece : generated) send(stream.feed(piece));   // content and call deltas
//   send(stream.finish());
//   const ParsedReply& reply = stream.reply();          // == parse_tool_calls(whole text)
//
// The stream holds back only text that may still become part of a call: a
// suffix that is the beginning of a marker, and whitespace that would be
// dropped if a call follows it. A call's first delta carries its index, id
// and name; later ones carry fragments of its arguments as the model writes
// them, as OpenAI streams them.
//
// A reply that begins a call and breaks it off (generation ends inside it, the
// arguments are not a JSON object, the markers are out of order) is not a
// tool call: reply() gives the whole text as content with `broken` set, and
// the stream sends the broken call's text as content. A stream cannot take
// back deltas already sent for earlier calls; the server ends such a reply
// with the finish reason the flag calls for.
//
// The text must be decoded with special tokens spelled out (<|python_tag|>,
// [TOOL_CALLS], Harmony's <|channel|>), since they are the markers.

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "quire/engine/tools/tool_call.h"

namespace quire::engine::tools {

struct ParsedReply {
  std::string content;
  // Harmony's analysis channel: the model's reasoning, not part of the answer.
  std::string reasoning;
  std::vector<ToolCall> tool_calls;
  // A call was begun and broken off: content is the whole text, no calls.
  bool broken = false;
  // Why, for people: "generation ended inside a tool call", ...
  std::string broken_reason;

  friend bool operator==(const ParsedReply&, const ParsedReply&) = default;
};

// One piece of a streamed call, as in OpenAI's delta.tool_calls[].
struct ToolCallDelta {
  std::size_t index = 0;  // the call's position in the reply
  std::string id;         // only in a call's first delta
  std::string name;       // only in a call's first delta
  std::string arguments;  // the next fragment, possibly empty

  friend bool operator==(const ToolCallDelta&, const ToolCallDelta&) = default;
};

struct StreamDelta {
  std::string content;
  std::string reasoning;
  std::vector<ToolCallDelta> tool_calls;

  bool empty() const { return content.empty() && reasoning.empty() && tool_calls.empty(); }
  friend bool operator==(const StreamDelta&, const StreamDelta&) = default;
};

struct StreamOptions {
  // Send each call only once it is complete (its first delta then carries
  // the whole arguments), so that a stream never shows a call that breaks
  // off later; content still streams as it comes.
  bool whole_calls = false;
};

namespace detail {
class Family;
}

class ToolCallStream {
 public:
  // With ToolCallFormat::None every byte is content. `ids` makes the id of
  // each call (new_call_id by default).
  explicit ToolCallStream(ToolCallFormat format, CallIdSource ids = {}, StreamOptions options = {});
  ~ToolCallStream();
  ToolCallStream(ToolCallStream&&) noexcept;
  ToolCallStream& operator=(ToolCallStream&&) noexcept;

  // The next piece of generated text (any split, even inside a UTF-8
  // character or a marker). Returns what can be sent now.
  StreamDelta feed(std::string_view text);
  // Generation has ended: returns what was held back. Further feeds throw
  // std::logic_error.
  StreamDelta finish();
  // The reply so far; after finish(), the same as parse_tool_calls on the
  // whole text (with the same ids).
  const ParsedReply& reply() const { return reply_; }
  bool finished() const { return finished_; }

 private:
  void advance(bool at_end, StreamDelta& out);
  bool scan_text(bool at_end, StreamDelta& out);
  bool scan_section(bool at_end, StreamDelta& out);
  void break_off(std::string reason, StreamDelta& out);
  void emit_content(std::string_view text, StreamDelta& out);

  // A call of the current section whose first delta has been sent.
  struct Announced {
    std::string id;
    std::string name;
    std::size_t arguments_sent = 0;
  };

  CallIdSource ids_;
  StreamOptions options_;
  std::unique_ptr<const detail::Family> family_;
  std::string text_;         // everything fed
  std::size_t pos_ = 0;      // text_[0, pos_) is decided
  bool in_section_ = false;  // text_[pos_, ...) begins a section
  bool after_section_ = false;
  bool any_section_ = false;
  bool passthrough_ = false;  // after a break: everything is content
  bool finished_ = false;
  bool to_reasoning_ = false;  // Harmony: the text now is the analysis channel
  std::string dropped_space_;  // the space before the current section
  std::vector<Announced> announced_;
  ParsedReply reply_;
};

// The whole text at once: a stream fed once and finished.
ParsedReply parse_tool_calls(ToolCallFormat format, std::string_view text, CallIdSource ids = {});

}  // namespace quire::engine::tools
