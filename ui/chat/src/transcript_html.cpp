// The transcript as one HTML page. Replies go through the chat view's
// Markdown renderer and the resulting document is written out as plain HTML
// elements; math is taken out before (so Markdown does not read its _ and *)
// and put back in <span class="math"> / <div class="math"> as MathML, which
// browsers typeset themselves (KaTeX's, with the TeX as its annotation), or
// as its source where KaTeX cannot read it or is not installed.

#include <QGuiApplication>
#include <QPalette>
#include <QTextBlock>
#include <QTextDocument>
#include <QTextFrame>
#include <QTextList>
#include <QTextTable>
#include <algorithm>
#include <vector>

#include "chat_style.h"
#include "markdown_render.h"
#include "markdown_segments.h"
#include "quire/ui/chat_transcript.h"
#include "quire/ui/math_delimiters.h"
#include "quire/ui/math_renderer.h"
#include "tool_call_text.h"

namespace quire::ui {
namespace {

// Math stands in the Markdown as one private-use character per span.
constexpr char16_t kFirstMathMark = 0xE000;
constexpr char16_t kLastMathMark = 0xF8FF;

struct ProtectedProse {
  QString markdown;
  QStringList math;  // the source of each span, by its mark
  QStringList tex;   // between its delimiters
  QList<bool> display;
};

ProtectedProse protectMath(const QString& prose) {
  ProtectedProse out;
  qsizetype copied = 0;
  for (const MathSpan& span : findMath(prose)) {
    if (kFirstMathMark + out.math.size() > kLastMathMark) break;
    out.markdown += prose.mid(copied, span.start - copied);
    out.markdown += QChar(static_cast<char16_t>(kFirstMathMark + out.math.size()));
    out.math << prose.mid(span.start, span.length);
    out.tex << span.tex;
    out.display << span.display;
    copied = span.start + span.length;
  }
  out.markdown += prose.mid(copied);
  return out;
}

QString escaped(const QString& text) {
  return text.toHtmlEscaped();
}

class ProseWriter {
 public:
  explicit ProseWriter(const ProtectedProse& prose) : prose_(prose) {}

  QString write(const QTextDocument& document) {
    frame(document.rootFrame());
    closeLists(-1, nullptr);
    flushCode();
    return out_;
  }

 private:
  // A math mark's element: MathML, or the escaped source with the class
  // "source" when KaTeX cannot make MathML of it.
  QString mathElement(qsizetype mark, const QString& element, const QString& classes) const {
    const MathResult<QString> mathml =
        MathRenderer::shared().toMathML(prose_.tex[mark], prose_.display[mark]);
    if (mathml.ok()) {
      return QStringLiteral("<%1 class=\"%2\">%3</%1>").arg(element, classes, mathml.value());
    }
    return QStringLiteral("<%1 class=\"%2 source\">%3</%1>")
        .arg(element, classes, escaped(prose_.math[mark]));
  }

  // Text with math marks turned back into math elements.
  QString text(const QString& raw) const {
    QString html;
    for (const QChar c : raw) {
      const char16_t u = c.unicode();
      const qsizetype mark = u - kFirstMathMark;
      if (u >= kFirstMathMark && mark < prose_.math.size()) {
        html += mathElement(
            mark, QStringLiteral("span"),
            prose_.display[mark] ? QStringLiteral("math display") : QStringLiteral("math"));
      } else if (c == QChar::LineSeparator) {
        html += QStringLiteral("<br>");
      } else {
        html += escaped(QString(c));
      }
    }
    return html;
  }

