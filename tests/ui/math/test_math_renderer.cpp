#include <QDir>
#include <QElapsedTimer>
#include <QPainter>
#include <QTest>

#include "katex_engine.h"
#include "quire/ui/math_renderer.h"
#include "test_main.h"

using namespace quire::ui;

namespace {

QFont textFont() {
  QFont font;
  font.setPixelSize(16);
  return font;
}

// The colour of the most opaque pixel: where the ink is solid.
QColor solidInk(const QImage& image) {
  QColor best(Qt::transparent);
  for (int y = 0; y < image.height(); ++y) {
    for (int x = 0; x < image.width(); ++x) {
      const QColor pixel = image.pixelColor(x, y);
      if (pixel.alpha() > best.alpha()) best = pixel;
    }
  }
  return best;
}

}  // namespace

class MathRendererTest : public QObject {
  Q_OBJECT

 private slots:
  void rendersInTheGivenColour() {
    MathRenderer renderer;
    const MathResult<MathImage> image =
        renderer.render(QStringLiteral("x^2"), false, textFont(), QColor(200, 30, 40));
    QVERIFY2(image.ok(), qPrintable(image.error()));
    const QColor ink = solidInk(image.value().image);
    QCOMPARE(ink.alpha(), 255);
    QCOMPARE(ink.rgb(), QColor(200, 30, 40).rgb());
    // The baseline lies inside the image, below its middle for x².
    QVERIFY(image.value().baseline > image.value().size.height() / 2);
    QVERIFY(image.value().baseline < image.value().size.height());
  }

  void highDensityScreensGetMorePixelsOfTheSameSize() {
    MathRenderer renderer;
    const MathImage one =
        renderer.render(QStringLiteral("\\frac{1}{2}"), false, textFont(), Qt::black, 1).value();
    const MathImage two =
        renderer.render(QStringLiteral("\\frac{1}{2}"), false, textFont(), Qt::black, 2).value();
    QCOMPARE(two.image.devicePixelRatio(), 2.0);
    QVERIFY(qAbs(two.size.width() - one.size.width()) <= 1);
    QVERIFY(qAbs(two.size.height() - one.size.height()) <= 1);
    QCOMPARE(two.baseline, one.baseline);
    QVERIFY(two.image.width() >= 2 * one.image.width() - 2);
  }

  void displayMathIsTallerThanInline() {
    MathRenderer renderer;
    const QString sum = QStringLiteral("\\sum_{k=0}^{n} k");
    const MathImage inlineImage = renderer.render(sum, false, textFont(), Qt::black).value();
    const MathImage displayImage = renderer.render(sum, true, textFont(), Qt::black).value();
    QVERIFY(displayImage.size.height() > inlineImage.size.height());
  }

  void smashedContentIsNotCutOff() {
    MathRenderer renderer;
    const MathImage plain =
        renderer.render(QStringLiteral("\\frac{1}{2}"), true, textFont(), Qt::black).value();
    const MathImage smashed =
        renderer.render(QStringLiteral("\\smash{\\frac{1}{2}}"), true, textFont(), Qt::black)
            .value();
    QVERIFY(smashed.size.height() >= plain.size.height() - 1);
  }

  void repeatedFormulasComeFromTheCache() {
    MathRenderer renderer;
    const QString tex = QStringLiteral("a^2+b^2=c^2");
    QVERIFY(renderer.render(tex, false, textFont(), Qt::black).ok());
    QCOMPARE(renderer.katexRuns(), 1);
    QCOMPARE(renderer.layouts(), 1);
    const MathImage again = renderer.render(tex, false, textFont(), Qt::black).value();
    QCOMPARE(renderer.katexRuns(), 1);
    QCOMPARE(renderer.layouts(), 1);
    QVERIFY(!again.image.isNull());
    // Another colour is another image, but KaTeX's MathML is reused.
    QVERIFY(renderer.render(tex, false, textFont(), Qt::red).ok());
    QCOMPARE(renderer.katexRuns(), 1);
    QCOMPARE(renderer.layouts(), 2);
    // And a larger font.
    QFont large = textFont();
    large.setPixelSize(24);
    const MathImage bigger = renderer.render(tex, false, large, Qt::black).value();
    QVERIFY(bigger.size.width() > again.size.width());
  }

