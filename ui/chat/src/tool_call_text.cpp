#include "tool_call_text.h"

#include <QCoreApplication>
#include <QJsonDocument>
#include <QJsonObject>

namespace quire::ui {
namespace {

QString tr(const char* text) {
  return QCoreApplication::translate("quire::ui::ToolCallCard", text);
}

// "Done · 412 characters", or "Done" without a summary.
QString withSummary(const QString& state, const QString& separator, const QString& summary) {
  return summary.isEmpty() ? state : state + separator + summary;
}

// Lays valid JSON out two spaces per level. Written here rather than through
// QJsonDocument::toJson, which sorts an object's keys and rewrites numbers:
// the card shows the arguments in the model's order and spelling.
QString indentJson(const QString& json) {
  constexpr int kIndent = 2;
  QString out;
  int depth = 0;
  bool inString = false;
  bool escaped = false;
  const auto newLine = [&out, &depth] {
    out += u'\n';
    out += QString(depth * kIndent, u' ');
  };
  for (qsizetype i = 0; i < json.size(); ++i) {
    const QChar c = json.at(i);
    if (inString) {
      out += c;
      if (escaped)
        escaped = false;
      else if (c == u'\\')
        escaped = true;
      else if (c == u'"')
        inString = false;
      continue;
    }
    if (c.isSpace()) continue;
    if (c == u'{' || c == u'[') {
      const QChar closer = c == u'{' ? u'}' : u']';
      qsizetype next = i + 1;
      while (next < json.size() && json.at(next).isSpace())
        ++next;
      if (next < json.size() && json.at(next) == closer) {  // {} and [] stay on one line
        out += c;
        out += closer;
        i = next;
        continue;
      }
      out += c;
      ++depth;
      newLine();
    } else if (c == u'}' || c == u']') {
      --depth;
      newLine();
      out += c;
    } else if (c == u',') {
      out += c;
      newLine();
    } else if (c == u':') {
      out += QStringLiteral(": ");
    } else {
      if (c == u'"') inString = true;
      out += c;
    }
  }
  return out;
}

}  // namespace

QString toolCallTitle(const ToolCallView& call) {
  if (call.server.isEmpty()) return call.tool;
  return call.server + QStringLiteral(" › ") + call.tool;
}

QString prettyToolArguments(const QString& arguments) {
  const QString trimmed = arguments.trimmed();
  if (trimmed.isEmpty()) return tr("No arguments");
  QJsonParseError error;
  const QJsonDocument document = QJsonDocument::fromJson(trimmed.toUtf8(), &error);
  if (error.error != QJsonParseError::NoError || document.isNull()) return arguments;
  if (document.isObject() && document.object().isEmpty()) return tr("No arguments");
  return indentJson(trimmed);
}

QString toolCallStateText(const ToolCallView& call) {
  using State = ToolCallView::State;
  const QString dot = QStringLiteral(" · ");
  const QString colon = QStringLiteral(": ");
  switch (call.state) {
    case State::AwaitingApproval:
      return tr("Waiting for your approval");
    case State::Running:
      return tr("Running…");
    case State::Done:
      return withSummary(tr("Done"), dot, call.summary);
    case State::Failed:
      return withSummary(tr("Failed"), colon, call.summary);
    case State::Denied:
      return withSummary(tr("Denied: not run"), dot, call.summary);
    case State::TimedOut:
      return withSummary(tr("Timed out"), colon, call.summary);
    case State::Cancelled:
      return withSummary(tr("Cancelled"), colon, call.summary);
  }
  return {};
}

bool isToolCallFailure(ToolCallView::State state) {
  return state == ToolCallView::State::Failed || state == ToolCallView::State::TimedOut;
}

}  // namespace quire::ui
