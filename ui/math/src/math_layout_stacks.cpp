// The stacked and enclosing elements: fractions, scripts, limits and accents,
// radicals, tables, frames, padding. Constants are TeX's (Appendix G of the
// TeXbook), as KaTeX applies them.
#include <QStringList>
#include <algorithm>

#include "math_layout_context.h"

namespace quire::ui {
namespace {

bool hasChildren(MathLayout& layout, const MathNode& node, std::size_t count) {
  if (node.children.size() == count) return true;
  layout.fail(QStringLiteral("<%1> needs %2 children, it has %3")
                  .arg(node.tag)
                  .arg(count)
                  .arg(node.children.size()));
  return false;
}

// A letter or digit: scripts go at TeX's fixed shifts rather than at the
// drops from a compound base's edges.
bool isCharacter(const MathNode& node) {
  const QString text = node.text.trimmed();
  return (node.tag == u"mi" || node.tag == u"mn" || node.tag == u"mo") && text.size() == 1 &&
         !isLargeOperator(text);
}

bool isHorizontalRule(const QString& text) {
  return text == u"‾" || text == u"¯" || text == u"_" || text == u"\u0332";
}

// The n-th of a space-separated list, the last one repeating.
QString nthOf(const QString& list, std::size_t n) {
  const QStringList items = list.split(u' ', Qt::SkipEmptyParts);
  if (items.isEmpty()) return {};
  return items[static_cast<qsizetype>(std::min<std::size_t>(n, items.size() - 1))];
}

}  // namespace

MathBox MathLayout::fraction(const MathNode& node, const MathStyle& style) {
  if (!hasChildren(*this, node, 2)) return {};
  const MathStyle part = style.fractionPart();
  MathBox numerator = layout(node.children[0], part);
  MathBox denominator = layout(node.children[1], part);
  const qreal em = style.em();
  const qreal axis = tex::kAxisHeight * em;
  const qreal thickness = length(node.attribute(QStringLiteral("linethickness")), style)
                              .value_or(tex::kRuleThickness * em);
  qreal up = 0;
  qreal down = (style.display ? tex::kDenom1 : tex::kDenom2) * em;
  if (thickness > 0) {
    up = (style.display ? tex::kNum1 : tex::kNum2) * em;
    const qreal clearance = style.display ? 3 * thickness : thickness;
    const qreal above = (up - numerator.descent) - (axis + thickness / 2);
    if (above < clearance) up += clearance - above;
    const qreal below = (axis - thickness / 2) - (denominator.ascent - down);
    if (below < clearance) down += clearance - below;
  } else {
    up = (style.display ? tex::kNum1 : tex::kNum3) * em;
    const qreal clearance = (style.display ? 7 : 3) * tex::kRuleThickness * em;
    const qreal gap = (up - numerator.descent) - (denominator.ascent - down);
    if (gap < clearance) {
      up += (clearance - gap) / 2;
      down += (clearance - gap) / 2;
    }
  }
  const qreal pad = tex::kNullDelimiterSpace * em;
  const qreal inner = std::max(numerator.width, denominator.width);
  std::vector<MathBox> parts;
  const qreal numeratorX = pad + (inner - numerator.width) / 2;
  const qreal denominatorX = pad + (inner - denominator.width) / 2;
  parts.push_back(placed(std::move(numerator), numeratorX, -up, QStringLiteral("numerator")));
  parts.push_back(
      placed(std::move(denominator), denominatorX, down, QStringLiteral("denominator")));
  if (thickness > 0)
    parts.push_back(
        ruleBox(pad, -axis - thickness / 2, inner, thickness, QStringLiteral("fraction-bar")));
  MathBox box = groupOf(std::move(parts));
  box.width = inner + 2 * pad;
  return box;
}

MathBox MathLayout::scripts(const MathNode& node, const MathStyle& style) {
  const bool hasSub = node.tag != u"msup";
  const bool hasSup = node.tag != u"msub";
  if (!hasChildren(*this, node, hasSub && hasSup ? 3 : 2)) return {};
  MathBox base = layout(node.children[0], style);
  const MathStyle scriptStyle = style.script();
  MathBox sub = hasSub ? layout(node.children[1], scriptStyle) : MathBox{};
  MathBox sup = hasSup ? layout(node.children[hasSub ? 2 : 1], scriptStyle) : MathBox{};
  const qreal em = style.em();
  const qreal scriptEm = scriptStyle.em();
  const qreal xHeight = tex::kXHeight * em;
  const bool character = isCharacter(node.children[0]);
  qreal up = character ? 0 : base.ascent - tex::kSupDrop * scriptEm;
  qreal down = character ? 0 : base.descent + tex::kSubDrop * scriptEm;
  if (!hasSup) {
    down = std::max({down, tex::kSub1 * em, sub.ascent - 0.8 * xHeight});
  } else {
    up = std::max(
        {up, (style.display ? tex::kSup1 : tex::kSup2) * em, sup.descent + 0.25 * xHeight});
    if (hasSub) {
      down = std::max(down, tex::kSub2 * em);
      const qreal rule = tex::kRuleThickness * em;
      const qreal gap = (up - sup.descent) - (sub.ascent - down);
      if (gap < 4 * rule) {
        down += 4 * rule - gap;
        const qreal lift = 0.8 * xHeight - (up - sup.descent);
        if (lift > 0) {
          up += lift;
          down -= lift;
        }
      }
    }
  }
  const qreal x = base.width;
  const qreal supX = x + base.italic;
  const qreal space = tex::kScriptSpace * em;
  qreal width = x;
  std::vector<MathBox> parts;
  parts.push_back(placed(std::move(base), 0, 0, QStringLiteral("base")));
  if (hasSup) {
    width = std::max(width, supX + sup.width + space);
    parts.push_back(placed(std::move(sup), supX, -up, QStringLiteral("superscript")));
  }
  if (hasSub) {
    width = std::max(width, x + sub.width + space);
    parts.push_back(placed(std::move(sub), x, down, QStringLiteral("subscript")));
  }
  MathBox box = groupOf(std::move(parts));
  box.width = width;
  return box;
}

MathBox MathLayout::stretchedAccent(const MathNode& node, qreal width, const MathStyle& style) {
  const QString text = node.text.trimmed();
  const qreal em = style.em();
  const qreal thickness = tex::kRuleThickness * em;
  if (isHorizontalRule(text)) return groupOf({ruleBox(0, -thickness, width, thickness)});
  if (text == u"⏞" || text == u"⏟") {
    // Braces over or under a long base: drawn, no font has them wide.
    const qreal h = 0.25 * em;
    const bool over = text == u"⏞";
    const qreal edge = over ? h : 0;
    const qreal tip = over ? 0 : h;
    const qreal mid = h / 2;
    QPainterPath path;
    path.moveTo(0, edge);
    path.quadTo(0, mid, h, mid);
    path.lineTo(width / 2 - h, mid);
    path.quadTo(width / 2, mid, width / 2, tip);
    path.quadTo(width / 2, mid, width / 2 + h, mid);
    path.lineTo(width - h, mid);
    path.quadTo(width, mid, width, edge);
    MathBox brace;
    brace.kind = MathBox::Kind::Stroke;
    brace.path = path.translated(0, -h);
    brace.penWidth = 1.5 * thickness;
    brace.width = width;
    brace.ascent = h;
    return brace;
  }
  MathBox glyph = glyphs(text, MathFace::Main, style);
  if (glyph.kind != MathBox::Kind::Glyphs || glyph.width <= 0 || glyph.width >= width) return glyph;
  // Arrows, hats and tildes over a wide base: the glyph, widened.
  const qreal scale = width / glyph.width;
  glyph.transform.scale(scale, 1);
  glyph.ink = QRectF(glyph.ink.left() * scale, glyph.ink.top(), glyph.ink.width() * scale,
                     glyph.ink.height());
  glyph.width = width;
  return glyph;
}

MathBox MathLayout::underOver(const MathNode& node, const MathStyle& style) {
  const bool hasUnder = node.tag != u"mover";
  const bool hasOver = node.tag != u"munder";
  if (!hasChildren(*this, node, hasUnder && hasOver ? 3 : 2)) return {};
  const MathNode* op = singleOperator(node.children[0]);
  if (!style.display && op && op->flag(QStringLiteral("movablelimits"))) {
    // Limits of an operator in running text go beside it.
    MathNode asScripts = node;
    asScripts.tag = hasUnder && hasOver ? QStringLiteral("msubsup")
                    : hasUnder          ? QStringLiteral("msub")
                                        : QStringLiteral("msup");
    return scripts(asScripts, style);
  }
  MathBox base = layout(node.children[0], style);
  const qreal em = style.em();
  const qreal rule = tex::kRuleThickness * em;
  const MathStyle limitStyle = style.script();

  auto build = [&](const MathNode& part, bool accent, bool& stretched) {
    const MathNode* mo = singleOperator(part);
    stretched =
        mo && (mo->flag(QStringLiteral("stretchy")) || isHorizontalRule(mo->text.trimmed()) ||
               mo->text.trimmed() == u"⏞" || mo->text.trimmed() == u"⏟");
    if (stretched) return stretchedAccent(*mo, base.width, accent ? style : limitStyle);
    return layout(part, accent ? style : limitStyle);
  };

  bool overStretched = false;
  bool underStretched = false;
  const bool accent = node.flag(QStringLiteral("accent"));
  const bool accentUnder = node.flag(QStringLiteral("accentunder"));
  MathBox over =
      hasOver ? build(node.children[hasUnder ? 2 : 1], accent, overStretched) : MathBox{};
  MathBox under = hasUnder ? build(node.children[1], accentUnder, underStretched) : MathBox{};
  const qreal width = std::max({base.width, over.width, under.width});
  const qreal baseX = (width - base.width) / 2;
  const qreal baseAscent = base.ascent;
  const qreal baseDescent = base.descent;
  std::vector<MathBox> parts;
  if (hasOver) {
    qreal y = 0;
    qreal x = (width - over.width) / 2;
    if (overStretched) {
      y = -(baseAscent + 2 * rule + over.descent);
    } else if (accent) {
      // Accent glyphs sit on an x-height letter: lift them by what the base
      // rises above that, and centre their ink on the base.
      y = -std::max<qreal>(0, baseAscent - tex::kXHeight * em);
      if (!over.ink.isNull()) x = baseX + base.width / 2 - over.ink.center().x();
    } else {
      y = -(baseAscent +
            std::max(tex::kBigOpSpacing1 * em, tex::kBigOpSpacing3 * em - over.descent) +
            over.descent);
    }
    parts.push_back(placed(std::move(over), x, y, QStringLiteral("over")));
  }
  if (hasUnder) {
    qreal y = 0;
    if (underStretched || accentUnder)
      y = baseDescent + 2 * rule + under.ascent;
    else
      y = baseDescent +
          std::max(tex::kBigOpSpacing2 * em, tex::kBigOpSpacing4 * em - under.ascent) +
          under.ascent;
    parts.push_back(
        placed(std::move(under), (width - under.width) / 2, y, QStringLiteral("under")));
  }
  parts.insert(parts.begin(), placed(std::move(base), baseX, 0, QStringLiteral("base")));
  MathBox box = groupOf(std::move(parts));
  box.width = std::max(box.width, width);
  return box;
}

MathBox MathLayout::radical(const MathNode& node, const MathStyle& style) {
  const bool root = node.tag == u"mroot";
  if (root && !hasChildren(*this, node, 2)) return {};
  MathBox radicand = root ? layout(node.children[0], style) : row(node.children, style);
  const qreal em = style.em();
  const qreal rule = tex::kRuleThickness * em;
  const qreal gap = rule + (style.display ? tex::kXHeight * em : rule) / 4;
  // A radical is never shorter than one over an x with a descender.
  const qreal ascent = std::max(radicand.ascent, 0.6 * em);
  const qreal descent = std::max(radicand.descent, 0.16 * em);
  const qreal top = -(ascent + gap + rule);
  const qreal bottom = descent + 0.04 * em;
  const qreal height = bottom - top;
  const qreal surdWidth = 0.56 * em + std::max<qreal>(0, 0.06 * (height - em));

  // The surd: a short tick, a heavy down stroke, a thin up stroke, the bar.
  const qreal tickY = top + 0.58 * height;
  const qreal barEnd = surdWidth + radicand.width + 0.06 * em;
  MathBox surd;
  surd.role = QStringLiteral("surd");
  QPainterPath thin;
  thin.moveTo(0.02 * em, tickY + 0.05 * em);
  thin.lineTo(0.13 * em, tickY - 0.02 * em);
  MathBox tick;
  tick.kind = MathBox::Kind::Stroke;
  tick.path = thin;
  tick.penWidth = 1.1 * rule;
  QPainterPath heavy;
  heavy.moveTo(0.13 * em, tickY - 0.02 * em);
  heavy.lineTo(0.30 * em, bottom - rule);
  MathBox down;
  down.kind = MathBox::Kind::Stroke;
  down.path = heavy;
  down.penWidth = 2.2 * rule;
  QPainterPath rising;
  rising.moveTo(0.30 * em, bottom - rule);
  rising.lineTo(surdWidth, top + rule / 2);
  rising.lineTo(barEnd, top + rule / 2);
  MathBox up;
  up.kind = MathBox::Kind::Stroke;
  up.path = rising;
  up.penWidth = rule;
  surd.children = {tick, down, up};
  surd.width = surdWidth;
  surd.ascent = -top;
  surd.descent = bottom;

  qreal shift = 0;
  std::vector<MathBox> parts;
  if (root) {
    MathStyle indexStyle = style.script();
    indexStyle.level = style.level + 2;
    MathBox index = layout(node.children[1], indexStyle);
    const qreal before = 5 * tex::kMu * em;
    shift = std::max<qreal>(0, before + index.width - 10 * tex::kMu * em);
    const qreal indexY = bottom - 0.6 * height - index.descent;
    parts.push_back(placed(std::move(index), before, indexY, QStringLiteral("index")));
  }
  parts.push_back(placed(std::move(surd), shift, 0));
  parts.push_back(placed(std::move(radicand), shift + surdWidth, 0, QStringLiteral("radicand")));
  MathBox box = groupOf(std::move(parts));
  box.width = shift + barEnd + 0.04 * em;
  return box;
}

MathBox MathLayout::table(const MathNode& node, const MathStyle& style) {
  const qreal em = style.em();
  struct Row {
    std::vector<MathBox> cells;
    qreal ascent = 0;
    qreal descent = 0;
  };
  std::vector<Row> rows;
  std::vector<qreal> widths;
  for (const MathNode& tr : node.children) {
    if (tr.tag != u"mtr" && tr.tag != u"mlabeledtr") {
      fail(QStringLiteral("<mtable> holds <%1> where a row was expected").arg(tr.tag));
      return {};
    }
    Row row;
    // Struts, as KaTeX's arrays have: rows of short entries keep their pitch.
    row.ascent = 0.7 * em;
    row.descent = 0.3 * em;
    const std::size_t first = tr.tag == u"mlabeledtr" ? 1 : 0;  // the label goes
    for (std::size_t c = first; c < tr.children.size(); ++c) {
      MathBox cell = layout(tr.children[c], style);
      row.ascent = std::max(row.ascent, cell.ascent);
      row.descent = std::max(row.descent, cell.descent);
      const std::size_t column = c - first;
      if (widths.size() <= column) widths.resize(column + 1, 0);
      widths[column] = std::max(widths[column], cell.width);
      row.cells.push_back(std::move(cell));
    }
    rows.push_back(std::move(row));
  }
  const QString columnAlign = node.attribute(QStringLiteral("columnalign"));
  const QString columnSpacing = node.attribute(QStringLiteral("columnspacing"));
  const QString rowSpacing = node.attribute(QStringLiteral("rowspacing"));
  const QString columnLines = node.attribute(QStringLiteral("columnlines"));
  std::vector<qreal> columnX(widths.size(), 0);
  qreal x = 0;
  for (std::size_t c = 0; c < widths.size(); ++c) {
    columnX[c] = x;
    x += widths[c];
    if (c + 1 < widths.size()) x += length(nthOf(columnSpacing, c), style).value_or(0.8 * em);
  }
  const qreal totalWidth = x;
  std::vector<qreal> baselines;
  qreal y = 0;
  for (std::size_t r = 0; r < rows.size(); ++r) {
    if (r > 0)
      y += rows[r - 1].descent + length(nthOf(rowSpacing, r - 1), style).value_or(0.2 * em);
    y += rows[r].ascent;
    baselines.push_back(y);
  }
  const qreal totalHeight = rows.empty() ? 0 : y + rows.back().descent;
  // The table is centred on the math axis.
  const qreal top = -tex::kAxisHeight * em - totalHeight / 2;
  std::vector<MathBox> parts;
  for (std::size_t r = 0; r < rows.size(); ++r) {
    for (std::size_t c = 0; c < rows[r].cells.size(); ++c) {
      MathBox& cell = rows[r].cells[c];
      const QString align = nthOf(columnAlign, c);
      const qreal slack = widths[c] - cell.width;
      const qreal cellX = columnX[c] + (align == u"left"    ? 0
                                        : align == u"right" ? slack
                                                            : slack / 2);
      parts.push_back(placed(std::move(cell), cellX, top + baselines[r]));
    }
  }
  for (std::size_t c = 0; c + 1 < widths.size(); ++c) {
    const QString line = nthOf(columnLines, c);
    if (line != u"solid" && line != u"dashed") continue;
    const qreal lineX = (columnX[c] + widths[c] + columnX[c + 1]) / 2;
    parts.push_back(ruleBox(lineX, top, tex::kRuleThickness * em, totalHeight));
  }
  MathBox box = groupOf(std::move(parts));
  box.width = totalWidth;
  box.ascent = std::max(box.ascent, -top);
  box.descent = std::max(box.descent, top + totalHeight);
  return box;
}

MathBox MathLayout::enclose(const MathNode& node, const MathStyle& style) {
  MathBox content = row(node.children, style);
  const QStringList notations =
      node.attribute(QStringLiteral("notation")).split(u' ', Qt::SkipEmptyParts);
  const qreal em = style.em();
  const qreal rule = tex::kRuleThickness * em;
  const bool framed = notations.contains(u"box") || notations.contains(u"roundedbox");
  const qreal pad = framed ? 0.3 * em : 0;
  const qreal w = content.width + 2 * (pad + (framed ? rule : 0));
  const qreal ascent = content.ascent + pad + (framed ? rule : 0);
  const qreal descent = content.descent + pad + (framed ? rule : 0);
  std::vector<MathBox> parts;
  const qreal contentX = pad + (framed ? rule : 0);
  parts.push_back(placed(std::move(content), contentX, 0));
  const bool top = framed || notations.contains(u"top");
  const bool bottom = framed || notations.contains(u"bottom");
  if (top) parts.push_back(ruleBox(0, -ascent, w, rule));
  if (bottom) parts.push_back(ruleBox(0, descent - rule, w, rule));
  if (framed || notations.contains(u"left"))
    parts.push_back(ruleBox(0, -ascent, rule, ascent + descent));
  if (framed || notations.contains(u"right"))
    parts.push_back(ruleBox(w - rule, -ascent, rule, ascent + descent));
  auto strike = [&](QPointF from, QPointF to) {
    MathBox line;
    line.kind = MathBox::Kind::Stroke;
    QPainterPath path;
    path.moveTo(from);
    path.lineTo(to);
    line.path = path;
    line.penWidth = rule;
    parts.push_back(std::move(line));
  };
  if (notations.contains(u"updiagonalstrike")) strike({0, descent}, {w, -ascent});
  if (notations.contains(u"downdiagonalstrike")) strike({0, -ascent}, {w, descent});
  if (notations.contains(u"horizontalstrike"))
    strike({0, -tex::kAxisHeight * em}, {w, -tex::kAxisHeight * em});
  MathBox box = groupOf(std::move(parts));
  box.width = std::max(box.width, w);
  return box;
}

MathBox MathLayout::padded(const MathNode& node, const MathStyle& style) {
  MathBox content = row(node.children, style);
  // A signed value changes the content's own size; a plain one replaces it.
  auto adjust = [&](const QString& name, qreal current) {
    const QString value = node.attribute(name).trimmed();
    const std::optional<qreal> amount = length(value, style);
    if (!amount) return current;
    return value.startsWith(u'+') || value.startsWith(u'-') ? current + *amount : *amount;
  };
  const qreal width = adjust(QStringLiteral("width"), content.width);
  const qreal ascent = adjust(QStringLiteral("height"), content.ascent);
  const qreal descent = adjust(QStringLiteral("depth"), content.descent);
  const qreal lspace = length(node.attribute(QStringLiteral("lspace")), style).value_or(0);
  const qreal voffset = length(node.attribute(QStringLiteral("voffset")), style).value_or(0);
  MathBox box = groupOf({placed(std::move(content), lspace, -voffset)});
  box.width = std::max<qreal>(0, width);
  // voffset moves the content, not the box (MathML's mpadded).
  box.ascent = std::max<qreal>(0, ascent);
  box.descent = std::max<qreal>(0, descent);
  return box;
}

}  // namespace quire::ui
