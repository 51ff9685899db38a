// Math in a reply's prose as an export finds it, and how the HTML export
// keeps it: its source, untouched by the Markdown around it.

#include <QTest>

#include "quire/ui/chat_transcript.h"
#include "test_main.h"
#include "transcript_math.h"

using namespace quire::ui;

namespace {

// The source of each span, with "D:" before display math.
QStringList spans(const QString& text) {
  QStringList out;
  for (const MathSpan& span : findMathSpans(text))
    out << (span.display ? QStringLiteral("D:") : QString()) + text.mid(span.start, span.length);
  return out;
}

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
  void delimitersAreFound_data() {
    QTest::addColumn<QString>("text");
    QTest::addColumn<QStringList>("expected");
    QTest::newRow("inline dollars")
        << QStringLiteral("so $x^2$ grows") << QStringList{QStringLiteral("$x^2$")};
    QTest::newRow("display dollars")
        << QStringLiteral("$$\\sum_i a_i$$") << QStringList{QStringLiteral("D:$$\\sum_i a_i$$")};
    QTest::newRow("brackets") << QStringLiteral("\\(a\\) and \\[b\\]")
                              << QStringList{QStringLiteral("\\(a\\)"),
                                             QStringLiteral("D:\\[b\\]")};
    QTest::newRow("prices stay text")
        << QStringLiteral("It costs $5 and $10 now.") << QStringList{};
    QTest::newRow("space after the opening $") << QStringLiteral("a $ b$ c") << QStringList{};
    QTest::newRow("escaped dollar") << QStringLiteral("\\$x$ is not math") << QStringList{};
    QTest::newRow("code span") << QStringLiteral("`echo $HOME$` then $y$")
                               << QStringList{QStringLiteral("$y$")};
    QTest::newRow("not over a blank line")
        << QStringLiteral("$a\n\nb$ and $$c\n\nd$$") << QStringList{};
  }

  void delimitersAreFound() {
    QFETCH(QString, text);
    QFETCH(QStringList, expected);
    QCOMPARE(spans(text), expected);
  }

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
