#include <QTemporaryDir>
#include <QTest>

#include "katex_engine.h"
#include "mathml_tree.h"
#include "quire/ui/math_renderer.h"
#include "test_main.h"

using namespace quire::ui;

namespace {

// The tags of a tree, depth first, as "mfrac(mrow(mi,mo),mn)".
QString shape(const MathNode& node) {
  QString out = node.tag;
  if (node.children.empty()) return out;
  out += u'(';
  for (std::size_t i = 0; i < node.children.size(); ++i) {
    if (i) out += u',';
    out += shape(node.children[i]);
  }
  return out + u')';
}

// The formula's own tree: under math > semantics, without the annotation.
QString bodyShape(const QString& mathml) {
  const MathResult<MathNode> tree = parseMathML(mathml);
  if (!tree.ok()) return tree.error();
  const MathNode& semantics = tree.value().children.at(0);
  return shape(semantics.children.at(0));
}

}  // namespace

class KatexMathMLTest : public QObject {
  Q_OBJECT

 private slots:
  void structure_data() {
    QTest::addColumn<QString>("tex");
    QTest::addColumn<bool>("display");
    QTest::addColumn<QString>("expected");
    QTest::newRow("superscript") << "x^2" << false << "mrow(msup(mi,mn))";
    QTest::newRow("fraction") << "\\frac{a+b}{c}" << false << "mrow(mfrac(mrow(mi,mo,mi),mi))";
    QTest::newRow("display sum limits")
        << "\\sum_{i=1}^n i" << true << "mrow(munderover(mo,mrow(mi,mo,mn),mi),mi)";
    QTest::newRow("inline sum limits as scripts")
        << "\\sum_{i=1}^n i" << false << "mrow(msubsup(mo,mrow(mi,mo,mn),mi),mi)";
    QTest::newRow("square root") << "\\sqrt{x}" << false << "mrow(msqrt(mi))";
    QTest::newRow("matrix")
        << "\\begin{pmatrix}a&b\\\\c&d\\end{pmatrix}" << true
        << "mrow(mo,mtable(mtr(mtd(mstyle(mi)),mtd(mstyle(mi))),mtr(mtd(mstyle(mi)),"
           "mtd(mstyle(mi)))),mo)";
  }
  void structure() {
    QFETCH(QString, tex);
    QFETCH(bool, display);
    QFETCH(QString, expected);
    KatexEngine katex;
    const MathResult<QString> mathml = katex.toMathML(tex, display);
    QVERIFY2(mathml.ok(), qPrintable(mathml.error()));
    QVERIFY(mathml.value().startsWith(u"<math"));
    QCOMPARE(mathml.value().contains(u"display=\"block\""), display);
    QCOMPARE(bodyShape(mathml.value()), expected);
  }

  void keepsTheSourceAsAnnotation() {
    KatexEngine katex;
    const MathResult<QString> mathml = katex.toMathML(QStringLiteral("a<b"), false);
    QVERIFY(mathml.ok());
    const MathResult<MathNode> tree = parseMathML(mathml.value());
    QVERIFY(tree.ok());
    const MathNode& annotation = tree.value().children.at(0).children.at(1);
    QCOMPARE(annotation.tag, QStringLiteral("annotation"));
    QCOMPARE(annotation.text, QStringLiteral("a<b"));
  }

  void parseErrorsAreReported() {
    KatexEngine katex;
    const MathResult<QString> mathml = katex.toMathML(QStringLiteral("\\frac{"), false);
    QVERIFY(!mathml.ok());
    QVERIFY2(mathml.error().startsWith(u"KaTeX parse error"), qPrintable(mathml.error()));
    const MathResult<QString> unknown = katex.toMathML(QStringLiteral("\\notacommand x"), false);
    QVERIFY(!unknown.ok());
    QVERIFY2(unknown.error().contains(u"\\notacommand"), qPrintable(unknown.error()));
    // The engine stays usable after an error.
    QVERIFY(katex.toMathML(QStringLiteral("y"), false).ok());
  }

  void aMissingScriptNamesThePackage() {
    QTemporaryDir dir;
    QTest::ignoreMessage(QtWarningMsg,
                         QRegularExpression(QStringLiteral("KaTeX is not installed.*libjs-katex")));
    KatexEngine katex(dir.filePath(QStringLiteral("katex.min.js")));
    const MathResult<QString> first = katex.toMathML(QStringLiteral("x"), false);
    QVERIFY(!first.ok());
    QVERIFY(first.error().contains(u"libjs-katex"));
    // Logged once: a second formula gives the same error without a warning.
    QTest::failOnWarning(QRegularExpression(QStringLiteral(".*")));
    QCOMPARE(katex.toMathML(QStringLiteral("y"), false).error(), first.error());
  }

  void tooLongFormulasAreRefused() {
    KatexEngine katex;
    const MathResult<QString> mathml = katex.toMathML(QString(9000, u'x'), false);
    QVERIFY(!mathml.ok());
    QVERIFY(mathml.error().contains(u"9000"));
  }
};

QUIRE_TEST(KatexMathMLTest)
#include "test_math_mathml.moc"
