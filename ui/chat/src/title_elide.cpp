#include "title_elide.h"

#include <QFontMetrics>
#include <QRegularExpression>

namespace quire::ui {

QString elide_title(const QFontMetrics& metrics, const QString& title, int width) {
  if (metrics.horizontalAdvance(title) <= width) return title;
  // A note is one parenthesized group at the end, after a space.
  static const QRegularExpression note_pattern(QStringLiteral("\\s\\([^()]*\\)$"));
  const QRegularExpressionMatch note = note_pattern.match(title);
  if (!note.hasMatch()) return metrics.elidedText(title, Qt::ElideRight, width);
  const QString suffix = note.captured(0);
  const QString base = title.left(note.capturedStart(0));
  const int room = width - metrics.horizontalAdvance(suffix);
  if (room >= metrics.horizontalAdvance(QString(QChar(0x2026)))) {
    return metrics.elidedText(base, Qt::ElideRight, room) + suffix;
  }
  // The middle goes: the start names the chat, the end keeps part of the note.
  return metrics.elidedText(title, Qt::ElideMiddle, width);
}

}  // namespace quire::ui