  // `heading`: a heading's or a header cell's own weight is left to its
  // element.
  QString inlines(const QTextBlock& block, bool heading = false) const {
    QString html;
    for (auto it = block.begin(); !it.atEnd(); ++it) {
      const QTextFragment fragment = it.fragment();
      const QTextCharFormat format = fragment.charFormat();
      if (format.isImageFormat()) {
        const QTextImageFormat image = format.toImageFormat();
        html += QStringLiteral("<a href=\"%1\">%2</a>")
                    .arg(escaped(image.name()),
                         escaped(QGuiApplication::translate("Transcript", "[image: %1]")
                                     .arg(format.toolTip().isEmpty() ? image.name()
                                                                     : format.toolTip())));
        continue;
      }
      QString piece = text(fragment.text());
      if (format.fontFixedPitch()) piece = QStringLiteral("<code>%1</code>").arg(piece);
      if (format.fontStrikeOut()) piece = QStringLiteral("<s>%1</s>").arg(piece);
      if (format.fontItalic()) piece = QStringLiteral("<em>%1</em>").arg(piece);
      if (!heading && format.fontWeight() >= QFont::Bold)
        piece = QStringLiteral("<strong>%1</strong>").arg(piece);
      if (format.isAnchor() && !format.anchorHref().isEmpty()) {
        piece = QStringLiteral("<a href=\"%1\">%2</a>").arg(escaped(format.anchorHref()), piece);
      }
      html += piece;
    }
    return html;
  }

  void frame(QTextFrame* frame) {
    for (auto it = frame->begin(); !it.atEnd(); ++it) {
      if (QTextFrame* child = it.currentFrame()) {
        closeLists(-1, nullptr);
        flushCode();
        if (auto* table = qobject_cast<QTextTable*>(child)) {
          this->table(table);
        } else {
          this->frame(child);
        }
        continue;
      }
      block(it.currentBlock());
    }
  }

  void table(QTextTable* table) {
    // A Markdown table always has its first row as the header; Qt's importer
    // marks it only by a bold weight, which <th> carries by itself.
    const int headerRows = std::max(1, table->format().headerRowCount());
    out_ += QStringLiteral("<table>\n");
    for (int row = 0; row < table->rows(); ++row) {
      out_ += QStringLiteral("<tr>");
      const QString tag = row < headerRows ? QStringLiteral("th") : QStringLiteral("td");
      for (int column = 0; column < table->columns(); ++column) {
        const QTextTableCell cell = table->cellAt(row, column);
        QStringList lines;
        for (auto it = cell.begin(); !it.atEnd(); ++it) {
          if (it.currentBlock().isValid()) lines << inlines(it.currentBlock(), row < headerRows);
        }
        out_ += QStringLiteral("<%1>%2</%1>").arg(tag, lines.join(QStringLiteral("<br>")));
      }
      out_ += QStringLiteral("</tr>\n");
    }
    out_ += QStringLiteral("</table>\n");
  }

  void closeLists(int level, QTextList* list) {
    while (!lists_.empty() && (list == nullptr || lists_.back().level > level ||
                               (lists_.back().level == level && lists_.back().list != list))) {
      out_ +=
          lists_.back().ordered ? QStringLiteral("</li></ol>\n") : QStringLiteral("</li></ul>\n");
      lists_.pop_back();
    }
  }

  void flushCode() {
    if (code_.isEmpty()) return;
    out_ += QStringLiteral("<pre><code>%1</code></pre>\n").arg(escaped(code_.join(u'\n')));
    code_.clear();
  }

