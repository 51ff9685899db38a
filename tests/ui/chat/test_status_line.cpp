#include <QLabel>
#include <QTest>

#include "context_gauge.h"
#include "quire/ui/status_line.h"
#include "test_main.h"

using quire::ui::ContextGauge;
using quire::ui::StatusLine;

namespace {

QLabel* item(const StatusLine& line, const char* name) {
  return line.findChild<QLabel*>(QString::fromLatin1(name));
}

int shownSeparators(const StatusLine& line) {
  int count = 0;
  for (const QLabel* label : line.findChildren<QLabel*>()) {
    if (label->objectName().isEmpty() && label->isVisibleTo(&line)) ++count;
  }
  return count;
}

}  // namespace

class StatusLineTest : public QObject {
  Q_OBJECT

 private slots:
  void initTestCase() { QLocale::setDefault(QLocale(QLocale::English, QLocale::UnitedStates)); }

  void startsWithNoModel() {
    StatusLine line;
    QCOMPARE(item(line, "modelLabel")->text(), QStringLiteral("No model loaded"));
    for (const char* name :
         {"devicesLabel", "cacheLabel", "speedLabel", "firstTokenLabel", "reusedLabel"})
      QVERIFY2(!item(line, name)->isVisibleTo(&line), name);
    QVERIFY(!line.findChild<ContextGauge*>()->isVisibleTo(&line));
    QCOMPARE(shownSeparators(line), 0);
  }

  void showsEachValue() {
    StatusLine line;
    line.setModelName(QStringLiteral("Llama-3-8B-Instruct 4.0 bpw"));
    line.setDevices(QStringLiteral("2 × H100"));
    line.setCacheFormat(QStringLiteral("Q4"));
    line.setTokensPerSecond(34.06);
    line.setTimeToFirstToken(0.184);
    line.setReusedTokens(1024, 1100);
    QCOMPARE(item(line, "modelLabel")->text(), QStringLiteral("Llama-3-8B-Instruct 4.0 bpw"));
    QCOMPARE(item(line, "devicesLabel")->text(), QStringLiteral("2 × H100"));
    QCOMPARE(item(line, "cacheLabel")->text(), QStringLiteral("Q4 cache"));
    QCOMPARE(item(line, "speedLabel")->text(), QStringLiteral("34.1 tok/s"));
    QCOMPARE(item(line, "firstTokenLabel")->text(), QStringLiteral("first token 184 ms"));
    QCOMPARE(item(line, "reusedLabel")->text(), QStringLiteral("1,024 of 1,100 tokens reused"));
    for (const char* name : {"modelLabel", "devicesLabel", "cacheLabel", "speedLabel",
                             "firstTokenLabel", "reusedLabel"}) {
      QVERIFY2(item(line, name)->isVisibleTo(&line), name);
      QVERIFY2(!item(line, name)->toolTip().isEmpty(), name);
    }
    QCOMPARE(shownSeparators(line), 5);

    line.setTimeToFirstToken(2.5);
    QCOMPARE(item(line, "firstTokenLabel")->text(), QStringLiteral("first token 2.50 s"));
    line.setReusedTokens(0);
    QCOMPARE(item(line, "reusedLabel")->text(), QStringLiteral("0 tokens reused"));

    line.clearLastReply();
    QVERIFY(!item(line, "speedLabel")->isVisibleTo(&line));
    QVERIFY(!item(line, "firstTokenLabel")->isVisibleTo(&line));
    QVERIFY(!item(line, "reusedLabel")->isVisibleTo(&line));
    QCOMPARE(shownSeparators(line), 2);
  }

  void gaugeFillsAndChangesColour_data() {
    QTest::addColumn<qint64>("used");
    QTest::addColumn<qint64>("maximum");
    QTest::addColumn<double>("fraction");
    QTest::addColumn<int>("level");
    QTest::addColumn<QString>("text");
    QTest::newRow("empty") << qint64{0} << qint64{8192} << 0.0 << int(StatusLine::FillLevel::Normal)
                           << QStringLiteral("0 / 8,192");
    QTest::newRow("some") << qint64{1234} << qint64{8192} << 1234.0 / 8192
                          << int(StatusLine::FillLevel::Normal) << QStringLiteral("1,234 / 8,192");
    QTest::newRow("filling") << qint64{6500} << qint64{8192} << 6500.0 / 8192
                             << int(StatusLine::FillLevel::Warning)
                             << QStringLiteral("6,500 / 8,192");
    QTest::newRow("nearly full") << qint64{7800} << qint64{8192} << 7800.0 / 8192
                                 << int(StatusLine::FillLevel::Critical)
                                 << QStringLiteral("7,800 / 8,192");
    QTest::newRow("over") << qint64{9000} << qint64{8192} << 1.0
                          << int(StatusLine::FillLevel::Critical)
                          << QStringLiteral("9,000 / 8,192");
  }

  void gaugeFillsAndChangesColour() {
    QFETCH(qint64, used);
    QFETCH(qint64, maximum);
    QFETCH(double, fraction);
    QFETCH(int, level);
    QFETCH(QString, text);
    StatusLine line;
    line.setContextFill(used, maximum);
    auto* gauge = line.findChild<ContextGauge*>(QStringLiteral("contextGauge"));
    QVERIFY(gauge->isVisibleTo(&line));
    QCOMPARE(line.contextUsed(), used);
    QCOMPARE(line.contextMaximum(), maximum);
    QVERIFY(qAbs(line.contextFraction() - fraction) < 1e-9);
    QCOMPARE(int(line.contextLevel()), level);
    QCOMPARE(gauge->text(), text);
    QVERIFY(gauge->toolTip().contains(QLocale().toString(used)));
    QVERIFY(!gauge->accessibleDescription().isEmpty());
    const QColor highlight = gauge->palette().color(QPalette::Highlight);
    QCOMPARE(gauge->barColor() == highlight, level == int(StatusLine::FillLevel::Normal));
  }