  // Every element KaTeX emits for these is laid out: none falls back to
  // source for want of layout.
  void rendersWhatKatexEmits_data() {
    QTest::addColumn<QString>("tex");
    const char* formulas[] = {
        "\\phantom{x}y \\hphantom{x} \\vphantom{x}",
        "\\text{中文 text}",
        "\\color{#abc}{x} \\textcolor{red}{y}",
        "\\not= \\not\\in \\neq",
        "\\begin{array}{c|c} a & b \\\\ \\hline c & d \\end{array}",
        "\\operatorname{tr} A \\xrightarrow{f} B \\stackrel{?}{=} C",
        "\\overset{a}{b} \\underset{a}{b} \\sum_{\\substack{a\\\\b}}",
        "\\smash{x} \\rlap{x} \\llap{x} \\raisebox{1em}{x} \\mathclap{x}",
        "\\mathring{a}\\grave{a}\\acute{a}\\breve{a}\\check{a}\\ddot{a}",
        "\\underline{x} \\overleftarrow{ab} \\widetilde{abc} \\overbrace{a}^{b}",
        "\\fbox{x} \\bcancel{x} \\xcancel{x} \\sout{x} \\colorbox{red}{x}",
        "\\begin{gathered} a \\\\ b \\end{gathered} \\begin{smallmatrix} a & b "
        "\\end{smallmatrix}",
        "\\dfrac{1}{2} \\tfrac{1}{2} \\cfrac{1}{2} a \\choose b",
        "\\displaystyle\\sum_i \\scriptstyle x \\Huge x \\tiny y",
        "\\mathit{ab} \\mathsf{x} \\mathtt{y} \\boldsymbol{\\alpha} \\mathscr{L}",
        "\\left. \\frac{a}{b} \\right|_0^1 \\lVert x \\rVert",
        "\\frac{\\frac{\\frac{a}{b}}{c}}{d} x^{y^{z^{w}}}",
        "\\lim\\limits_{x} \\sum\\nolimits_i \\bmod \\pmod{n}",
        "\\dots \\cdots \\vdots \\ddots \\hbar \\ell \\Re",
        "\\kern1em x \\hskip1em y \\mskip3mu z \\, \\: \\; \\! \\quad \\qquad",
        "\\begin{align} a &= b \\\\ c &= d \\end{align} \\tag{1}",
        "😀 \\href{https://example.org}{y}",
    };
    for (const char* formula : formulas)
      QTest::newRow(formula) << QString::fromUtf8(formula);
  }
  void rendersWhatKatexEmits() {
    QFETCH(QString, tex);
    for (const bool display : {false, true}) {
      if (!display && tex.contains(u"{align}")) continue;  // display only, in KaTeX too
      const MathResult<MathImage> image = rowsRenderer_.render(tex, display, textFont(), Qt::black);
      QVERIFY2(image.ok(), qPrintable(image.error()));
      QVERIFY(image.value().size.width() > 0);
      QVERIFY(image.value().size.height() > 0);
    }
  }

  void brokenTexIsAnErrorNotAnException() {
    MathRenderer renderer;
    const MathResult<MathImage> image =
        renderer.render(QStringLiteral("\\frac{1}{"), false, textFont(), Qt::black);
    QVERIFY(!image.ok());
    QVERIFY2(image.error().contains(u"KaTeX parse error"), qPrintable(image.error()));
    // Remembered too: the same broken formula does not run KaTeX again.
    QVERIFY(!renderer.render(QStringLiteral("\\frac{1}{"), false, textFont(), Qt::black).ok());
    QCOMPARE(renderer.katexRuns(), 1);
  }

  void toMathMLIsTheExportersEntry() {
    MathRenderer renderer;
    const MathResult<QString> mathml = renderer.toMathML(QStringLiteral("\\alpha"), true);
    QVERIFY(mathml.ok());
    QVERIFY(mathml.value().contains(u"<mi>α</mi>"));
    QVERIFY(mathml.value().contains(u"display=\"block\""));
  }

  // Renders a few formulas to PNG for people to look at, and logs what KaTeX
  // costs. Skipped unless QUIRE_SCREENSHOT_DIR is set.
  void screenshots() {
    const QString dir = qEnvironmentVariable("QUIRE_SCREENSHOT_DIR");
    if (dir.isEmpty()) QSKIP("QUIRE_SCREENSHOT_DIR is not set");
    QVERIFY(QDir().mkpath(dir));
    QElapsedTimer timer;
    timer.start();
    KatexEngine katex;
    QVERIFY(katex.toMathML(QStringLiteral("x"), false).ok());
    qInfo("KaTeX loaded and first formula converted in %lld ms", timer.elapsed());

    const struct {
      const char* name;
      const char* tex;
    } formulas[] = {
        {"math-quadratic.png", "x = \\frac{-b \\pm \\sqrt{b^2 - 4ac}}{2a}"},
        {"math-sum.png", "\\sum_{k=1}^{n} k^2 = \\frac{n(n+1)(2n+1)}{6}"},
        {"math-matrix.png",
         "A = \\begin{pmatrix} \\cos\\theta & -\\sin\\theta \\\\ \\sin\\theta & \\cos\\theta "
         "\\end{pmatrix}, \\quad \\int_0^\\infty e^{-x^2}\\,dx = \\frac{\\sqrt{\\pi}}{2}"},
    };
    MathRenderer renderer;
    QFont font = textFont();
    font.setPixelSize(22);
    for (const auto& formula : formulas) {
      timer.restart();
      const MathResult<MathImage> image =
          renderer.render(QString::fromUtf8(formula.tex), true, font, QColor(0x20, 0x22, 0x26), 2);
      QVERIFY2(image.ok(), qPrintable(image.error()));
      qInfo("%s: %lld µs (KaTeX, layout and painting)", formula.name, timer.nsecsElapsed() / 1000);
      QImage pixels = image.value().image;
      pixels.setDevicePixelRatio(1);  // pixel for pixel on the page
      QImage page(pixels.size() + QSize(48, 48), QImage::Format_ARGB32_Premultiplied);
      page.fill(Qt::white);
      QPainter painter(&page);
      painter.drawImage(24, 24, pixels);
      painter.end();
      QVERIFY(page.save(QDir(dir).filePath(QString::fromLatin1(formula.name))));
    }
  }

 private:
  // One KaTeX for all rows of a data-driven test: loading it is the slow part.
  MathRenderer rowsRenderer_;
};

QUIRE_TEST(MathRendererTest)
#include "test_math_renderer.moc"
