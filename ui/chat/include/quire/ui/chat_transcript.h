#pragma once

// A whole chat laid out for reading outside the app: one QTextDocument in
// the chat view's own style (Markdown through the view's renderer, code
// blocks with their language, tool calls as cards with their outcome), and
// from it a PDF; and a self-contained HTML page with the same look in CSS.
// Plain data in, like the view: app/ fills a Transcript from its store.

#include <QByteArray>
#include <QImage>
#include <QList>
#include <QPageSize>
#include <QString>

#include "quire/ui/chat_view_data.h"

class QLocale;
class QPalette;
class QTextDocument;

namespace quire::ui {

// An image attached to a message: the file's bytes for the HTML page (a
// data: URI, so the page stays one file) and the decoded picture, EXIF
// orientation applied, for the PDF.
struct TranscriptImage {
  QByteArray bytes;
  QString mimeType;
  QImage image;
};

struct TranscriptMessage {
  enum class Role { System, User, Assistant, Tool };
  Role role = Role::User;
  // Markdown for the assistant; the exact text for the others (as the view
  // shows it).
  QString text;
  // The reply's tool calls with their outcomes, as the view's cards show them.
  QList<ToolCallView> toolCalls;
  // Tool: the tool that answered, when no call of a reply shows the answer.
  QString toolName;
  // The images attached to a user message, shown above its text.
  QList<TranscriptImage> images;
};

// A run of messages: the whole current path, or one other branch of the
// tree with a heading ("Branch 1.2") and a line about where it starts.
struct TranscriptSection {
  QString heading;  // empty for the current path
  QString note;
  int depth = 0;  // nesting, for the indent
  QList<TranscriptMessage> messages;
};

struct Transcript {
  QString title;
  QString model;  // may be empty
  QString date;   // as it should read, e.g. "2024-05-01 12:00 UTC"
  QList<TranscriptSection> sections;
};

// The light palette the exports use whatever the app's theme: a printed or
// shared chat is read on white.
QPalette transcriptPalette();

// Clears `document` and lays the transcript into it with the chat view's
// renderer and tints taken from `palette`.
void layoutTranscript(QTextDocument* document, const Transcript& transcript,
                      const QPalette& palette);

// One self-contained HTML file (UTF-8, inline CSS in the light theme, no
// scripts, no outside resources: images are data: URIs). Math in replies ($…$, $$…$$, \(…\), \[…\])
// is kept as its source inside <span class="math"> or <div class="math">.
QString transcriptToHtml(const Transcript& transcript);

// Letter where it is the usual paper (the United States, Canada, Mexico and
// a few more of the Americas, the Philippines), A4 elsewhere.
QPageSize::PageSizeId pageSizeForLocale(const QLocale& locale);

// Writes the transcript as a PDF to `path` atomically: the document of
// layoutTranscript() on pages of `pageSize` with 15 mm margins, "Page 2 of 5"
// at the foot of each, lines never split between pages. On failure returns
// false with *error naming the file and the problem.
bool writeTranscriptPdf(const Transcript& transcript, const QString& path,
                        QPageSize::PageSizeId pageSize, QString* error);

}  // namespace quire::ui
