#include "math_box.h"

#include <QGlyphRun>
#include <QPainter>

namespace quire::ui {
namespace {

std::optional<QRectF> findRoleAt(const MathBox& box, const QString& role, QPointF origin) {
  if (box.role == role) return box.bounds().translated(origin);
  for (const MathBox& child : box.children) {
    if (auto found = findRoleAt(child, role, origin + child.offset)) return found;
  }
  return std::nullopt;
}

}  // namespace

std::optional<QRectF> findRole(const MathBox& root, const QString& role) {
  return findRoleAt(root, role, {0, 0});
}

QRectF paintedBounds(const MathBox& box) {
  QRectF extent = box.bounds();
  for (const MathBox& child : box.children) {
    if (child.phantom) continue;
    extent = extent.united(paintedBounds(child).translated(child.offset));
  }
  return extent;
}

void paintBox(QPainter& painter, const MathBox& box, QPointF origin, const QColor& colour) {
  if (box.phantom) return;
  const QColor ink = box.colour.isValid() ? box.colour : colour;
  switch (box.kind) {
    case MathBox::Kind::Group:
      break;
    case MathBox::Kind::Glyphs: {
      QGlyphRun run;
      run.setRawFont(box.rawFont);
      run.setGlyphIndexes(box.glyphs);
      run.setPositions(box.positions);
      painter.save();
      painter.translate(origin);
      painter.setTransform(box.transform, true);
      painter.setPen(ink);
      painter.drawGlyphRun({0, 0}, run);
      painter.restore();
      break;
    }
    case MathBox::Kind::Text:
      painter.setPen(ink);
      painter.setFont(box.textFont);
      painter.drawText(origin, box.text);
      break;
    case MathBox::Kind::Rule:
      painter.fillRect(box.rect.translated(origin), ink);
      break;
    case MathBox::Kind::Stroke: {
      QPen pen(ink, box.penWidth, Qt::SolidLine, Qt::FlatCap, Qt::MiterJoin);
      painter.save();
      painter.setPen(pen);
      painter.setBrush(Qt::NoBrush);
      painter.drawPath(box.path.translated(origin));
      painter.restore();
      break;
    }
  }
  for (const MathBox& child : box.children)
    paintBox(painter, child, origin + child.offset, ink);
}

}  // namespace quire::ui
