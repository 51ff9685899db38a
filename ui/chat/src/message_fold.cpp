#include "message_fold.h"

namespace quire::ui {

std::optional<QString> foldedText(const QString& text, const FoldLimits& limits) {
  const qsizetype lines = text.count(u'\n') + 1;
  if (lines <= limits.afterLines && text.size() <= limits.afterChars) return std::nullopt;

  qsizetype end = 0;
  for (int line = 0; line < limits.shownLines && end < text.size(); ++line) {
    const qsizetype next = text.indexOf(u'\n', end);
    end = next < 0 ? text.size() : next + 1;
  }
  if (end > limits.shownChars) {
    end = limits.shownChars;
    // Cut between words when one ends reasonably near the limit.
    const qsizetype space = text.lastIndexOf(u' ', end);
    if (space > limits.shownChars * 4 / 5) end = space;
  }
  QString shown = text.left(end);
  while (!shown.isEmpty() && shown.back().isSpace())
    shown.chop(1);
  return shown + QStringLiteral(" …");
}

}  // namespace quire::ui