  void block(const QTextBlock& block) {
    const QTextBlockFormat format = block.blockFormat();
    if (QTextList* list = block.textList()) {
      flushCode();
      const int level = list->format().indent();
      closeLists(level, list);
      if (lists_.empty() || lists_.back().list != list) {
        const bool ordered = list->format().style() == QTextListFormat::ListDecimal ||
                             list->format().style() == QTextListFormat::ListLowerAlpha ||
                             list->format().style() == QTextListFormat::ListUpperAlpha;
        out_ += ordered ? QStringLiteral("<ol>\n") : QStringLiteral("<ul>\n");
        lists_.push_back(OpenList{list, level, ordered});
      } else {
        out_ += QStringLiteral("</li>\n");
      }
      out_ += QStringLiteral("<li>") + inlines(block);
      return;
    }
    closeLists(-1, nullptr);
    // Qt's importer marks an indented code block by its language property
    // (empty) and a fenced one, which a reply's prose no longer holds, by its
    // fence too.
    if (format.nonBreakableLines() || format.hasProperty(QTextFormat::BlockCodeLanguage) ||
        format.hasProperty(QTextFormat::BlockCodeFence)) {
      code_ << block.text();
      return;
    }
    flushCode();
    if (format.hasProperty(QTextFormat::BlockTrailingHorizontalRulerWidth)) {
      out_ += QStringLiteral("<hr>\n");
      return;
    }
    const QString content = inlines(block);
    if (block.text().trimmed().isEmpty()) return;
    if (format.headingLevel() > 0) {
      // A reply's headings sit below the page's title and the messages'.
      const int level = std::min(format.headingLevel() + 2, 6);
      out_ += QStringLiteral("<h%1>%2</h%1>\n").arg(level).arg(inlines(block, true));
      return;
    }
    const QString trimmed = block.text().trimmed();
    if (trimmed.size() == 1) {
      const qsizetype mark = trimmed.at(0).unicode() - kFirstMathMark;
      if (trimmed.at(0).unicode() >= kFirstMathMark && mark < prose_.math.size() &&
          prose_.display[mark]) {
        out_ += mathElement(mark, QStringLiteral("div"), QStringLiteral("math")) + u'\n';
        return;
      }
    }
    if (format.intProperty(QTextFormat::BlockQuoteLevel) > 0) {
      out_ += QStringLiteral("<blockquote><p>%1</p></blockquote>\n").arg(content);
      return;
    }
    out_ += QStringLiteral("<p>%1</p>\n").arg(content);
  }

