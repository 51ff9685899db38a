#pragma once

#include <QColor>
#include <QString>
#include <optional>

#include "math_box.h"
#include "math_fonts.h"
#include "mathml_tree.h"

namespace quire::ui {

// TeX's font parameters (cmsy10 and cmex10, as KaTeX uses them), in ems.
namespace tex {
inline constexpr qreal kAxisHeight = 0.25;
inline constexpr qreal kXHeight = 0.431;
inline constexpr qreal kRuleThickness = 0.04;
inline constexpr qreal kSup1 = 0.413;  // superscript shift, display style
inline constexpr qreal kSup2 = 0.363;  // other styles
inline constexpr qreal kSub1 = 0.15;   // subscript alone
inline constexpr qreal kSub2 = 0.247;  // subscript under a superscript
inline constexpr qreal kSupDrop = 0.386;
inline constexpr qreal kSubDrop = 0.05;
inline constexpr qreal kNum1 = 0.677;    // numerator shift, display
inline constexpr qreal kNum2 = 0.394;    // text style, with a bar
inline constexpr qreal kNum3 = 0.444;    // text style, no bar
inline constexpr qreal kDenom1 = 0.686;  // denominator shift, display
inline constexpr qreal kDenom2 = 0.345;  // text style
inline constexpr qreal kBigOpSpacing1 = 0.111;
inline constexpr qreal kBigOpSpacing2 = 0.166;
inline constexpr qreal kBigOpSpacing3 = 0.2;
inline constexpr qreal kBigOpSpacing4 = 0.6;
inline constexpr qreal kScriptSpace = 0.05;
inline constexpr qreal kNullDelimiterSpace = 0.12;
inline constexpr qreal kMu = 1.0 / 18.0;
}  // namespace tex

// What an element inherits from its ancestors.
struct MathStyle {
  qreal baseEm = 16;  // pixels of an em at script level 0
  int level = 0;      // script level: 0 text, 1 script, 2 and more scriptscript
  bool display = false;
  QString variant;  // mathvariant of an enclosing mstyle
  QColor colour;    // invalid: the renderer's

  qreal em() const { return baseEm * (level == 0 ? 1.0 : level == 1 ? 0.7 : 0.5); }
  MathStyle script() const;
  // The style of a fraction's numerator and denominator.
  MathStyle fractionPart() const;
};

// The layout of one formula: recursive over MathML, collecting the first
// error instead of throwing, so that a formula it cannot set falls back to
// its source.
class MathLayout {
 public:
  explicit MathLayout(MathFonts& fonts) : fonts_(fonts) {}

  MathBox layout(const MathNode& node, const MathStyle& style);
  const QString& error() const { return error_; }

  // math_layout.cpp: rows, tokens, glyphs, spacing.
  MathBox row(const std::vector<MathNode>& children, const MathStyle& style);
  MathBox token(const MathNode& node, const MathStyle& style);
  // `text` in `face`, each character missing from it taken from the next
  // KaTeX face that has it, or from the system's fonts.
  MathBox glyphs(const QString& text, MathFace face, const MathStyle& style);
  // A delimiter (parenthesis, bracket, bar…) covering `height` around the axis.
  MathBox delimiter(const QString& text, qreal height, const MathStyle& style);
  MathBox largeOperator(const QString& text, const MathStyle& style);
  std::optional<qreal> length(const QString& value, const MathStyle& style) const;
  void fail(const QString& message);

  // math_layout_stacks.cpp: everything stacked or enclosing.
  MathBox fraction(const MathNode& node, const MathStyle& style);
  MathBox scripts(const MathNode& node, const MathStyle& style);
  MathBox underOver(const MathNode& node, const MathStyle& style);
  MathBox radical(const MathNode& node, const MathStyle& style);
  MathBox table(const MathNode& node, const MathStyle& style);
  MathBox enclose(const MathNode& node, const MathStyle& style);
  MathBox padded(const MathNode& node, const MathStyle& style);
  // A horizontal accent or brace stretched to `width`.
  MathBox stretchedAccent(const MathNode& node, qreal width, const MathStyle& style);

 private:
  MathFonts& fonts_;
  QString error_;
};

// Boxes from parts: each part's offset is set; the group's extent is their
// union around the origin.
MathBox groupOf(std::vector<MathBox> parts);
// A child placed at (x, y) with a role.
MathBox placed(MathBox box, qreal x, qreal y, const QString& role = {});
MathBox ruleBox(qreal x, qreal y, qreal width, qreal height, const QString& role = {});
// Whether the node is a single operator (<mo>), perhaps wrapped in an mrow.
const MathNode* singleOperator(const MathNode& node);
bool isLargeOperator(const QString& text);

}  // namespace quire::ui
