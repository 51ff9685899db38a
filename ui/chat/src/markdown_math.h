#pragma once

#include <QChar>
#include <QHash>
#include <QString>
#include <QTextFormat>

#include "quire/ui/math_delimiters.h"

class QColor;
class QTextCursor;
class QTextDocument;

namespace quire::ui {

// On a formula's image in a document: its source with delimiters ("$x^2$"),
// which copying the selection gives back in place of the image.
inline constexpr int kMathSourceProperty = QTextFormat::UserProperty + 0x4d61;

// Markdown with each formula swapped for one private-use character, so that
// the Markdown importer neither sees TeX (whose _ * \ it would read as
// emphasis and escapes) nor changes it; showMath puts the formulas back.
struct HiddenMath {
  QString markdown;
  QHash<QChar, MathSpan> formulas;  // by placeholder
  QHash<QChar, QString> sources;    // by placeholder: the delimited source
};

HiddenMath hideMath(const QString& markdown);

// Replaces each placeholder in `document` with its formula rendered in
// `colour` at the size of the text around it: inline on the text's baseline,
// display math as a centred paragraph of its own. A formula that does not
// render (broken TeX, KaTeX missing) shows its source in monospace, with the
// reason as its tool tip.
void showMath(QTextDocument* document, const HiddenMath& math, const QColor& colour);

// The text of a selection with each formula as its source: what Copy puts
// on the clipboard.
QString selectionSource(const QTextCursor& selection);

}  // namespace quire::ui
