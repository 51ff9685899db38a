// The footer under the chat at every width from wide to a sliver: what it
// shows is always whole items between single separators, inside the line.

#include <QLabel>
#include <QTest>
#include <algorithm>

#include "context_gauge.h"
#include "quire/ui/status_line.h"
#include "test_main.h"

using quire::ui::ContextGauge;
using quire::ui::StatusLine;

namespace {

bool isFooterSeparator(const QWidget* widget) {
  const auto* label = qobject_cast<const QLabel*>(widget);
  return label != nullptr && label->objectName().isEmpty();
}

// What is wrong with the line as laid out now; empty when nothing is.
QString footerLayoutFault(const StatusLine& line) {
  QList<QWidget*> shown;
  for (QWidget* child : line.findChildren<QWidget*>(Qt::FindDirectChildrenOnly)) {
    if (child->isVisible()) shown.append(child);
  }
  std::sort(shown.begin(), shown.end(),
            [](const QWidget* a, const QWidget* b) { return a->x() < b->x(); });
  const int width = line.width();
  int previousRight = -1;
  for (qsizetype i = 0; i < shown.size(); ++i) {
    const QWidget* widget = shown.at(i);
    const QString name =
        isFooterSeparator(widget) ? QStringLiteral("a separator") : widget->objectName();
    if (widget->x() < 0 || widget->geometry().right() >= width) {
      return QStringLiteral("%1 spans %2..%3 of a %4-pixel line")
          .arg(name)
          .arg(widget->x())
          .arg(widget->geometry().right())
          .arg(width);
    }
    if (widget->x() <= previousRight) return QStringLiteral("%1 overlaps its neighbour").arg(name);
    previousRight = widget->geometry().right();
    // Items and separators alternate, an item at each end.
    const bool separatorHere = (i % 2) == 1;
    if (isFooterSeparator(widget) != separatorHere ||
        (isFooterSeparator(widget) && i == shown.size() - 1)) {
      return QStringLiteral("%1 is out of place (position %2 of %3)")
          .arg(name)
          .arg(i)
          .arg(shown.size());
    }
    if (const auto* label = qobject_cast<const QLabel*>(widget);
        label && !isFooterSeparator(label)) {
      const QString text = label->text();
      // A name cut to an ellipsis and a letter or two says nothing.
      if (text.size() < 4 && text != line.itemText(name)) {
        return QStringLiteral("%1 reads \"%2\"").arg(name, text);
      }
    }
  }
  return {};
}

void fillFooter(StatusLine& line) {
  line.setModelName(QStringLiteral("Meta-Llama-3.1-70B-Instruct · exl2-4.65bpw-h6"));
  line.setDevices(QStringLiteral("cpu"));
  line.setCacheFormat(QStringLiteral("FP16"));
  line.setTokensPerSecond(746.8);
  line.setTimeToFirstToken(0.017);
  line.setReusedTokens(4, 14);
  line.setContextFill(4242, 8192);
}

}  // namespace

class StatusLineWidthsTest : public QObject {
  Q_OBJECT

 private slots:
  void initTestCase() { QLocale::setDefault(QLocale(QLocale::English, QLocale::UnitedStates)); }

  // Narrowed pixel by pixel and widened again: at every width the shown
  // items are whole (or the model name shortened to something readable),
  // one separator between two of them, and all of it inside the line.
  void everyWidthLaysOutCleanly() {
    QWidget window;
    window.resize(1000, 60);
    auto* line = new StatusLine(&window);
    fillFooter(*line);
    line->resize(1000, line->sizeHint().height());
    window.show();
    QVERIFY(QTest::qWaitForWindowExposed(&window));
    const int height = line->height();
    QList<int> widths;
    for (int width = 1000; width >= 8; width -= 3)
      widths.append(width);
    for (int width = 8; width <= 1000; width += 5)
      widths.append(width);
    for (const int width : widths) {
      line->resize(width, height);
      const QString fault = footerLayoutFault(*line);
      QVERIFY2(fault.isEmpty(), qPrintable(QStringLiteral("at %1 px: %2").arg(width).arg(fault)));
    }
    // Wide again: everything is back, whole.
    for (const char* name : {"modelLabel", "devicesLabel", "cacheLabel", "speedLabel",
                             "firstTokenLabel", "reusedLabel"}) {
      const auto* label = line->findChild<QLabel*>(QString::fromLatin1(name));
      QVERIFY2(label->isVisible(), name);
      QCOMPARE(label->text(), line->itemText(QString::fromLatin1(name)));
    }
    QVERIFY(line->findChild<ContextGauge*>(QStringLiteral("contextGauge"))->isVisible());
  }

  // The gauge outlasts every other item; the model name goes before it.
  void theGaugeIsTheLastToGo() {
    QWidget window;
    window.resize(1000, 60);
    auto* line = new StatusLine(&window);
    fillFooter(*line);
    window.show();
    QVERIFY(QTest::qWaitForWindowExposed(&window));
    auto* gauge = line->findChild<ContextGauge*>(QStringLiteral("contextGauge"));
    auto* model = line->findChild<QLabel*>(QStringLiteral("modelLabel"));
    line->resize(gauge->sizeHint().width() + 30, line->height());
    QVERIFY(gauge->isVisible());
    QVERIFY(!model->isVisible());
    line->resize(gauge->sizeHint().width() / 2, line->height());
    QVERIFY(!gauge->isVisible());
    line->resize(gauge->sizeHint().width() + 30, line->height());
    QVERIFY(gauge->isVisible());
  }
};

QUIRE_TEST(StatusLineWidthsTest)
#include "test_status_line_widths.moc"
