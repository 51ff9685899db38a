#pragma once

#include <QColor>
#include <QFont>
#include <QList>
#include <QPainterPath>
#include <QPointF>
#include <QRawFont>
#include <QRectF>
#include <QString>
#include <QTransform>
#include <optional>
#include <vector>

class QPainter;

namespace quire::ui {

// A laid-out piece of a formula, TeX style: a width, a height above the
// baseline (ascent) and a depth below it (descent), and what to paint. All in
// device-independent pixels; y grows downwards, the origin is on the baseline
// at the left edge.
struct MathBox {
  enum class Kind {
    Group,   // only children
    Glyphs,  // `glyphs` of `rawFont` at `positions`, drawn through `transform`
    Text,    // `text` in `textFont`: characters no KaTeX font has
    Rule,    // `rect` filled
    Stroke,  // `path` stroked with a pen of `penWidth`
  };

  Kind kind = Kind::Group;
  // What the box is in its parent ("numerator", "superscript", "radicand"…):
  // lets tests check the layout's geometry; empty for most boxes.
  QString role;
  QPointF offset;  // of this box's origin in its parent's
  qreal width = 0;
  qreal ascent = 0;
  qreal descent = 0;
  // How far the ink of a slanted last letter overhangs `width` (TeX's italic
  // correction): a superscript moves right by it.
  qreal italic = 0;
  // Glyphs: the union of the glyphs' ink, for centring accents.
  QRectF ink;
  QColor colour;  // invalid: the parent's
  bool phantom = false;

  QRawFont rawFont;
  QList<quint32> glyphs;
  QList<QPointF> positions;
  QTransform transform;
  QFont textFont;
  QString text;
  QRectF rect;
  QPainterPath path;
  qreal penWidth = 0;

  std::vector<MathBox> children;

  qreal height() const { return ascent + descent; }
  // The box's extent around its own origin.
  QRectF bounds() const { return {0, -ascent, width, ascent + descent}; }
};

// The extent of the first box with `role`, depth first, in `root`'s
// coordinates; nullopt when there is none.
std::optional<QRectF> findRole(const MathBox& root, const QString& role);

// The extent of `box` and everything in it, around its origin: larger than
// bounds() where content is smashed, lapped or raised out of its box.
QRectF paintedBounds(const MathBox& box);

// Paints `box` with its origin at `origin`, in `colour` where no box says
// otherwise.
void paintBox(QPainter& painter, const MathBox& box, QPointF origin, const QColor& colour);

}  // namespace quire::ui
