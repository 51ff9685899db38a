#include "transcript_math.h"

namespace quire::ui {
namespace {

// The end of the code span opened by the run of backticks at `at`, or -1
// when no run of the same length closes it.
qsizetype codeSpanEnd(const QString& text, qsizetype at) {
  qsizetype run = 0;
  while (at + run < text.size() && text.at(at + run) == u'`')
    ++run;
  qsizetype i = at + run;
  while (i < text.size()) {
    if (text.at(i) != u'`') {
      ++i;
      continue;
    }
    qsizetype closing = 0;
    while (i + closing < text.size() && text.at(i + closing) == u'`')
      ++closing;
    if (closing == run) return i + closing;
    i += closing;
  }
  return -1;
}

bool blankLineBetween(const QString& text, qsizetype from, qsizetype to) {
  const qsizetype blank = text.indexOf(QStringLiteral("\n\n"), from);
  return blank >= 0 && blank < to;
}

}  // namespace

QList<MathSpan> findMathSpans(const QString& markdown) {
  QList<MathSpan> spans;
  qsizetype i = 0;
  const qsizetype n = markdown.size();
  while (i < n) {
    const QChar c = markdown.at(i);
    if (c == u'`') {
      const qsizetype end = codeSpanEnd(markdown, i);
      if (end < 0) {
        while (i < n && markdown.at(i) == u'`')
          ++i;
        continue;
      }
      i = end;
      continue;
    }
    if (c == u'\\' && i + 1 < n) {
      const QChar next = markdown.at(i + 1);
      if (next == u'(' || next == u'[') {
        const QString closing = next == u'(' ? QStringLiteral("\\)") : QStringLiteral("\\]");
        const qsizetype end = markdown.indexOf(closing, i + 2);
        if (end > i + 2 && !blankLineBetween(markdown, i, end)) {
          spans << MathSpan{i, end + 2 - i, next == u'['};
          i = end + 2;
          continue;
        }
      }
      i += 2;  // an escaped character, \$ among them
      continue;
    }
    if (c != u'$') {
      ++i;
      continue;
    }
    if (i + 1 < n && markdown.at(i + 1) == u'$') {
      const qsizetype end = markdown.indexOf(QStringLiteral("$$"), i + 2);
      if (end > i + 2 && !blankLineBetween(markdown, i, end)) {
        spans << MathSpan{i, end + 2 - i, true};
        i = end + 2;
      } else {
        i += 2;
      }
      continue;
    }
    // Inline: $ then no space ... no space then $ not followed by a digit.
    bool found = false;
    if (i + 1 < n && !markdown.at(i + 1).isSpace()) {
      for (qsizetype j = i + 1; j < n; ++j) {
        const QChar d = markdown.at(j);
        if (d == u'\\') {
          ++j;
          continue;
        }
        if (d == u'\n' && j + 1 < n && markdown.at(j + 1) == u'\n') break;
        if (d != u'$') continue;
        if (markdown.at(j - 1).isSpace() || (j + 1 < n && markdown.at(j + 1).isDigit())) break;
        spans << MathSpan{i, j + 1 - i, false};
        i = j + 1;
        found = true;
        break;
      }
    }
    if (!found) ++i;
  }
  return spans;
}

}  // namespace quire::ui
