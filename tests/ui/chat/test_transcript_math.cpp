// How the HTML export keeps a reply's math (found as the chat view finds it,
// quire/ui/math_delimiters.h): as MathML, untouched by the Markdown around
// it, and as its source where KaTeX cannot read it.

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
  void htmlHoldsMathMLOutOfTheMarkdown() {
    // The underscores and stars would be emphasis to Markdown.
    const QString html = replyHtml(
        QStringLiteral("Take $a_1 * b_2$ and *this*; it costs $5 and $10.\n\n\\[x_1 < y_1\\]"));
    QVERIFY2(html.startsWith(QStringLiteral("<p>Take <span class=\"math\"><math xmlns=")),
             qPrintable(html));
    QVERIFY2(html.contains(QStringLiteral("<msub><mi>a</mi><mn>1</mn></msub>")), qPrintable(html));
    // The TeX rides along as the formula's annotation, for copying and search.
    QVERIFY(html.contains(
        QStringLiteral("<annotation encoding=\"application/x-tex\">a_1 * b_2</annotation>")));
    QVERIFY(html.contains(QStringLiteral("</span> and <em>this</em>; it costs $5 and $10.</p>")));
    QVERIFY2(html.contains(QStringLiteral("<div class=\"math\"><math xmlns=\"http://www.w3.org/"
                                          "1998/Math/MathML\" display=\"block\">")),
             qPrintable(html));
    QVERIFY(html.contains(QStringLiteral("x_1 &lt; y_1</annotation>")));
  }

  void htmlKeepsTheSourceOfWhatKatexCannotRead() {
    QCOMPARE(
        replyHtml(QStringLiteral("Broken: $\\frac{a$ here.")),
        QStringLiteral("<p>Broken: <span class=\"math source\">$\\frac{a$</span> here.</p>\n"));
  }
};

QUIRE_TEST(TranscriptMathTest)
#include "test_transcript_math.moc"
