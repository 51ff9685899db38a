#include <QTest>

#include "quire/ui/math_delimiters.h"
#include "test_main.h"

using quire::ui::findMath;
using quire::ui::MathSpan;

namespace {

// Each formula as its TeX, display math marked "D:".
QStringList describe(const QList<MathSpan>& spans) {
  QStringList out;
  for (const MathSpan& span : spans)
    out << (span.display ? QStringLiteral("D:") : QString()) + span.tex;
  return out;
}

}  // namespace

class MathDelimitersTest : public QObject {
  Q_OBJECT

 private slots:
  void finds_data() {
    QTest::addColumn<QString>("prose");
    QTest::addColumn<QStringList>("formulas");

    QTest::newRow("inline dollars") << "The area is $\\pi r^2$ here." << QStringList{"\\pi r^2"};
    QTest::newRow("display dollars") << "$$\\sum_i i$$" << QStringList{"D:\\sum_i i"};
    QTest::newRow("display over lines")
        << "Then\n$$\na + b\n$$\ndone" << QStringList{"D:\na + b\n"};
    QTest::newRow("parentheses") << "so \\(x+1\\) is" << QStringList{"x+1"};
    QTest::newRow("brackets") << "\\[\\frac{a}{b}\\]" << QStringList{"D:\\frac{a}{b}"};
    QTest::newRow("two inline") << "$a$ and $b$" << QStringList{"a", "b"};
    QTest::newRow("currency") << "It costs $5 and $10 today." << QStringList{};
    QTest::newRow("currency, one price") << "Only $20." << QStringList{};
    QTest::newRow("closing dollar before a digit") << "between $x$5 and" << QStringList{};
    QTest::newRow("space after opening") << "a $ b$ c" << QStringList{};
    QTest::newRow("space before closing") << "a $b $ c" << QStringList{};
    QTest::newRow("escaped dollars") << "\\$x\\$ costs \\$3" << QStringList{};
    QTest::newRow("escaped dollar inside math") << "$a\\$b$" << QStringList{"a\\$b"};
    QTest::newRow("escaped backslash before paren") << "\\\\(x\\\\)" << QStringList{};
    QTest::newRow("code span") << "Use `$x$` or $y$" << QStringList{"y"};
    QTest::newRow("double backtick code span") << "``a $b$ ` c`` then $d$" << QStringList{"d"};
    QTest::newRow("unmatched backtick is text") << "a ` $x$" << QStringList{"x"};
    QTest::newRow("indented code block")
        << "Code:\n\n    echo $HOME$PATH\n\nand $z$" << QStringList{"z"};
    QTest::newRow("not across a blank line") << "$a\n\nb$" << QStringList{};
    QTest::newRow("unclosed while streaming") << "So $x^2 + " << QStringList{};
    QTest::newRow("unclosed display while streaming") << "$$\\int_0^1" << QStringList{};
    QTest::newRow("empty display is text") << "$$ $$" << QStringList{};
    QTest::newRow("display beats inline") << "$$a$$ $b$" << QStringList{"D:a", "b"};
    QTest::newRow("dollar inside parentheses math") << "\\(a$b\\)" << QStringList{"a$b"};
  }
  void finds() {
    QFETCH(QString, prose);
    QFETCH(QStringList, formulas);
    QCOMPARE(describe(findMath(prose)), formulas);
  }

  void reportsPositionsOfTheDelimiters() {
    const QString prose = QStringLiteral("ab $x$ \\[y\\]");
    const QList<MathSpan> spans = findMath(prose);
    QCOMPARE(spans.size(), 2);
    QCOMPARE(spans[0].start, 3);
    QCOMPARE(spans[0].length, 3);
    QCOMPARE(prose.mid(spans[1].start, spans[1].length), QStringLiteral("\\[y\\]"));
    QVERIFY(spans[1].display);
  }
};

QUIRE_TEST(MathDelimitersTest)
#include "test_math_delimiters.moc"
