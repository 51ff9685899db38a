// How the HTML export keeps a reply's math (found as the chat view finds it,
// quire/ui/math_delimiters.h): its source, untouched by the Markdown around it.

#include <QTest>

#include "quire/ui/chat_transcript.h"
#include "test_main.h"

using namespace quire::ui;

namespace {

QString replyHtml(const QString& reply) {
  TranscriptMessage message;
  message.role = TranscriptMessage::Role::Assistant;
  message.text = reply;
  TranscriptSection section;
  section.messages << message;
  Transcript transcript;
  transcript.title = QStringLiteral("Math");
  transcript.sections << section;
  const QString html = transcriptToHtml(transcript);
  const qsizetype start = html.indexOf(QStringLiteral("<div class=\"text\">\n"));
  const qsizetype end = html.indexOf(QStringLiteral("</div>\n</article>"));
  return html.mid(start + 19, end - start - 19);
}

}  // namespace

class TranscriptMathTest : public QObject {
  Q_OBJECT

 private slots:
  void htmlKeepsTheSourceOutOfTheMarkdown() {
    // The underscores and stars would be emphasis to Markdown.
    QCOMPARE(replyHtml(QStringLiteral("Take $a_1 * b_2$ and *this*; it costs $5 and $10.\n\n"
                                      "\\[x_1 < y_1\\]")),
             QStringLiteral("<p>Take <span class=\"math\">$a_1 * b_2$</span> and <em>this</em>; "
                            "it costs $5 and $10.</p>\n"
                            "<div class=\"math\">\\[x_1 &lt; y_1\\]</div>\n"));
  }
};

QUIRE_TEST(TranscriptMathTest)
#include "test_transcript_math.moc"
