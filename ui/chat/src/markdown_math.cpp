#include "markdown_math.h"

#include <QFontMetrics>
#include <QGuiApplication>
#include <QPainter>
#include <QSet>
#include <QTextBlock>
#include <QTextCursor>
#include <QTextDocument>
#include <QTextList>
#include <QUrl>
#include <cmath>

#include "quire/ui/math_renderer.h"

namespace quire::ui {
namespace {

constexpr char16_t kFirstPlaceholder = 0xE000;
constexpr char16_t kLastPlaceholder = 0xF8FF;

// QTextCharFormat's FontSizeAdjustment steps (-2..+4), as Qt scales them.
qreal sizeAdjustmentFactor(int step) {
  static constexpr qreal factors[] = {0.7, 0.8, 1.0, 1.2, 1.5, 2.0, 2.4};
  return factors[std::clamp(step + 2, 0, 6)];
}

// The font the text at `format` is drawn in: the document's, changed by what
// the format sets (a heading's size step, bold, italics).
QFont fontAt(const QTextDocument& document, const QTextCharFormat& format) {
  QFont font = document.defaultFont();
  if (format.hasProperty(QTextFormat::FontPointSize))
    font.setPointSizeF(format.fontPointSize());
  else if (format.hasProperty(QTextFormat::FontPixelSize))
    font.setPixelSize(format.intProperty(QTextFormat::FontPixelSize));
  else if (format.hasProperty(QTextFormat::FontSizeAdjustment) && font.pointSizeF() > 0)
    font.setPointSizeF(font.pointSizeF() *
                       sizeAdjustmentFactor(format.intProperty(QTextFormat::FontSizeAdjustment)));
  return font;
}

// Qt sets an AlignMiddle image with its middle half an x-height above the
// baseline. Padding the image above or below moves its middle so that the
// formula's own baseline lands on the text's.
QImage padImage(const MathImage& math, int xHeight, qreal* height) {
  const qreal ratio = math.image.devicePixelRatio();
  const qreal shift = xHeight / 2.0 - 2 * math.baseline + math.size.height();
  const int top = shift > 0 ? qRound(shift * ratio) : 0;
  const int bottom = shift < 0 ? qRound(-shift * ratio) : 0;
  if (top == 0 && bottom == 0) {
    *height = math.size.height();
    return math.image;
  }
  QImage padded(math.image.width(), math.image.height() + top + bottom, math.image.format());
  padded.fill(Qt::transparent);
  QImage source = math.image;
  source.setDevicePixelRatio(1);
  {
    QPainter painter(&padded);
    painter.drawImage(0, top, source);
  }
  padded.setDevicePixelRatio(ratio);
  *height = padded.height() / ratio;
  return padded;
}

// Padded images by the renderer's image (whose cache keeps it, and so its
// key) and the x-height: a reply rendered again reuses them, name and all.
QImage paddedForBaseline(const MathImage& math, int xHeight, qreal* height) {
  static QHash<std::pair<qint64, int>, QImage> padded;
  const std::pair<qint64, int> key{math.image.cacheKey(), xHeight};
  if (auto it = padded.constFind(key); it != padded.cend()) {
    *height = it->height() / it->devicePixelRatio();
    return *it;
  }
  if (padded.size() >= 4096) padded.clear();
  QImage image = padImage(math, xHeight, height);
  padded.insert(key, image);
  return image;
}

// Puts a display formula in a paragraph of its own when it shares one with
// text ("so\n$$x$$\nthus" is one Markdown paragraph), as pandoc does.
void isolateBlock(QTextCursor& cursor) {
  const QTextBlock block = cursor.block();
  const int offset = cursor.position() - block.position();
  const QString text = block.text();
  QTextList* list = block.textList();
  auto leaveList = [&](const QTextBlock& split) {
    if (!list) return;
    list->remove(split);
    QTextCursor indent(split);
    QTextBlockFormat format = split.blockFormat();
    format.setIndent(list->format().indent());
    indent.setBlockFormat(format);
  };
  if (offset + 1 < text.size()) {
    QTextCursor after(cursor.document());
    after.setPosition(cursor.position() + 1);
    if (text[offset + 1] == u' ') after.deleteChar();  // the soft line break
    after.insertBlock();
    leaveList(after.block());
  }
  if (offset > 0) {
    QTextCursor before(cursor.document());
    before.setPosition(cursor.position());
    if (text[offset - 1] == u' ') before.deletePreviousChar();
    before.insertBlock();
    leaveList(before.block());
    cursor.setPosition(before.position());
  }
}

}  // namespace

HiddenMath hideMath(const QString& markdown) {
  HiddenMath hidden;
  const QList<MathSpan> spans = findMath(markdown);
  if (spans.isEmpty()) {
    hidden.markdown = markdown;
    return hidden;
  }
  // Placeholders the text does not use itself.
  QSet<char16_t> used;
  for (QChar c : markdown) {
    if (c.unicode() >= kFirstPlaceholder && c.unicode() <= kLastPlaceholder)
      used.insert(c.unicode());
  }
  char16_t next = kFirstPlaceholder;
  qsizetype copied = 0;
  for (const MathSpan& span : spans) {
    while (next <= kLastPlaceholder && used.contains(next))
      ++next;
    if (next > kLastPlaceholder) break;  // thousands of formulas: the rest stay text
    const QChar placeholder(next++);
    hidden.markdown += QStringView(markdown).sliced(copied, span.start - copied);
    hidden.markdown += placeholder;
    hidden.formulas.insert(placeholder, span);
    hidden.sources.insert(placeholder, markdown.sliced(span.start, span.length));
    copied = span.start + span.length;
  }
  hidden.markdown += QStringView(markdown).sliced(copied);
  return hidden;
}

void showMath(QTextDocument* document, const HiddenMath& math, const QColor& colour) {
  const qreal ratio = qGuiApp ? qGuiApp->devicePixelRatio() : 1.0;
  for (auto it = math.formulas.cbegin(); it != math.formulas.cend(); ++it) {
    QTextCursor cursor = document->find(QString(it.key()));
    if (cursor.isNull()) continue;
    const MathSpan& span = it.value();
    const QString source = math.sources.value(it.key());
    const QTextCharFormat around = cursor.charFormat();
    const QFont font = fontAt(*document, around);
    const QColor ink =
        around.hasProperty(QTextFormat::ForegroundBrush) ? around.foreground().color() : colour;
    const MathResult<MathImage> image =
        MathRenderer::shared().render(span.tex, span.display, font, ink, ratio);
    if (!image.ok()) {
      QTextCharFormat fallback = around;
      fallback.setFontFixedPitch(true);
      fallback.setFontFamilies({QStringLiteral("monospace")});
      fallback.setToolTip(image.error());
      cursor.insertText(source, fallback);
      continue;
    }
    qreal height = 0;
    const QImage padded = paddedForBaseline(image.value(), QFontMetrics(font).xHeight(), &height);
    const QUrl name(QStringLiteral("quire-math:%1").arg(padded.cacheKey()));
    document->addResource(QTextDocument::ImageResource, name, padded);
    QTextImageFormat format;
    format.merge(around);
    format.setFont(font);
    format.setName(name.toString());
    format.setWidth(image.value().size.width());
    format.setHeight(height);
    format.setVerticalAlignment(QTextCharFormat::AlignMiddle);
    format.setProperty(kMathSourceProperty, source);
    format.setToolTip(source);
    cursor.insertImage(format);
    if (span.display) {
      cursor.setPosition(cursor.position() - 1);
      isolateBlock(cursor);
      QTextBlockFormat centred;
      centred.setAlignment(Qt::AlignHCenter);
      centred.setTopMargin(4);
      centred.setBottomMargin(4);
      cursor.mergeBlockFormat(centred);
    }
  }
}

QString selectionSource(const QTextCursor& selection) {
  const QString raw = selection.selectedText();
  const int start = selection.selectionStart();
  QString text;
  text.reserve(raw.size());
  QTextCursor probe(selection.document());
  for (qsizetype i = 0; i < raw.size(); ++i) {
    const QChar c = raw[i];
    if (c == QChar::ObjectReplacementCharacter) {
      probe.setPosition(start + static_cast<int>(i) + 1);
      const QString source = probe.charFormat().stringProperty(kMathSourceProperty);
      text += source.isEmpty() ? QString(c) : source;
    } else if (c == QChar::ParagraphSeparator || c == QChar::LineSeparator ||
               c.unicode() == 0xFDD0 || c.unicode() == 0xFDD1) {
      // Paragraph and line ends, and the edges of tables and other frames
      // (QTextBeginningOfFrame, QTextEndOfFrame), as QTextDocument's own
      // toPlainText writes them.
      text += u'\n';
    } else if (c == QChar::Nbsp) {
      text += u' ';
    } else {
      text += c;
    }
  }
  return text;
}

}  // namespace quire::ui
