// The Markdown form of a chat: a heading per message, the text as written.

#include <QStringList>

#include "quire/app/store/chat_export.h"

namespace quire::store {
namespace {

QString heading(Role role) {
  switch (role) {
    case Role::System:
      return QStringLiteral("## System");
    case Role::User:
      return QStringLiteral("## User");
    case Role::Assistant:
      return QStringLiteral("## Assistant");
  }
  return {};
}

// A CommonMark fence line: up to three spaces, then three or more ` or ~.
// Returns the fence run ("```", "~~~~"), or an empty string.
QString fence_of(const QString& line) {
  qsizetype i = 0;
  while (i < line.size() && i < 3 && line.at(i) == QLatin1Char(' '))
    ++i;
  if (i >= line.size()) return {};
  const QChar mark = line.at(i);
  if (mark != QLatin1Char('`') && mark != QLatin1Char('~')) return {};
  qsizetype end = i;
  while (end < line.size() && line.at(end) == mark)
    ++end;
  if (end - i < 3) return {};
  return line.mid(i, end - i);
}

// The fence a message leaves open at its end, or an empty string.
QString open_fence(const QString& text) {
  QString open;
  for (const QString& line : text.split(QLatin1Char('\n'))) {
    const QString fence = fence_of(line);
    if (fence.isEmpty()) continue;
    if (open.isEmpty()) {
      open = fence;
    } else if (fence.at(0) == open.at(0) && fence.size() >= open.size() &&
               line.trimmed() == fence) {
      open.clear();  // a closing fence: same mark, at least as long, nothing after it
    }
  }
  return open;
}

}  // namespace

QString chat_to_markdown(const ChatDocument& document) {
  const QString title = document.title.simplified();
  QStringList blocks{QStringLiteral("# ") +
                     (title.isEmpty() ? QStringLiteral("Untitled chat") : title)};
  for (const Message& message : current_path(document)) {
    blocks << heading(message.role);
    QString text = message.text;
    while (text.endsWith(QLatin1Char('\n')))
      text.chop(1);
    if (text.isEmpty()) continue;
    const QString fence = open_fence(text);
    if (!fence.isEmpty()) text += QLatin1Char('\n') + fence;
    blocks << text;
  }
  return blocks.join(QStringLiteral("\n\n")) + QLatin1Char('\n');
}

}  // namespace quire::store
