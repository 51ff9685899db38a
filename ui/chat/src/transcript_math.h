#pragma once

// LaTeX math in a reply's prose, found by its delimiters so that an export
// can keep it apart from the Markdown around it: $$…$$ and \[…\] for blocks,
// $…$ and \(…\) inline. A $ opens math only when the next character is no
// space and closes it only after one that is none and before no digit ("$5
// and $10" stays text); \$ is a dollar sign; code spans are left alone; math
// never runs over a blank line.

#include <QList>
#include <QString>

namespace quire::ui {

struct MathSpan {
  qsizetype start = 0;   // of the opening delimiter
  qsizetype length = 0;  // delimiters included
  bool display = false;
};

QList<MathSpan> findMathSpans(const QString& markdown);

}  // namespace quire::ui