  void levelsHaveDistinctColours() {
    StatusLine line;
    auto* gauge = line.findChild<ContextGauge*>(QStringLiteral("contextGauge"));
    line.setContextFill(100, 1000);
    const QColor normal = gauge->barColor();
    line.setContextFill(800, 1000);
    const QColor warning = gauge->barColor();
    line.setContextFill(950, 1000);
    const QColor critical = gauge->barColor();
    QVERIFY(normal != warning);
    QVERIFY(warning != critical);
    line.setContextFill(0, 0);
    QVERIFY(!gauge->isVisibleTo(&line));
  }

  // A narrow chat column shortens the labels; the gauge keeps its full width
  // inside the line.
  void theGaugeStaysInANarrowLine() {
    StatusLine line;
    line.setModelName(QStringLiteral("Meta-Llama-3.1-70B-Instruct · exl2-4.65bpw-h6"));
    line.setDevices(QStringLiteral("NVIDIA GeForce RTX 4090, NVIDIA GeForce RTX 3090"));
    line.setCacheFormat(QStringLiteral("Q6"));
    line.setTokensPerSecond(1523.4);
    line.setTimeToFirstToken(0.012);
    line.setReusedTokens(1000, 1040);
    line.setContextFill(38, 256);
    line.resize(360, line.sizeHint().height());
    line.show();
    QVERIFY(QTest::qWaitForWindowExposed(&line));
    auto* gauge = line.findChild<ContextGauge*>(QStringLiteral("contextGauge"));
    QVERIFY(gauge->isVisible());
    QCOMPARE(gauge->width(), gauge->sizeHint().width());
    QVERIFY2(gauge->geometry().right() < line.width(),
             qPrintable(QStringLiteral("gauge ends at %1 of %2")
                            .arg(gauge->geometry().right())
                            .arg(line.width())));
  }

  // A narrow line drops whole items, the last reply's figures first, and
  // shortens only the model name, with "…": never fragments of every label.
  void aNarrowLineDropsWholeItems() {
    StatusLine line;
    line.setModelName(QStringLiteral("Demo model (5.8M parameters)"));
    line.setDevices(QStringLiteral("cpu"));
    line.setCacheFormat(QStringLiteral("FP16"));
    line.setTokensPerSecond(746.8);
    line.setTimeToFirstToken(0.017);
    line.setReusedTokens(4, 14);
    line.setContextFill(42, 256);
    line.resize(900, line.sizeHint().height());
    line.show();
    QVERIFY(QTest::qWaitForWindowExposed(&line));
    const QStringList names = {QStringLiteral("modelLabel"),      QStringLiteral("devicesLabel"),
                               QStringLiteral("cacheLabel"),      QStringLiteral("speedLabel"),
                               QStringLiteral("firstTokenLabel"), QStringLiteral("reusedLabel")};
    const auto label = [&](const QString& name) { return line.findChild<QLabel*>(name); };
    for (const QString& name : names) {
      QVERIFY2(label(name)->isVisible(), qPrintable(name));
      QCOMPARE(label(name)->text(), line.itemText(name));
      QVERIFY2(label(name)->width() >= label(name)->sizeHint().width(),
               qPrintable(QStringLiteral("%1: %2 of %3")
                              .arg(name)
                              .arg(label(name)->width())
                              .arg(label(name)->sizeHint().width())));
    }

    line.resize(330, line.height());
    QTRY_VERIFY(!label(QStringLiteral("reusedLabel"))->isVisible());
    QVERIFY(label(QStringLiteral("modelLabel"))->isVisible());
    // What is hidden is a prefix of the order items give way in.
    const QStringList giveWay = {QStringLiteral("reusedLabel"), QStringLiteral("firstTokenLabel"),
                                 QStringLiteral("devicesLabel"), QStringLiteral("cacheLabel"),
                                 QStringLiteral("speedLabel")};
    bool shownBefore = false;
    for (const QString& name : giveWay) {
      if (label(name)->isVisible()) shownBefore = true;
      QVERIFY2(!shownBefore || label(name)->isVisible(), qPrintable(name));
    }
    for (const QString& name : names) {
      QLabel* shown = label(name);
      if (!shown->isVisible() || name == QStringLiteral("modelLabel")) continue;
      // Whole text at its whole width.
      QCOMPARE(shown->text(), line.itemText(name));
      QVERIFY2(shown->width() >= shown->sizeHint().width(), qPrintable(name));
    }
    QVERIFY(line.findChild<ContextGauge*>(QStringLiteral("contextGauge"))->isVisible());

    line.resize(260, line.height());
    QTRY_VERIFY(label(QStringLiteral("modelLabel"))->text().endsWith(QChar(0x2026)));
    for (const QString& name : names.mid(1))
      QVERIFY2(!label(name)->isVisible(), qPrintable(name));
    QCOMPARE(line.itemText(QStringLiteral("modelLabel")),
             QStringLiteral("Demo model (5.8M parameters)"));

    line.resize(900, line.height());
    QTRY_VERIFY(label(QStringLiteral("reusedLabel"))->isVisible());
    QCOMPARE(label(QStringLiteral("modelLabel"))->text(),
             QStringLiteral("Demo model (5.8M parameters)"));
  }
};

QUIRE_TEST(StatusLineTest)
#include "test_status_line.moc"
