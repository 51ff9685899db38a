#include "reply_shaper.h"

#include <algorithm>
#include <utility>

namespace quire::server::detail {
namespace {

constexpr std::string_view kOpenThink = "<think>";
constexpr std::string_view kCloseThink = "</think>";

bool is_space(char c) {
  return c == ' ' || c == '\n' || c == '\t' || c == '\r';
}

std::string_view without_leading_space(std::string_view text) {
  while (!text.empty() && is_space(text.front()))
    text.remove_prefix(1);
  return text;
}

// The length of the longest suffix of `text` that begins `marker` without
// being all of it: text that may still become the marker.
std::size_t marker_start_suffix(std::string_view text, std::string_view marker) {
  for (std::size_t length = std::min(text.size(), marker.size() - 1); length > 0; --length) {
    if (marker.starts_with(text.substr(text.size() - length))) return length;
  }
  return 0;
}

}  // namespace

ReplyShaper::ReplyShaper(ReplyShape shape, engine::tools::CallIdSource ids)
    : shape_(shape),
      calls_stream_(shape.format, std::move(ids),
                    engine::tools::StreamOptions{.whole_calls = true}) {
  if (shape_.think_tags) phase_ = shape_.starts_in_reasoning ? Phase::Thinking : Phase::Opening;
  body_space_pending_ = shape_.starts_in_reasoning;
}

ChatDelta ReplyShaper::feed(std::string_view text) {
  pending_ += text;
  ChatDelta out;
  split(false, out);
  return out;
}

ChatDelta ReplyShaper::finish() {
  ChatDelta out;
  split(true, out);
  add(calls_stream_.finish(), out);
  const engine::tools::ParsedReply& reply = calls_stream_.reply();
  content_ = reply.content;
  reasoning_ += reply.reasoning;
  for (const engine::tools::ToolCall& call : reply.tool_calls) {
    if (!shape_.parallel && !calls_.empty()) break;
    calls_.push_back({call.id, call.name, call.arguments});
  }
  return out;
}

void ReplyShaper::split(bool at_end, ChatDelta& out) {
  while (true) {
    switch (phase_) {
      case Phase::Opening: {
        const std::string_view start = without_leading_space(pending_);
        if (start.starts_with(kOpenThink)) {
          pending_.erase(0, pending_.size() - start.size() + kOpenThink.size());
          phase_ = Phase::Thinking;
          body_space_pending_ = true;
          continue;
        }
        // Wait while the reply may still open a think block.
        if (!at_end && kOpenThink.starts_with(start)) return;
        phase_ = Phase::Body;
        continue;
      }
      case Phase::Thinking: {
        const std::size_t close = pending_.find(kCloseThink);
        if (close != std::string::npos) {
          out.reasoning += pending_.substr(0, close);
          reasoning_ += pending_.substr(0, close);
          pending_.erase(0, close + kCloseThink.size());
          phase_ = Phase::Body;
          continue;
        }
        const std::size_t held = at_end ? 0 : marker_start_suffix(pending_, kCloseThink);
        const std::string thought = pending_.substr(0, pending_.size() - held);
        out.reasoning += thought;
        reasoning_ += thought;
        pending_.erase(0, thought.size());
        return;
      }
      case Phase::Body:
        if (body_space_pending_) {
          // The blank lines after </think> are layout, not the answer.
          const std::string_view rest = without_leading_space(pending_);
          pending_.erase(0, pending_.size() - rest.size());
          if (pending_.empty()) return;
          body_space_pending_ = false;
        }
        if (!pending_.empty()) to_body(std::exchange(pending_, {}), out);
        return;
    }
  }
}

void ReplyShaper::to_body(std::string_view text, ChatDelta& out) {
  add(calls_stream_.feed(text), out);
}

void ReplyShaper::add(engine::tools::StreamDelta delta, ChatDelta& out) {
  out.content += delta.content;
  out.reasoning += delta.reasoning;
  for (engine::tools::ToolCallDelta& part : delta.tool_calls) {
    if (!shape_.parallel && part.index > 0) continue;
    out.calls.push_back(
        {part.index, std::move(part.id), std::move(part.name), std::move(part.arguments)});
  }
}

Choice ReplyShaper::choice_of(ReplyShape shape, std::string_view text, FinishReason finish) {
  ReplyShaper shaper(shape);
  shaper.feed(text);
  shaper.finish();
  Choice choice;
  choice.text = shaper.content();
  choice.reasoning = shaper.reasoning();
  choice.tool_calls = shaper.calls();
  choice.tool_call_error = shaper.broken_reason();
  choice.finish = choice.tool_calls.empty() ? finish : FinishReason::ToolCalls;
  return choice;
}

}  // namespace quire::server::detail
