#pragma once

#include <QList>
#include <QString>

namespace quire::ui {

// One formula found in Markdown prose.
struct MathSpan {
  qsizetype start = 0;   // of the opening delimiter in the prose
  qsizetype length = 0;  // delimiters included
  QString tex;           // between the delimiters, untrimmed
  bool display = false;  // $$…$$ and \[…\]

  friend bool operator==(const MathSpan&, const MathSpan&) = default;
};

// The formulas of Markdown prose (code fences already split off), in order:
// $$…$$ and \[…\] as display math, $…$ and \(…\) inline, by the rules of
// pandoc's tex_math_dollars that markdown-it-texmath follows too: an opening $
// is not followed by white space, a closing $ is not preceded by white space
// nor followed by a digit, so "$5 and $10" stays text. \$ is a literal dollar.
// Nothing inside a code span or an indented code block is math, and no formula
// crosses a blank line. A formula whose closing delimiter has not arrived yet
// (a streaming reply) is not reported: it stays text until it is complete.
QList<MathSpan> findMath(const QString& prose);

}  // namespace quire::ui
