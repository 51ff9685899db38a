#include <QTest>

#include "markdown_segments.h"
#include "test_main.h"

using quire::ui::MarkdownSegment;
using quire::ui::splitFencedCode;
using Kind = MarkdownSegment::Kind;

Q_DECLARE_METATYPE(QList<MarkdownSegment>)

namespace {

MarkdownSegment prose(const QString& text) {
  return {Kind::Prose, text, {}, true};
}
MarkdownSegment code(const QString& text, const QString& language = {}, bool closed = true) {
  return {Kind::Code, text, language, closed};
}

}  // namespace

class MarkdownSegmentsTest : public QObject {
  Q_OBJECT

 private slots:
  void splits_data() {
    QTest::addColumn<QString>("markdown");
    QTest::addColumn<QList<MarkdownSegment>>("expected");

    QTest::newRow("prose only") << QStringLiteral("Hello **there**.\n\n- a\n- b")
                                << QList{prose(QStringLiteral("Hello **there**.\n\n- a\n- b"))};
    QTest::newRow("code between prose")
        << QStringLiteral("Before:\n```python\nx = 1\n\ny = 2\n```\nAfter.")
        << QList{prose(QStringLiteral("Before:")), code(QStringLiteral("x = 1\n\ny = 2"), "python"),
                 prose(QStringLiteral("After."))};
    QTest::newRow("tilde fence, info string words")
        << QStringLiteral("~~~ rust ignore\nfn main() {}\n~~~")
        << QList{code(QStringLiteral("fn main() {}"), "rust")};
    QTest::newRow("closing fence must be as long")
        << QStringLiteral("````\n```\ninner\n```\n````")
        << QList{code(QStringLiteral("```\ninner\n```"))};
    QTest::newRow("other marker does not close")
        << QStringLiteral("```\n~~~\n```") << QList{code(QStringLiteral("~~~"))};
    QTest::newRow("indented fence strips its indentation")
        << QStringLiteral("  ```\n  two\n    four\n zero\n  ```")
        << QList{code(QStringLiteral("two\n  four\nzero"))};
    QTest::newRow("four spaces is not a fence")
        << QStringLiteral("    ```\n    code") << QList{prose(QStringLiteral("    ```\n    code"))};
    QTest::newRow("inline triple backticks are not a fence")
        << QStringLiteral("```a``` b") << QList{prose(QStringLiteral("```a``` b"))};
    QTest::newRow("unclosed block runs to the end (streaming)")
        << QStringLiteral("Code:\n```js\nlet a = 1;\nlet b")
        << QList{prose(QStringLiteral("Code:")),
                 code(QStringLiteral("let a = 1;\nlet b"), "js", false)};
    QTest::newRow("empty block") << QStringLiteral("```\n```") << QList{code(QString())};
    QTest::newRow("windows line ends")
        << QStringLiteral("a\r\n```\r\nx\r\n```\r\n") << QList{prose("a"), code("x")};
    QTest::newRow("whitespace prose dropped")
        << QStringLiteral("\n\n```\nx\n```\n\n  \n") << QList{code("x")};
  }

  void splits() {
    QFETCH(QString, markdown);
    QFETCH(QList<MarkdownSegment>, expected);
    const QList<MarkdownSegment> segments = splitFencedCode(markdown);
    QCOMPARE(segments.size(), expected.size());
    for (qsizetype i = 0; i < segments.size(); ++i) {
      QCOMPARE(segments[i].kind, expected[i].kind);
      QCOMPARE(segments[i].text, expected[i].text);
      QCOMPARE(segments[i].language, expected[i].language);
      QCOMPARE(segments[i].closed, expected[i].closed);
    }
  }
};

QUIRE_TEST(MarkdownSegmentsTest)
#include "test_markdown_segments.moc"
