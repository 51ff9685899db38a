// A whole chat in one QTextDocument, in the chat view's look: the same
// Markdown renderer for replies (so what it renders, the PDF shows), the
// same tints for the user's bubble, the system prompt, code blocks and tool
// cards.

#include <QGuiApplication>
#include <QPalette>
#include <QTextCursor>
#include <QTextDocument>
#include <QTextDocumentFragment>
#include <QTextFrame>
#include <QUrl>
#include <algorithm>

#include "chat_style.h"
#include "markdown_render.h"
#include "markdown_segments.h"
#include "quire/ui/chat_transcript.h"
#include "tool_call_text.h"

namespace quire::ui {
namespace {

constexpr int kSectionIndent = 24;  // pixels per level of branch nesting
constexpr int kFramePadding = 8;
// Images at most this wide (pixels at the PDF's 96 dpi: 85 mm, about half
// the text's width on A4 or Letter).
constexpr int kImageWidth = 320;

using TranscriptRole = TranscriptMessage::Role;

QString captionOf(const TranscriptMessage& message) {
  switch (message.role) {
    case TranscriptRole::User:
      return QGuiApplication::translate("Transcript", "You");
    case TranscriptRole::Assistant:
      return QGuiApplication::translate("Transcript", "Assistant");
    case TranscriptRole::System:
      return QGuiApplication::translate("Transcript", "System prompt");
    case TranscriptRole::Tool:
      return message.toolName.isEmpty()
                 ? QGuiApplication::translate("Transcript", "Tool")
                 : QGuiApplication::translate("Transcript", "Tool · %1").arg(message.toolName);
  }
  return {};
}

// The cursor in the (empty) block that follows `frame` in its parent.
QTextCursor after(QTextFrame* frame) {
  QTextCursor cursor = frame->lastCursorPosition();
  cursor.movePosition(QTextCursor::NextBlock);
  return cursor;
}

class Writer {
 public:
  Writer(QTextDocument* document, const QPalette& palette)
      : document_(document), palette_(palette), cursor_(document) {}

  void title(const Transcript& transcript) {
    QTextCharFormat format;
    format.setFontWeight(QFont::Bold);
    format.setProperty(QTextFormat::FontSizeAdjustment, 2);
    cursor_.setCharFormat(format);
    cursor_.insertText(transcript.title);
    QStringList meta;
    if (!transcript.model.isEmpty()) meta << transcript.model;
    if (!transcript.date.isEmpty()) meta << transcript.date;
    if (!meta.isEmpty()) {
      cursor_.insertBlock(QTextBlockFormat(), muted());
      cursor_.insertText(meta.join(QStringLiteral(" · ")));
    }
  }

  void section(const TranscriptSection& section) {
    QTextCursor outer = cursor_;
    QTextFrame* frame = nullptr;
    if (section.depth > 0) {
      QTextFrameFormat format;
      format.setLeftMargin(kSectionIndent * section.depth);
      format.setTopMargin(12);
      frame = cursor_.insertFrame(format);
      cursor_ = frame->firstCursorPosition();
    }
    if (!section.heading.isEmpty()) {
      QTextCharFormat format;
      format.setFontWeight(QFont::Bold);
      format.setProperty(QTextFormat::FontSizeAdjustment, 1);
      line(section.heading, format);
    }
    if (!section.note.isEmpty()) {
      QTextCharFormat format = muted();
      format.setFontItalic(true);
      line(section.note, format);
    }
    for (const TranscriptMessage& message : section.messages)
      this->message(message);
    if (frame != nullptr) cursor_ = after(frame);
  }

 private:
  QTextCharFormat muted() const {
    QTextCharFormat format;
    format.setForeground(palette_.color(QPalette::PlaceholderText));
    return format;
  }

  // A new block with `text`, unless the cursor sits in an empty one.
  void line(const QString& text, const QTextCharFormat& format,
            const QTextBlockFormat& block = QTextBlockFormat()) {
    if (!cursor_.block().text().isEmpty() || cursor_.block().previous().isValid()) {
      cursor_.insertBlock(block, format);
    } else {
      cursor_.setBlockFormat(block);
      cursor_.setCharFormat(format);
    }
    cursor_.insertText(text, format);
  }

  QTextFrame* tintedFrame(Tint tint) {
    QTextFrameFormat format;
    format.setBackground(tintColor(tint, palette_));
    format.setBorder(1);
    format.setBorderBrush(tintBorderColor(tint, palette_));
    format.setBorderStyle(QTextFrameFormat::BorderStyle_Solid);
    format.setPadding(kFramePadding);
    format.setTopMargin(4);
    format.setBottomMargin(4);
    return cursor_.insertFrame(format);
  }

  void message(const TranscriptMessage& message) {
    QTextCharFormat caption = muted();
    caption.setFontWeight(QFont::Bold);
    QTextBlockFormat spaced;
    spaced.setTopMargin(10);
    line(captionOf(message), caption, spaced);
    images(message.images);
    switch (message.role) {
      case TranscriptRole::User:
        plainFrame(Tint::UserBubble, message.text, false);
        break;
      case TranscriptRole::System:
        plainFrame(Tint::System, message.text, false);
        break;
      case TranscriptRole::Tool:
        plainFrame(Tint::Code, message.text, true);
        break;
      case TranscriptRole::Assistant:
        reply(message.text);
        break;
    }
    for (const ToolCallView& call : message.toolCalls)
      toolCall(call);
  }