  struct OpenList {
    QTextList* list;
    int level;
    bool ordered;
  };
  const ProtectedProse& prose_;
  QString out_;
  std::vector<OpenList> lists_;
  QStringList code_;
};

QString replyHtml(const QString& markdown, const QPalette& palette) {
  QString html;
  for (const MarkdownSegment& segment : splitFencedCode(markdown)) {
    if (segment.kind == MarkdownSegment::Kind::Code) {
      QString code = segment.text;
      if (code.endsWith(u'\n')) code.chop(1);
      html +=
          QStringLiteral(
              "<figure class=\"code\"><figcaption>%1</figcaption><pre><code%2>%3</code></pre>"
              "</figure>\n")
              .arg(segment.language.isEmpty() ? QStringLiteral("code") : escaped(segment.language),
                   segment.language.isEmpty()
                       ? QString()
                       : QStringLiteral(" class=\"language-%1\"").arg(escaped(segment.language)),
                   escaped(code));
      continue;
    }
    const ProtectedProse prose = protectMath(segment.text);
    QTextDocument document;
    renderMarkdown(&document, prose.markdown, palette);
    html += ProseWriter(prose).write(document);
  }
  return html;
}

QString toolCallHtml(const ToolCallView& call) {
  const QString kind = call.state == ToolCallView::State::AwaitingApproval ? QStringLiteral("info")
                       : isToolCallFailure(call.state)                     ? QStringLiteral("error")
                                                                           : QString();
  QString html =
      QStringLiteral(
          "<div class=\"tool-call%1\"><div class=\"tool-title\">%2</div>"
          "<div class=\"tool-state\">%3</div><pre><code>%4</code></pre>")
          .arg(kind.isEmpty() ? QString() : QLatin1Char(' ') + kind, escaped(toolCallTitle(call)),
               escaped(toolCallStateText(call)), escaped(prettyToolArguments(call.arguments)));
  if (!call.result.isEmpty()) {
    html += QStringLiteral("<pre class=\"tool-result\"><code>%1</code></pre>")
                .arg(escaped(call.result));
  }
  return html + QStringLiteral("</div>\n");
}

// The images in the page itself, as data: URIs, at most as wide as the text
// (inline styles: the page's style sheet stays what it was for chats
// without images).
QString imagesHtml(const QList<TranscriptImage>& images) {
  if (images.isEmpty()) return {};
  QString html = QStringLiteral("<div class=\"images\">\n");
  for (qsizetype i = 0; i < images.size(); ++i) {
    const TranscriptImage& image = images[i];
    html += QStringLiteral(
                "<img src=\"data:%1;base64,%2\" width=\"%3\" height=\"%4\" "
                "alt=\"%5\" style=\"max-width: 100%; height: auto; "
                "border-radius: 8px; margin: 0 0.5rem 0.5rem 0;\">\n")
                .arg(escaped(image.mimeType), QString::fromLatin1(image.bytes.toBase64()))
                .arg(image.image.width())
                .arg(image.image.height())
                .arg(escaped(QGuiApplication::translate("Transcript", "Image %1 (%2 × %3)")
                                 .arg(i + 1)
                                 .arg(image.image.width())
                                 .arg(image.image.height())));
  }
  return html + QStringLiteral("</div>\n");
}

QString messageHtml(const TranscriptMessage& message, const QPalette& palette) {
  QString role;
  QString caption;
  switch (message.role) {
    case TranscriptMessage::Role::User:
      role = QStringLiteral("user");
      caption = QGuiApplication::translate("Transcript", "You");
      break;
    case TranscriptMessage::Role::Assistant:
      role = QStringLiteral("assistant");
      caption = QGuiApplication::translate("Transcript", "Assistant");
      break;
    case TranscriptMessage::Role::System:
      role = QStringLiteral("system");
      caption = QGuiApplication::translate("Transcript", "System prompt");
      break;
    case TranscriptMessage::Role::Tool:
      role = QStringLiteral("tool");
      caption = message.toolName.isEmpty()
                    ? QGuiApplication::translate("Transcript", "Tool")
                    : QGuiApplication::translate("Transcript", "Tool · %1").arg(message.toolName);
      break;
  }
  QString html = QStringLiteral("<article class=\"message %1\">\n<div class=\"role\">%2</div>\n")
                     .arg(role, escaped(caption));
  html += imagesHtml(message.images);
  if (message.role == TranscriptMessage::Role::Assistant) {
    html += QStringLiteral("<div class=\"text\">\n") + replyHtml(message.text, palette) +
            QStringLiteral("</div>\n");
  } else if (message.role == TranscriptMessage::Role::Tool) {
    html +=
        QStringLiteral("<pre class=\"text\"><code>%1</code></pre>\n").arg(escaped(message.text));
  } else {
    html += QStringLiteral("<div class=\"text plain\">%1</div>\n").arg(escaped(message.text));
  }
  for (const ToolCallView& call : message.toolCalls)
    html += toolCallHtml(call);
  return html + QStringLiteral("</article>\n");
}

QString styleSheet(const QPalette& palette) {
  const auto color = [&palette](Tint tint) { return tintColor(tint, palette).name(); };
  const auto border = [&palette](Tint tint) { return tintBorderColor(tint, palette).name(); };
  return QStringLiteral(
             "body { margin: 0 auto; max-width: 52rem; padding: 1.5rem; background: %1; color: "
             "%2; font: 15px/1.5 system-ui, -apple-system, \"Segoe UI\", sans-serif; }\n"
             "h1 { font-size: 1.5rem; margin: 0 0 0.25rem; }\n"
             ".meta, .role, .note, .tool-state, figcaption { color: %3; }\n"
             ".meta { margin: 0 0 1.5rem; }\n"
             ".branch { margin-top: 1.5rem; }\n"
             ".branch > h2 { font-size: 1.15rem; margin: 0; }\n"
             ".note { font-style: italic; margin: 0.25rem 0 0.5rem; }\n"
             ".message { margin: 0.75rem 0; }\n"
             ".role { font-weight: 600; font-size: 0.85rem; margin-bottom: 0.25rem; }\n"
             ".plain { white-space: pre-wrap; }\n"
             ".user .text { background: %4; border: 1px solid %5; border-radius: 10px; "
             "padding: 0.5rem 0.75rem; }\n"
             ".system .text { background: %6; border: 1px solid %7; border-radius: 10px; "
             "padding: 0.5rem 0.75rem; }\n"
             "code, pre { font-family: ui-monospace, \"DejaVu Sans Mono\", monospace; "
             "font-size: 0.9em; }\n"
             "p code, li code, td code { background: %8; border-radius: 4px; padding: 0 0.2em; }\n"
             "pre { margin: 0; padding: 0.5rem 0.75rem; white-space: pre-wrap; }\n"
             "figure.code, pre.text { background: %8; border: 1px solid %9; border-radius: 10px; "
             "margin: 0.5rem 0; overflow: hidden; }\n"
             "figcaption { background: %10; font-size: 0.8rem; font-weight: 600; "
             "padding: 0.2rem 0.75rem; }\n"
             ".tool-call { background: %6; border: 1px solid %7; border-radius: 10px; "
             "margin: 0.5rem 0; padding: 0.5rem 0.75rem; }\n"
             ".tool-call.info { background: %11; border-color: %12; }\n"
             ".tool-call.error { background: %13; border-color: %14; }\n"
             ".tool-title { font-weight: 600; }\n"
             ".tool-call pre { padding: 0.25rem 0 0; }\n"
             "blockquote { border-left: 3px solid %9; margin: 0.5rem 0; padding-left: 0.75rem; }\n"
             "table { border-collapse: collapse; margin: 0.5rem 0; }\n"
             "th, td { border: 1px solid %9; padding: 0.2rem 0.5rem; text-align: left; }\n"
             ".math.source { font-family: ui-monospace, \"DejaVu Sans Mono\", monospace; }\n"
             "div.math { margin: 0.5rem 0; text-align: center; }\n"
             "a { color: %15; }\n")
      .arg(palette.color(QPalette::Base).name(), palette.color(QPalette::Text).name(),
           palette.color(QPalette::PlaceholderText).name(), color(Tint::UserBubble),
           border(Tint::UserBubble), color(Tint::System), border(Tint::System), color(Tint::Code),
           border(Tint::Code))
      .arg(color(Tint::CodeHeader), color(Tint::Info), border(Tint::Info), color(Tint::Error),
           border(Tint::Error), palette.color(QPalette::Link).name());
}

}  // namespace

QString transcriptToHtml(const Transcript& transcript) {
  const QPalette palette = transcriptPalette();
  QString html = QStringLiteral(
                     "<!DOCTYPE html>\n<html>\n<head>\n<meta charset=\"utf-8\">\n"
                     "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
                     "<meta name=\"generator\" content=\"Quire\">\n<title>%1</title>\n"
                     "<style>\n%2</style>\n</head>\n<body>\n<header>\n<h1>%1</h1>\n")
                     .arg(escaped(transcript.title), styleSheet(palette));
  QStringList meta;
  if (!transcript.model.isEmpty()) meta << escaped(transcript.model);
  if (!transcript.date.isEmpty()) meta << escaped(transcript.date);
  if (!meta.isEmpty())
    html += QStringLiteral("<p class=\"meta\">%1</p>\n").arg(meta.join(QStringLiteral(" · ")));
  html += QStringLiteral("</header>\n");
  for (const TranscriptSection& section : transcript.sections) {
    html += QStringLiteral("<section class=\"branch\"%1>\n")
                .arg(section.depth > 0
                         ? QStringLiteral(" style=\"margin-left: %1rem\"").arg(1.5 * section.depth)
                         : QString());
    if (!section.heading.isEmpty())
      html += QStringLiteral("<h2>%1</h2>\n").arg(escaped(section.heading));
    if (!section.note.isEmpty())
      html += QStringLiteral("<p class=\"note\">%1</p>\n").arg(escaped(section.note));
    for (const TranscriptMessage& message : section.messages)
      html += messageHtml(message, palette);
    html += QStringLiteral("</section>\n");
  }
  return html + QStringLiteral("</body>\n</html>\n");
}

}  // namespace quire::ui
