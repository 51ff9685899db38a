#include <QTest>

#include "katex_engine.h"
#include "math_fonts.h"
#include "math_layout.h"
#include "mathml_tree.h"
#include "test_main.h"

using namespace quire::ui;

namespace {

constexpr qreal kEm = 20;

// One engine and one set of fonts for the whole suite, destroyed before the
// application object (QJSEngine must not outlive it).
KatexEngine* katex = nullptr;
MathFonts* fonts = nullptr;

MathBox layOut(const QString& tex, bool display) {
  const MathResult<QString> mathml = katex->toMathML(tex, display);
  if (!mathml.ok()) qFatal("KaTeX: %s", qPrintable(mathml.error()));
  const MathResult<MathNode> tree = parseMathML(mathml.value());
  if (!tree.ok()) qFatal("MathML: %s", qPrintable(tree.error()));
  const MathResult<MathBox> box = layoutMath(tree.value(), kEm, *fonts);
  if (!box.ok()) qFatal("layout: %s", qPrintable(box.error()));
  return box.value();
}

QRectF role(const MathBox& box, const char* name) {
  const std::optional<QRectF> rect = findRole(box, QString::fromLatin1(name));
  if (!rect) qFatal("no box with role %s", name);
  return *rect;
}

}  // namespace

class MathLayoutTest : public QObject {
  Q_OBJECT

 private slots:
  void initTestCase() {
    katex = new KatexEngine;
    fonts = new MathFonts;
  }
  void cleanupTestCase() {
    delete katex;
    delete fonts;
  }

  void fractionStacksNumeratorBarDenominator() {
    for (const bool display : {false, true}) {
      const MathBox box = layOut(QStringLiteral("\\frac{a+b}{c}"), display);
      const QRectF numerator = role(box, "numerator");
      const QRectF bar = role(box, "fraction-bar");
      const QRectF denominator = role(box, "denominator");
      QVERIFY(numerator.bottom() < bar.top());
      QVERIFY(bar.bottom() < denominator.top());
      // The bar is at the math axis, a quarter em above the baseline.
      QCOMPARE(bar.center().y(), -0.25 * kEm);
      // Both parts are centred on the bar, which spans the wider of them.
      QCOMPARE(numerator.center().x(), bar.center().x());
      QCOMPARE(denominator.center().x(), bar.center().x());
      QCOMPARE(bar.width(), std::max(numerator.width(), denominator.width()));
    }
  }

  void textFractionIsSmallerThanDisplayFraction() {
    const MathBox text = layOut(QStringLiteral("\\frac{a}{b}"), false);
    const MathBox display = layOut(QStringLiteral("\\frac{a}{b}"), true);
    QVERIFY(role(text, "numerator").height() < role(display, "numerator").height());
    QVERIFY(text.height() < display.height());
  }

  void binomialHasNoBar() {
    const MathBox box = layOut(QStringLiteral("\\binom{n}{k}"), false);
    QVERIFY(!findRole(box, QStringLiteral("fraction-bar")));
    QVERIFY(role(box, "numerator").bottom() < role(box, "denominator").top());
  }

  void superscriptIsRaisedAndSmaller() {
    const MathBox box = layOut(QStringLiteral("x^x"), false);
    const QRectF base = role(box, "base");
    const QRectF superscript = role(box, "superscript");
    QVERIFY(superscript.bottom() < base.bottom());
    QVERIFY(superscript.left() >= base.right());
    // Script size is 70% of the text size.
    QVERIFY(qAbs(superscript.width() / base.width() - 0.7) < 0.01);
    QVERIFY(superscript.height() < base.height());
  }

  void subscriptIsLoweredAndSuperscriptAboveIt() {
    const MathBox sub = layOut(QStringLiteral("x_i"), false);
    QVERIFY(role(sub, "subscript").bottom() > role(sub, "base").bottom());
    const MathBox both = layOut(QStringLiteral("x_i^2"), false);
    QVERIFY(role(both, "superscript").bottom() < role(both, "subscript").top());
  }

  void squareRootIsWiderAndTallerThanItsRadicand() {
    const MathBox box = layOut(QStringLiteral("\\sqrt{x+1}"), false);
    const QRectF radicand = role(box, "radicand");
    const QRectF surd = role(box, "surd");
    QVERIFY(box.width > radicand.width() + surd.width() - 1e-9);
    QVERIFY(surd.right() <= radicand.left() + 1e-9);
    QVERIFY(box.ascent > radicand.height() - box.descent);
    QVERIFY(surd.top() < radicand.top());
  }

