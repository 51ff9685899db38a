#include "tool_reply.h"

#include <nlohmann/json.hpp>

#include "quire/engine/grammar/grammar.h"
#include "quire/engine/tools/tool_call_grammar.h"

namespace quire::gui {

void constrain_tool_calls(engine::JobRequest& job, engine::tools::ToolCallFormat format,
                          const QByteArray& tools) {
  if (tools.isEmpty() || format == engine::tools::ToolCallFormat::None) return;
  nlohmann::json list = nlohmann::json::parse(tools.toStdString(), nullptr, false);
  if (!list.is_array() || list.empty()) return;
  try {
    job.grammar = engine::tools::required_call_grammar(format, list);
  } catch (const engine::tools::ToolGrammarError&) {
    // Some tool's schema uses what a grammar cannot hold: the calls keep
    // their names and JSON objects for arguments, which the tool checks.
    for (nlohmann::json& tool : list) {
      if (tool.contains("function") && tool["function"].is_object())
        tool["function"]["parameters"] = {{"type", "object"}};
    }
    try {
      job.grammar = engine::tools::required_call_grammar(format, list);
    } catch (const engine::tools::ToolGrammarError&) {
      return;
    }
  }
  job.grammar_triggers = engine::tools::call_triggers(format);
}

ToolReplyReader::ToolReplyReader(engine::tools::ToolCallFormat format)
    : stream_(std::make_unique<engine::tools::ToolCallStream>(
          format, engine::tools::CallIdSource{},
          engine::tools::StreamOptions{.whole_calls = true})) {}

QString ToolReplyReader::feed(std::string_view text) {
  return QString::fromStdString(stream_->feed(text).content);
}

QString ToolReplyReader::finish() {
  return QString::fromStdString(stream_->finish().content);
}

}  // namespace quire::gui
