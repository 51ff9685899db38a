#pragma once

// A chat reply's text, as the engine streams it, into what OpenAI's API
// sends: content, reasoning and tool calls. With the template's think tags a
// leading <think>...</think> block is reasoning (the space after it is
// dropped); the rest goes through the format's ToolCallStream. Calls are
// sent whole, once their arguments are complete, so that a stream never
// shows a call that breaks off later; content streams as it comes.

#include <string>
#include <string_view>
#include <vector>

#include "quire/engine/tools/tool_call_parser.h"
#include "quire/server/completion_job.h"
#include "quire/server/openai_response.h"

namespace quire::server::detail {

class ReplyShaper {
 public:
  explicit ReplyShaper(ReplyShape shape, engine::tools::CallIdSource ids = {});

  ChatDelta feed(std::string_view text);
  // The reply has ended: what was held back.
  ChatDelta finish();

  // After finish(): the whole reply.
  const std::string& content() const { return content_; }
  const std::string& reasoning() const { return reasoning_; }
  const std::vector<FunctionCall>& calls() const { return calls_; }
  // Why a call broke off; empty when none did.
  const std::string& broken_reason() const { return calls_stream_.reply().broken_reason; }

  // The whole reply of a finished job as a response's choice.
  static Choice choice_of(ReplyShape shape, std::string_view text, FinishReason finish);

 private:
  enum class Phase { Opening, Thinking, Body };
  void split(bool at_end, ChatDelta& out);
  void to_body(std::string_view text, ChatDelta& out);
  void add(engine::tools::StreamDelta delta, ChatDelta& out);

  ReplyShape shape_;
  engine::tools::ToolCallStream calls_stream_;
  Phase phase_ = Phase::Body;
  std::string pending_;             // text not yet routed
  bool body_space_pending_ = true;  // the body's leading space is dropped
  std::string content_;
  std::string reasoning_;
  std::vector<FunctionCall> calls_;
};

}  // namespace quire::server::detail