  // Each image on a line of its own, at most kImageWidth points wide (half
  // a page's text, enough to read a screenshot); a smaller one keeps its size.
  void images(const QList<TranscriptImage>& images) {
    for (const TranscriptImage& image : images) {
      if (image.image.isNull()) continue;
      const QString name = QStringLiteral("quire-image:%1").arg(++imageCount_);
      document_->addResource(QTextDocument::ImageResource, QUrl(name), image.image);
      QTextImageFormat format;
      format.setName(name);
      const double width = std::min<double>(kImageWidth, image.image.width());
      format.setWidth(width);
      format.setHeight(width * image.image.height() / image.image.width());
      QTextBlockFormat block;
      block.setTopMargin(4);
      cursor_.insertBlock(block);
      cursor_.insertImage(format);
    }
  }

  void plainFrame(Tint tint, const QString& text, bool code) {
    QTextFrame* frame = tintedFrame(tint);
    QTextCursor inside = frame->firstCursorPosition();
    QTextCharFormat format;
    if (code) format.setFont(monospaceFont());
    inside.insertText(text, format);
    cursor_ = after(frame);
  }

  void reply(const QString& markdown) {
    for (const MarkdownSegment& segment : splitFencedCode(markdown)) {
      if (segment.kind == MarkdownSegment::Kind::Code) {
        codeBlock(segment);
        continue;
      }
      // The view's renderer, then the result copied in with its formats.
      QTextDocument prose;
      prose.setDefaultFont(document_->defaultFont());
      renderMarkdown(&prose, segment.text, palette_);
      cursor_.insertBlock();
      cursor_.insertFragment(QTextDocumentFragment(&prose));
    }
  }

  void codeBlock(const MarkdownSegment& segment) {
    QTextFrame* frame = tintedFrame(Tint::Code);
    QTextCursor inside = frame->firstCursorPosition();
    QTextCharFormat label = muted();
    label.setFontWeight(QFont::Bold);
    QTextBlockFormat header;
    header.setBackground(tintColor(Tint::CodeHeader, palette_));
    header.setBottomMargin(4);
    inside.setBlockFormat(header);
    inside.insertText(segment.language.isEmpty() ? QStringLiteral("code") : segment.language,
                      label);
    QTextBlockFormat code;
    code.setNonBreakableLines(true);
    QTextCharFormat mono;
    mono.setFont(monospaceFont());
    QString text = segment.text;
    if (text.endsWith(QLatin1Char('\n'))) text.chop(1);
    for (const QString& codeLine : text.split(QLatin1Char('\n'))) {
      inside.insertBlock(code, mono);
      inside.insertText(codeLine, mono);
    }
    cursor_ = after(frame);
  }

  void toolCall(const ToolCallView& call) {
    const Tint tint = call.state == ToolCallView::State::AwaitingApproval ? Tint::Info
                      : isToolCallFailure(call.state)                     ? Tint::Error
                                                                          : Tint::System;
    QTextFrame* frame = tintedFrame(tint);
    QTextCursor inside = frame->firstCursorPosition();
    QTextCharFormat bold;
    bold.setFontWeight(QFont::Bold);
    inside.insertText(toolCallTitle(call), bold);
    inside.insertBlock(QTextBlockFormat(), muted());
    inside.insertText(toolCallStateText(call), muted());
    QTextBlockFormat code;
    code.setNonBreakableLines(true);
    code.setTopMargin(4);
    QTextCharFormat mono;
    mono.setFont(monospaceFont());
    inside.insertBlock(code, mono);
    inside.insertText(prettyToolArguments(call.arguments), mono);
    if (!call.result.isEmpty()) {
      inside.insertBlock(code, mono);
      inside.insertText(call.result, mono);
    }
    cursor_ = after(frame);
  }

  QTextDocument* document_;
  QPalette palette_;
  QTextCursor cursor_;
  int imageCount_ = 0;
};

}  // namespace

QPalette transcriptPalette() {
  // Fusion's light colours: the app's look on a light desktop.
  QPalette palette;
  palette.setColor(QPalette::Base, QColor(0xff, 0xff, 0xff));
  palette.setColor(QPalette::Window, QColor(0xef, 0xef, 0xef));
  palette.setColor(QPalette::Text, QColor(0x1f, 0x1f, 0x1f));
  palette.setColor(QPalette::WindowText, QColor(0x1f, 0x1f, 0x1f));
  palette.setColor(QPalette::PlaceholderText, QColor(0x6b, 0x6b, 0x6b));
  palette.setColor(QPalette::Highlight, QColor(0x30, 0x8c, 0xc6));
  palette.setColor(QPalette::Link, QColor(0x1a, 0x5f, 0xb4));
  return palette;
}

void layoutTranscript(QTextDocument* document, const Transcript& transcript,
                      const QPalette& palette) {
  document->clear();
  Writer writer(document, palette);
  writer.title(transcript);
  for (const TranscriptSection& section : transcript.sections)
    writer.section(section);
}

}  // namespace quire::ui
