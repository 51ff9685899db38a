#include "quire/ui/math_renderer.h"

#include <QCoreApplication>
#include <QFontInfo>
#include <QPainter>
#include <cmath>

#include "katex_engine.h"
#include "math_box.h"
#include "math_fonts.h"
#include "math_layout.h"
#include "mathml_tree.h"

namespace quire::ui {
namespace {

// KaTeX sets math at 1.21 times the surrounding text on the web; next to the
// larger x-height of a UI sans serif (DejaVu Sans, Noto Sans) a little more
// makes the letters look the same size.
constexpr qreal kMathToTextScale = 1.25;
// Ink of accents and of big operators may stray a little outside the boxes;
// sideways only a slanted last letter does, by its italic correction.
constexpr qreal kImageMarginEm = 0.12;
constexpr qreal kImageSideMarginEm = 0.04;
// Enough for every formula of a long conversation; past it the cache starts
// over rather than growing without end.
constexpr qsizetype kMaxCached = 4096;

MathRenderer* sharedRenderer = nullptr;

}  // namespace

qreal mathEmPixels(const QFont& font) {
  return QFontInfo(font).pixelSize() * kMathToTextScale;
}

MathRenderer::MathRenderer()
    : katex_(std::make_unique<KatexEngine>()), fonts_(std::make_unique<MathFonts>()) {}

MathRenderer::~MathRenderer() = default;

MathRenderer& MathRenderer::shared() {
  if (!sharedRenderer) {
    sharedRenderer = new MathRenderer;
    // Before QCoreApplication goes: QJSEngine must not outlive it.
    qAddPostRoutine([] {
      delete sharedRenderer;
      sharedRenderer = nullptr;
    });
  }
  return *sharedRenderer;
}

MathResult<QString> MathRenderer::toMathML(const QString& tex, bool display) {
  const std::pair<QString, bool> key{tex, display};
  if (auto it = mathml_.constFind(key); it != mathml_.cend()) return *it;
  if (mathml_.size() >= kMaxCached) mathml_.clear();
  ++katexRuns_;
  MathResult<QString> result = katex_->toMathML(tex, display);
  mathml_.insert(key, result);
  return result;
}

MathResult<MathImage> MathRenderer::render(const QString& tex, bool display, const QFont& font,
                                           const QColor& colour, qreal devicePixelRatio) {
  const qreal em = mathEmPixels(font);
  const Key key{tex, display, em, colour.rgba(), devicePixelRatio};
  if (auto it = images_.constFind(key); it != images_.cend()) return *it;
  if (images_.size() >= kMaxCached) images_.clear();

  auto remember = [&](MathResult<MathImage> result) {
    images_.insert(key, result);
    return result;
  };
  const MathResult<QString> mathml = toMathML(tex, display);
  if (!mathml.ok()) return remember(MathResult<MathImage>::failure(mathml.error()));
  const MathResult<MathNode> tree = parseMathML(mathml.value());
  if (!tree.ok()) return remember(MathResult<MathImage>::failure(tree.error()));
  ++layouts_;
  const MathResult<MathBox> box = layoutMath(tree.value(), em, *fonts_);
  if (!box.ok()) return remember(MathResult<MathImage>::failure(box.error()));

  const MathBox& formula = box.value();
  // Content smashed or lapped out of the formula's box is painted too.
  const QRectF extent = paintedBounds(formula);
  const qreal margin = std::ceil(kImageMarginEm * em);
  const qreal side = std::ceil(kImageSideMarginEm * em) + std::ceil(-extent.left());
  const qreal right = std::ceil(std::max(kImageSideMarginEm * em, formula.italic)) +
                      std::ceil(extent.right() - formula.width);
  const qreal top = margin + std::ceil(-extent.top() - formula.ascent);
  const qreal bottom = margin + std::ceil(extent.bottom() - formula.descent);
  const QSize pixels(qCeil((side + formula.width + right) * devicePixelRatio),
                     qCeil((top + formula.height() + bottom) * devicePixelRatio));
  MathImage image;
  image.image = QImage(pixels.expandedTo({1, 1}), QImage::Format_ARGB32_Premultiplied);
  image.image.setDevicePixelRatio(devicePixelRatio);
  image.image.fill(Qt::transparent);
  image.size = QSizeF(image.image.size()) / devicePixelRatio;
  image.baseline = top + formula.ascent;
  {
    QPainter painter(&image.image);
    painter.setRenderHint(QPainter::Antialiasing);
    painter.setRenderHint(QPainter::TextAntialiasing);
    paintBox(painter, formula, {side, image.baseline}, colour);
  }
  return remember(std::move(image));
}

}  // namespace quire::ui
