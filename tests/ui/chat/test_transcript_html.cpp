// What the HTML export makes of a reply's Markdown beyond paragraphs: tables,
// nested lists, quotes, links, rules, indented code; user text as typed.

#include <QTest>

#include "quire/ui/chat_transcript.h"
#include "test_main.h"

using namespace quire::ui;

namespace {

// The body of the one message's text element.
QString messageBody(TranscriptMessage::Role role, const QString& text) {
  TranscriptMessage message;
  message.role = role;
  message.text = text;
  TranscriptSection section;
  section.messages << message;
  Transcript transcript;
  transcript.title = QStringLiteral("Markdown");
  transcript.sections << section;
  const QString html = transcriptToHtml(transcript);
  const qsizetype start = html.indexOf(QStringLiteral("<div class=\"role\">"));
  const qsizetype body = html.indexOf(u'\n', start) + 1;
  const qsizetype end = html.indexOf(QStringLiteral("</article>"), body);
  return html.mid(body, end - body);
}

}  // namespace

class TranscriptHtmlTest : public QObject {
  Q_OBJECT

 private slots:
  void tablesListsQuotesAndLinks() {
    const QString reply = QStringLiteral(
        "| City | Day |\n|---|---|\n| Kyoto | **1** |\n| Nara | 2 |\n\n"
        "- one\n  - one.a\n- two\n\n"
        "> quoted &lt;b&gt;\n\n"
        "See [the docs](https://example.org/a?b=1&c=2).\n\n"
        "---\n\n"
        "    indented code\n");
    QCOMPARE(
        messageBody(TranscriptMessage::Role::Assistant, reply),
        QStringLiteral("<div class=\"text\">\n"
                       "<table>\n"
                       "<tr><th>City</th><th>Day</th></tr>\n"
                       "<tr><td>Kyoto</td><td><strong>1</strong></td></tr>\n"
                       "<tr><td>Nara</td><td>2</td></tr>\n"
                       "</table>\n"
                       "<ul>\n<li>one<ul>\n<li>one.a</li></ul>\n</li>\n<li>two</li></ul>\n"
                       "<blockquote><p>quoted &lt;b&gt;</p></blockquote>\n"
                       "<p>See <a href=\"https://example.org/a?b=1&amp;c=2\">the docs</a>.</p>\n"
                       "<hr>\n"
                       "<pre><code>indented code</code></pre>\n"
                       "</div>\n"));
  }

  void userTextIsShownAsTyped() {
    QCOMPARE(messageBody(TranscriptMessage::Role::User, QStringLiteral("**not bold** <i>\n$x$")),
             QStringLiteral("<div class=\"text plain\">**not bold** &lt;i&gt;\n$x$</div>\n"));
  }
};

QUIRE_TEST(TranscriptHtmlTest)
#include "test_transcript_html.moc"
