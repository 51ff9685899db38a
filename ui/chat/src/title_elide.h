#pragma once

// Chat titles cut to a width without losing what tells copies apart: a
// title's closing parenthesized note ("(branch)", "(imported 2)") stays whole
// and the text before it gives way, so a branch never reads as a duplicate
// of the chat it came from.

#include <QString>

class QFontMetrics;

namespace quire::ui {

// `title` as it fits `width` pixels in `metrics`: whole when it fits; a
// title without a closing note elided at the right; one with a note has its
// base elided at the right, then the note whole, and when not even the note
// fits beside an ellipsis, the whole title is elided in the middle.
QString elide_title(const QFontMetrics& metrics, const QString& title, int width);

}  // namespace quire::ui
