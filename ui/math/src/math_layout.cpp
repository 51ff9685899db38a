#include "math_layout.h"

#include <QFontMetricsF>
#include <QRegularExpression>
#include <algorithm>

#include "math_fonts.h"
#include "math_layout_context.h"

namespace quire::ui {
namespace {

// TeX's atom classes, which decide the space between neighbours.
enum class Atom { Ord, Op, Bin, Rel, Open, Close, Punct, Skip };

constexpr QStringView kBinaryOperators = u"+−±∓×÷⋅·∗∘∙∩∪⊕⊖⊗⊘⊙∧∨∖⊎⊓⊔⋆⋄≀†‡▹◃△▽*";
constexpr QStringView kRelations =
    u"=<>≤≥≠≈≡≅∼≃∝∈∉∋⊂⊃⊆⊇⊊⊋→←↔⇒⇐⇔↦⟶⟵⟹⟸⟺≪≫≺≻⪯⪰∣∥⊥⊨⊢⊣:≔≐≜≦≧≲≳⊏⊐⊑⊒↑↓⇑⇓↗↘↙↖⇀↽≍⩽⩾";
constexpr QStringView kOpenings = u"([{⟨⌈⌊";
constexpr QStringView kClosings = u")]}⟩⌉⌋!";
constexpr QStringView kLargeOperators = u"∑∏∐∫∬∭∮∯∰⋀⋁⋂⋃⨀⨁⨂⨄⨆";
// Invisible operators: function application, invisible times, separator.
constexpr QStringView kInvisible = u"\u2061\u2062\u2063\u2064";

bool oneOf(const QString& text, QStringView set) {
  return text.size() == 1 && set.contains(text[0]);
}

MathFace faceForVariant(const QString& variant, MathFace fallback) {
  static const QHash<QString, MathFace> faces = {
      {QStringLiteral("normal"), MathFace::Main},
      {QStringLiteral("bold"), MathFace::MainBold},
      {QStringLiteral("italic"), MathFace::MathItalic},
      {QStringLiteral("bold-italic"), MathFace::MathBoldItalic},
      {QStringLiteral("double-struck"), MathFace::Ams},
      {QStringLiteral("script"), MathFace::Caligraphic},
      {QStringLiteral("bold-script"), MathFace::Script},
      {QStringLiteral("fraktur"), MathFace::Fraktur},
      {QStringLiteral("bold-fraktur"), MathFace::FrakturBold},
      {QStringLiteral("sans-serif"), MathFace::SansSerif},
      {QStringLiteral("bold-sans-serif"), MathFace::SansSerifBold},
      {QStringLiteral("sans-serif-italic"), MathFace::SansSerifItalic},
      {QStringLiteral("sans-serif-bold-italic"), MathFace::SansSerifBold},
      {QStringLiteral("monospace"), MathFace::Typewriter},
  };
  return faces.value(variant, fallback);
}

bool italicFace(MathFace face) {
  return face == MathFace::MathItalic || face == MathFace::MathBoldItalic ||
         face == MathFace::MainItalic || face == MathFace::MainBoldItalic ||
         face == MathFace::SansSerifItalic;
}

bool isStretchyFence(const MathNode& node) {
  if (node.tag != u"mo" || node.attribute(QStringLiteral("stretchy")) == u"false") return false;
  if (node.flag(QStringLiteral("fence")) || node.attributes.contains(QStringLiteral("minsize")))
    return true;
  return node.flag(QStringLiteral("stretchy")) && node.text.trimmed().size() == 1 &&
         QStringView(u"()[]{}|‖⟨⟩⌈⌉⌊⌋/\\").contains(node.text.trimmed()[0]);
}

Atom atomOf(const MathNode& node) {
  if (node.tag == u"mi" && node.text.trimmed().size() > 1) return Atom::Op;  // sin, lim
  if (node.tag == u"msub" || node.tag == u"msup" || node.tag == u"msubsup" ||
      node.tag == u"munder" || node.tag == u"mover" || node.tag == u"munderover") {
    if (!node.children.empty()) {
      const MathNode& base = node.children.front();
      if (const MathNode* op = singleOperator(base); op && isLargeOperator(op->text.trimmed()))
        return Atom::Op;
      if (base.tag == u"mrow" && !base.children.empty() && base.children.front().tag == u"mi" &&
          base.children.front().text.size() > 1)
        return Atom::Op;  // \lim_{x→0}, \max_i
    }
    return Atom::Ord;
  }
  if (node.tag != u"mo") return Atom::Ord;
  const QString text = node.text.trimmed();
  if (text.isEmpty() || oneOf(text, kInvisible)) return Atom::Skip;
  if (node.flag(QStringLiteral("separator")) || oneOf(text, u",;")) return Atom::Punct;
  if (isLargeOperator(text)) return Atom::Op;
  if (oneOf(text, kRelations)) return Atom::Rel;
  if (oneOf(text, kBinaryOperators)) return Atom::Bin;
  if (oneOf(text, kOpenings)) return Atom::Open;
  if (oneOf(text, kClosings)) return Atom::Close;
  return Atom::Ord;
}

// The space between two atoms in mu, as TeX's table has it; negative for the
// spaces that vanish in script styles.
int spaceBetween(Atom left, Atom right) {
  constexpr int thin = 3;
  constexpr int medium = -4;
  constexpr int thick = -5;
  switch (left) {
    case Atom::Ord:
      return right == Atom::Op    ? thin
             : right == Atom::Bin ? medium
             : right == Atom::Rel ? thick
                                  : 0;
    case Atom::Op:
      return right == Atom::Ord || right == Atom::Op ? thin : right == Atom::Rel ? thick : 0;
    case Atom::Bin:
      return right == Atom::Ord || right == Atom::Op || right == Atom::Open ? medium : 0;
    case Atom::Rel:
      return right == Atom::Ord || right == Atom::Op || right == Atom::Open ? thick : 0;
    case Atom::Close:
      return right == Atom::Op    ? thin
             : right == Atom::Bin ? medium
             : right == Atom::Rel ? thick
                                  : 0;
    case Atom::Punct:
      return -thin;
    default:
      return 0;
  }
}

}  // namespace

bool isLargeOperator(const QString& text) {
  return oneOf(text, kLargeOperators);
}

const MathNode* singleOperator(const MathNode& node) {
  if (node.tag == u"mo") return &node;
  if (node.tag == u"mrow" && node.children.size() == 1) return singleOperator(node.children[0]);
  return nullptr;
}

MathStyle MathStyle::script() const {
  MathStyle next = *this;
  next.level = level + 1;
  next.display = false;
  return next;
}

MathStyle MathStyle::fractionPart() const {
  if (display) {
    MathStyle next = *this;
    next.display = false;
    return next;
  }
  return script();
}

MathBox groupOf(std::vector<MathBox> parts) {
  MathBox group;
  for (const MathBox& part : parts) {
    group.width = std::max(group.width, part.offset.x() + part.width);
    group.ascent = std::max(group.ascent, part.ascent - part.offset.y());
    group.descent = std::max(group.descent, part.descent + part.offset.y());
  }
  group.children = std::move(parts);
  return group;
}

MathBox placed(MathBox box, qreal x, qreal y, const QString& role) {
  box.offset = {x, y};
  if (!role.isEmpty()) box.role = role;
  return box;
}

MathBox ruleBox(qreal x, qreal y, qreal width, qreal height, const QString& role) {
  MathBox rule;
  rule.kind = MathBox::Kind::Rule;
  rule.role = role;
  rule.rect = {0, 0, width, height};
  rule.width = width;
  rule.descent = height;
  rule.offset = {x, y};
  return rule;
}

void MathLayout::fail(const QString& message) {
  if (error_.isEmpty()) error_ = message;
}

std::optional<qreal> MathLayout::length(const QString& value, const MathStyle& style) const {
  static const QRegularExpression pattern(
      QStringLiteral(R"(^\s*([+-]?(?:\d+\.?\d*|\.\d+))\s*(em|ex|px|pt|mu)?\s*$)"));
  const QRegularExpressionMatch match = pattern.match(value);
  if (!match.hasMatch()) return std::nullopt;
  const qreal number = match.captured(1).toDouble();
  const QString unit = match.captured(2);
  const qreal em = style.em();
  if (unit == u"ex") return number * tex::kXHeight * em;
  if (unit == u"px") return number;
  if (unit == u"pt") return number * em / 10.0;  // TeX's 10pt em
  if (unit == u"mu") return number * tex::kMu * em;
  return number * em;
}

MathBox MathLayout::glyphs(const QString& text, MathFace face, const MathStyle& style) {
  static constexpr MathFace fallbacks[] = {MathFace::Main,  MathFace::MathItalic, MathFace::Ams,
                                           MathFace::Size1, MathFace::MainBold,   MathFace::Script};
  const qreal em = style.em();
  std::vector<MathBox> runs;
  qreal x = 0;
  qreal italic = 0;
  qsizetype i = 0;
  while (i < text.size()) {
    // The face of this character, then every following one it also has.
    const char32_t first = text.at(i).isHighSurrogate() && i + 1 < text.size()
                               ? QChar::surrogateToUcs4(text[i], text[i + 1])
                               : text[i].unicode();
    std::optional<MathFace> chosen;
    for (MathFace candidate : {face, fallbacks[0], fallbacks[1], fallbacks[2], fallbacks[3],
                               fallbacks[4], fallbacks[5]}) {
      const QRawFont raw = fonts_.font(candidate, em);
      if (raw.isValid() && raw.supportsCharacter(first)) {
        chosen = candidate;
        break;
      }
    }
    qsizetype end = i + (first > 0xFFFF ? 2 : 1);
    if (!chosen) {
      // No KaTeX face has it (CJK in \text{}, emoji): the system's fonts do.
      while (end < text.size() && !fonts_.font(face, em).supportsCharacter(text[end]))
        ++end;
      MathBox run;
      run.kind = MathBox::Kind::Text;
      run.text = text.sliced(i, end - i);
      run.textFont.setPixelSize(std::max(1, qRound(em * 0.9)));
      const QFontMetricsF metrics(run.textFont);
      run.width = metrics.horizontalAdvance(run.text);
      run.ascent = metrics.ascent();
      run.descent = metrics.descent();
      runs.push_back(placed(std::move(run), x, 0));
      x = runs.back().offset.x() + runs.back().width;
      italic = 0;
      i = end;
      continue;
    }
    const QRawFont raw = fonts_.font(*chosen, em);
    while (end < text.size() && !text[end].isSurrogate() && raw.supportsCharacter(text[end]))
      ++end;
    MathBox run;
    run.kind = MathBox::Kind::Glyphs;
    run.rawFont = raw;
    run.glyphs = raw.glyphIndexesForString(text.sliced(i, end - i));
    const QList<QPointF> advances = raw.advancesForGlyphIndexes(run.glyphs);
    qreal pen = 0;
    for (qsizetype g = 0; g < run.glyphs.size(); ++g) {
      run.positions.push_back({pen, 0});
      const QRectF ink = raw.boundingRect(run.glyphs[g]).translated(pen, 0);
      if (!ink.isEmpty()) run.ink = run.ink.isNull() ? ink : run.ink.united(ink);
      pen += advances[g].x();
      italic = italicFace(*chosen) ? std::max<qreal>(0, ink.right() - pen) : 0;
    }
    run.width = pen;
    run.ascent = std::max<qreal>(0, -run.ink.top());
    run.descent = std::max<qreal>(0, run.ink.bottom());
    runs.push_back(placed(std::move(run), x, 0));
    x += pen;
    i = end;
  }
  if (runs.size() == 1) {
    MathBox only = std::move(runs.front());
    only.offset = {};
    only.italic = italic;
    return only;
  }
  MathBox group = groupOf(std::move(runs));
  group.italic = italic;
  return group;
}

MathBox MathLayout::largeOperator(const QString& text, const MathStyle& style) {
  MathBox glyph = glyphs(text, style.display ? MathFace::Size2 : MathFace::Size1, style);
  // The big operators are drawn centred on the math axis.
  const qreal axis = tex::kAxisHeight * style.em();
  const qreal shift = -axis - (glyph.descent - glyph.ascent) / 2;
  glyph.italic = std::max<qreal>(0, glyph.ink.right() - glyph.width);
  MathBox group = groupOf({placed(std::move(glyph), 0, shift)});
  group.italic = group.children.front().italic;
  return group;
}

MathBox MathLayout::delimiter(const QString& text, qreal height, const MathStyle& style) {
  const qreal em = style.em();
  const qreal axis = tex::kAxisHeight * em;
  const char32_t c = text.isEmpty() ? 0 : text[0].unicode();
  MathBox best;
  bool found = false;
  for (MathFace face :
       {MathFace::Main, MathFace::Size1, MathFace::Size2, MathFace::Size3, MathFace::Size4}) {
    if (!fonts_.font(face, em).supportsCharacter(c)) continue;
    best = glyphs(text, face, style);
    found = true;
    if (best.height() >= height) break;
  }
  if (!found) return glyphs(text, MathFace::Main, style);
  const qreal centre = (best.descent - best.ascent) / 2;
  if (best.height() >= height || best.height() <= 0) {
    if (height <= 0) return best;  // as tall as text: sits on the baseline
    return groupOf({placed(std::move(best), 0, -axis - centre)});
  }
  // Taller than the largest glyph: the largest, stretched.
  const qreal scale = height / best.height();
  MathBox stretched = std::move(best);
  QTransform transform;
  transform.translate(0, -axis);
  transform.scale(1, scale);
  transform.translate(0, -centre);
  stretched.transform = transform;
  stretched.ascent = axis + height / 2;
  stretched.descent = height / 2 - axis;
  return stretched;
}

MathBox MathLayout::token(const MathNode& node, const MathStyle& style) {
  const QString text = node.tag == u"mtext" ? node.text : node.text.trimmed();
  const QString variant = node.attributes.value(QStringLiteral("mathvariant"), style.variant);
  MathBox box;
  if (node.tag == u"mi") {
    const bool single = text.size() == 1 || (text.size() == 2 && text[0].isHighSurrogate());
    box = glyphs(text, faceForVariant(variant, single ? MathFace::MathItalic : MathFace::Main),
                 style);
  } else if (node.tag == u"mo") {
    if (text.isEmpty() || oneOf(text, kInvisible))
      box = MathBox{};
    else if (isLargeOperator(text))
      box = largeOperator(text, style);
    else
      box = glyphs(text, faceForVariant(variant, MathFace::Main), style);
  } else {
    box = glyphs(text, faceForVariant(variant, MathFace::Main), style);
  }
  if (const QString colour = node.attribute(QStringLiteral("mathcolor")); !colour.isEmpty())
    box.colour = QColor::fromString(colour);
  return box;
}

MathBox MathLayout::row(const std::vector<MathNode>& children, const MathStyle& style) {
  std::vector<MathBox> boxes(children.size());
  std::vector<Atom> atoms(children.size());
  qreal ascent = 0;
  qreal descent = 0;
  for (std::size_t i = 0; i < children.size(); ++i) {
    atoms[i] = atomOf(children[i]);
    if (isStretchyFence(children[i])) continue;
    boxes[i] = layout(children[i], style);
    ascent = std::max(ascent, boxes[i].ascent);
    descent = std::max(descent, boxes[i].descent);
  }
  // \left and \right: tall enough for what they enclose, as TeX sizes them
  // (delimiterfactor 901, delimitershortfall 5pt).
  const qreal axis = tex::kAxisHeight * style.em();
  const qreal reach = std::max(ascent - axis, descent + axis);
  const qreal wanted = std::max(reach * 2 * 0.901, reach * 2 - 0.5 * style.em());
  for (std::size_t i = 0; i < children.size(); ++i) {
    if (!isStretchyFence(children[i])) continue;
    const MathNode& fence = children[i];
    qreal height = ascent + descent > 1.2 * style.em() ? wanted : 0;
    if (auto size = length(fence.attribute(QStringLiteral("minsize")), style)) height = *size;
    boxes[i] = delimiter(fence.text.trimmed(), height, style);
  }
  // A binary operator with nothing to combine on its left is unary (−x).
  Atom previous = Atom::Skip;
  for (std::size_t i = 0; i < atoms.size(); ++i) {
    if (atoms[i] == Atom::Skip) continue;
    if (atoms[i] == Atom::Bin &&
        (previous == Atom::Skip || previous == Atom::Bin || previous == Atom::Op ||
         previous == Atom::Rel || previous == Atom::Open || previous == Atom::Punct))
      atoms[i] = Atom::Ord;
    previous = atoms[i];
  }
  for (std::size_t i = atoms.size(); i-- > 0;) {
    if (atoms[i] != Atom::Bin) continue;
    std::size_t next = i + 1;
    while (next < atoms.size() && atoms[next] == Atom::Skip)
      ++next;
    if (next == atoms.size() || atoms[next] == Atom::Rel || atoms[next] == Atom::Close ||
        atoms[next] == Atom::Punct)
      atoms[i] = Atom::Ord;
  }

  const qreal mu = tex::kMu * style.em();
  std::vector<MathBox> parts;
  qreal x = 0;
  std::optional<std::size_t> last;
  for (std::size_t i = 0; i < children.size(); ++i) {
    if (last && atoms[i] != Atom::Skip) {
      const int space = spaceBetween(atoms[*last], atoms[i]);
      if (space > 0 || style.level == 0) x += std::abs(space) * mu;
    }
    const auto& attributes = children[i].attributes;
    if (auto lspace = length(attributes.value(QStringLiteral("lspace")), style)) x += *lspace;
    MathBox& box = boxes[i];
    const qreal width = box.width;
    parts.push_back(placed(std::move(box), x, 0));
    x += width;
    if (auto rspace = length(attributes.value(QStringLiteral("rspace")), style)) x += *rspace;
    if (atoms[i] != Atom::Skip) last = i;
  }
  MathBox group = groupOf(std::move(parts));
  group.width = std::max(group.width, x);
  if (!group.children.empty()) group.italic = group.children.back().italic;
  return group;
}

MathBox MathLayout::layout(const MathNode& node, const MathStyle& inherited) {
  MathStyle style = inherited;
  if (const QString colour = node.attribute(QStringLiteral("mathcolor")); !colour.isEmpty())
    style.colour = QColor::fromString(colour);
  const QString& tag = node.tag;
  MathBox box;
  if (tag == u"mi" || tag == u"mn" || tag == u"mo" || tag == u"mtext" || tag == u"ms") {
    box = token(node, style);
  } else if (tag == u"math" || tag == u"mrow" || tag == u"mtd" || tag == u"merror") {
    box = row(node.children, style);
  } else if (tag == u"semantics") {
    if (!node.children.empty()) box = layout(node.children.front(), style);
  } else if (tag == u"mstyle") {
    const QString level = node.attribute(QStringLiteral("scriptlevel"));
    if (level.startsWith(u'+') || level.startsWith(u'-'))
      style.level = std::max(0, style.level + level.toInt());
    else if (!level.isEmpty())
      style.level = std::max(0, level.toInt());
    if (const QString display = node.attribute(QStringLiteral("displaystyle")); !display.isEmpty())
      style.display = display == u"true";
    if (const QString variant = node.attribute(QStringLiteral("mathvariant")); !variant.isEmpty())
      style.variant = variant;
    box = row(node.children, style);
  } else if (tag == u"mspace") {
    box.width = length(node.attribute(QStringLiteral("width")), style).value_or(0);
    box.ascent = length(node.attribute(QStringLiteral("height")), style).value_or(0);
    box.descent = length(node.attribute(QStringLiteral("depth")), style).value_or(0);
  } else if (tag == u"mphantom") {
    box = row(node.children, style);
    box.phantom = true;
  } else if (tag == u"mfrac") {
    box = fraction(node, style);
  } else if (tag == u"msub" || tag == u"msup" || tag == u"msubsup") {
    box = scripts(node, style);
  } else if (tag == u"munder" || tag == u"mover" || tag == u"munderover") {
    box = underOver(node, style);
  } else if (tag == u"msqrt" || tag == u"mroot") {
    box = radical(node, style);
  } else if (tag == u"mtable") {
    box = table(node, style);
  } else if (tag == u"menclose") {
    box = enclose(node, style);
  } else if (tag == u"mpadded") {
    box = padded(node, style);
  } else if (tag == u"none" || tag == u"mprescripts" || tag == u"annotation") {
    // Nothing to show.
  } else {
    fail(QStringLiteral("The MathML element <%1> is not supported").arg(tag));
  }
  if (style.colour.isValid() && !box.colour.isValid()) box.colour = style.colour;
  if (const QString background = node.attribute(QStringLiteral("mathbackground"));
      !background.isEmpty()) {
    // \colorbox: a filled rectangle behind the box.
    MathBox fill = ruleBox(0, -box.ascent, box.width, box.height());
    fill.colour = QColor::fromString(background);
    const qreal width = box.width;
    box = groupOf({std::move(fill), placed(std::move(box), 0, 0)});
    box.width = width;
  }
  return box;
}

MathResult<MathBox> layoutMath(const MathNode& math, qreal emPixels, MathFonts& fonts) {
  if (const QString error = fonts.error(); !error.isEmpty())
    return MathResult<MathBox>::failure(error);
  MathStyle style;
  style.baseEm = emPixels;
  style.display = math.attribute(QStringLiteral("display")) == u"block";
  MathLayout layout(fonts);
  MathBox box = layout.layout(math, style);
  if (!layout.error().isEmpty()) return MathResult<MathBox>::failure(layout.error());
  return box;
}

}  // namespace quire::ui
