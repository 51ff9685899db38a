#include "markdown_render.h"

#include <QPalette>
#include <QTextBlock>
#include <QTextCursor>
#include <QTextDocument>
#include <utility>
#include <vector>

#include "chat_style.h"
#include "markdown_math.h"

namespace quire::ui {
namespace {

// QTextCharFormat::FontSizeAdjustment steps (1 = 1.2×, 2 = 1.5×). Qt gives h1
// 2× the body size, which dwarfs a chat message.
int headingSizeStep(int level) {
  return level <= 1 ? 2 : (level <= 3 ? 1 : 0);
}

}  // namespace

void renderMarkdown(QTextDocument* document, const QString& markdown, const QPalette& palette) {
  // Formulas are taken out before Qt reads the Markdown and put back, as
  // images, after: TeX is not Markdown.
  const HiddenMath math = hideMath(markdown);
  document->setMarkdown(math.markdown, QTextDocument::MarkdownDialectGitHub);

  const QColor codeBackground = tintColor(Tint::Code, palette);
  // Collected first and applied after: merging formats splits fragments and
  // would invalidate the iterators walking them.
  std::vector<std::pair<int, int>> inlineCode;
  std::vector<std::pair<QTextBlock, int>> headings;
  std::vector<QTextBlock> codeBlocks;
  for (QTextBlock block = document->begin(); block.isValid(); block = block.next()) {
    const QTextBlockFormat format = block.blockFormat();
    if (format.headingLevel() > 0) headings.emplace_back(block, format.headingLevel());
    if (format.nonBreakableLines()) {
      codeBlocks.push_back(block);
      continue;
    }
    for (auto it = block.begin(); !it.atEnd(); ++it) {
      const QTextFragment fragment = it.fragment();
      if (fragment.charFormat().fontFixedPitch())
        inlineCode.emplace_back(fragment.position(), fragment.length());
    }
  }

  QTextCursor cursor(document);
  for (const auto& [block, level] : headings) {
    cursor.setPosition(block.position());
    cursor.setPosition(block.position() + block.length() - 1, QTextCursor::KeepAnchor);
    QTextCharFormat format;
    format.setProperty(QTextFormat::FontSizeAdjustment, headingSizeStep(level));
    format.setFontWeight(QFont::Bold);
    cursor.mergeCharFormat(format);
    QTextBlockFormat blockFormat;
    blockFormat.setTopMargin(level <= 2 ? 10 : 6);
    blockFormat.setBottomMargin(4);
    cursor.mergeBlockFormat(blockFormat);
  }
  for (const QTextBlock& block : codeBlocks) {
    cursor.setPosition(block.position());
    QTextBlockFormat format;
    format.setBackground(codeBackground);
    cursor.mergeBlockFormat(format);
  }
  for (const auto& [position, length] : inlineCode) {
    cursor.setPosition(position);
    cursor.setPosition(position + length, QTextCursor::KeepAnchor);
    QTextCharFormat format;
    format.setBackground(codeBackground);
    cursor.mergeCharFormat(format);
  }
  showMath(document, math, palette.color(QPalette::Text));
}

}  // namespace quire::ui