  void rootIndexSitsLeftAndHigh() {
    const MathBox box = layOut(QStringLiteral("\\sqrt[3]{x}"), false);
    const QRectF index = role(box, "index");
    const QRectF radicand = role(box, "radicand");
    QVERIFY(index.right() <= radicand.left());
    QVERIFY(index.bottom() < 0);
  }

  void displaySumHasLimitsAboveAndBelow() {
    const MathBox box = layOut(QStringLiteral("\\sum_{i=1}^{n} i"), true);
    const QRectF sum = role(box, "base");
    const QRectF over = role(box, "over");
    const QRectF under = role(box, "under");
    QVERIFY(over.bottom() < sum.top());
    QVERIFY(under.top() > sum.bottom());
    QVERIFY(qAbs(over.center().x() - sum.center().x()) < 1e-9);
    QVERIFY(qAbs(under.center().x() - sum.center().x()) < 1e-9);
    // The display operator is larger than the inline one, whose limits are
    // scripts beside it.
    const MathBox inlineSum = layOut(QStringLiteral("\\sum_{i=1}^{n} i"), false);
    QVERIFY(role(inlineSum, "base").height() < sum.height());
    QVERIFY(role(inlineSum, "superscript").left() >= role(inlineSum, "base").right());
  }

  void fencesGrowWithTheirContent() {
    const MathBox plain = layOut(QStringLiteral("\\left(x\\right)"), true);
    const MathBox tall = layOut(QStringLiteral("\\left(\\frac{a}{b}\\right)"), true);
    const MathBox fraction = layOut(QStringLiteral("\\frac{a}{b}"), true);
    QVERIFY(plain.height() < tall.height());
    QVERIFY(tall.height() >= fraction.height() * 0.9);
  }

  void matrixRowsAndColumnsAreOrdered() {
    const MathBox box = layOut(QStringLiteral("\\begin{matrix}a&b\\\\c&d\\end{matrix}"), false);
    // The table is the row's only child; its cells in reading order.
    const MathBox& table = box.children.at(0);
    QCOMPARE(table.children.size(), std::size_t{4});
    auto centre = [&](std::size_t i) {
      const MathBox& cell = table.children[i];
      return QPointF(cell.offset.x() + cell.width / 2, cell.offset.y());
    };
    QVERIFY(centre(1).x() > centre(0).x());
    QCOMPARE(centre(1).y(), centre(0).y());
    QVERIFY(centre(2).y() > centre(0).y());
    QCOMPARE(centre(2).x(), centre(0).x());
    QCOMPARE(centre(3).x(), centre(1).x());
    // Centred on the axis.
    QVERIFY(qAbs((table.descent - table.ascent) / 2 + 0.25 * kEm) < 1e-9);
  }

  void relationsGetMoreSpaceThanBinaryOperators() {
    const qreal plus = layOut(QStringLiteral("a+b"), false).width;
    const qreal equals = layOut(QStringLiteral("a=b"), false).width;
    const qreal unary = layOut(QStringLiteral("-b"), false).width;
    const qreal binary = layOut(QStringLiteral("a-b"), false).width;
    const qreal a = layOut(QStringLiteral("a"), false).width;
    QVERIFY(equals > plus - 0.01 * kEm);
    // A unary minus gets no space; a binary one 4/18 em on either side.
    QVERIFY(qAbs((binary - a - unary) - 8.0 / 18 * kEm) < 1e-6);
  }

  void unknownElementsAreErrors() {
    const MathResult<MathNode> tree =
        parseMathML(QStringLiteral("<math><mrow><mglyph src=\"x\"/></mrow></math>"));
    QVERIFY(tree.ok());
    const MathResult<MathBox> box = layoutMath(tree.value(), kEm, *fonts);
    QVERIFY(!box.ok());
    QCOMPARE(box.error(), QStringLiteral("The MathML element <mglyph> is not supported"));
  }

  void missingFontsNameThePackage() {
    MathFonts missing(QStringLiteral("/nonexistent/katex"));
    const MathResult<MathNode> tree = parseMathML(QStringLiteral("<math><mi>x</mi></math>"));
    const MathResult<MathBox> box = layoutMath(tree.value(), kEm, missing);
    QVERIFY(!box.ok());
    QVERIFY(box.error().contains(u"fonts-katex"));
  }
};

QUIRE_TEST(MathLayoutTest)
#include "test_math_layout.moc"
