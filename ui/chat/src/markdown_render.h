#pragma once

#include <QString>

class QPalette;
class QTextDocument;

namespace quire::ui {

// Fills `document` from Markdown with Qt's own importer (GitHub dialect), then
// adjusts what Qt leaves plain for a chat: heading sizes a step smaller than
// Qt's defaults, and a tinted background behind inline code and indented code
// blocks, taken from `palette`; formulas ($…$, $$…$$, \(…\), \[…\]) as images
// in the palette's text colour (markdown_math.h).
void renderMarkdown(QTextDocument* document, const QString& markdown, const QPalette& palette);

}  // namespace quire::ui
