#pragma once

// A chat reply that may call tools, on the engine thread: the lazy grammar
// that holds a call, once the model begins one, to its tool's input schema,
// and the reader that sends the reply's content to the chat as it streams
// and keeps the calls apart.

#include <QByteArray>
#include <QString>
#include <memory>
#include <string_view>

#include "quire/engine/generator/job.h"
#include "quire/engine/tools/tool_call_parser.h"

namespace quire::gui {

// Gives `job` the grammar of one call of `tools` (OpenAI's function list as
// JSON text) in `format`, lazy: the reply is free until the model writes the
// format's opening marker. A tool whose schema the grammar cannot hold
// (a keyword it cannot enforce) keeps only its name and an object for its
// arguments. Nothing changes for an empty list or a format without calls.
void constrain_tool_calls(engine::JobRequest& job, engine::tools::ToolCallFormat format,
                          const QByteArray& tools);

class ToolReplyReader {
 public:
  explicit ToolReplyReader(engine::tools::ToolCallFormat format);

  // The content to show for the next piece of the reply (text that may
  // still begin a call is held back; the calls never show as text).
  QString feed(std::string_view text);
  // The reply has ended: the rest of its content.
  QString finish();
  const engine::tools::ParsedReply& reply() const { return stream_->reply(); }

 private:
  std::unique_ptr<engine::tools::ToolCallStream> stream_;
};

}  // namespace quire::gui
