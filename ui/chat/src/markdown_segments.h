#pragma once

#include <QList>
#include <QString>

namespace quire::ui {

// A reply split at its fenced code blocks: prose goes to Qt's Markdown
// renderer, and each code block becomes its own widget with a Copy button.
struct MarkdownSegment {
  enum class Kind { Prose, Code };

  Kind kind = Kind::Prose;
  // Prose: Markdown source. Code: the code exactly, without the fences.
  QString text;
  // Code: the first word of the fence's info string ("python"), may be empty.
  QString language;
  // Code: false while the closing fence has not arrived yet (streaming).
  bool closed = true;

  friend bool operator==(const MarkdownSegment&, const MarkdownSegment&) = default;
};

// Splits at top-level fenced code blocks as CommonMark defines them: a fence
// of at least three backticks or tildes indented by at most three spaces,
// closed by a fence of the same character at least as long. An unclosed block
// runs to the end of the text. Prose that is only whitespace is dropped.
QList<MarkdownSegment> splitFencedCode(const QString& markdown);

}  // namespace quire::ui
