// Tooltips keep to a readable width: a long one wraps at about 70
// characters instead of spanning the screen, and a short one is left alone.

#include <QApplication>
#include <QLabel>
#include <QTest>
#include <QToolTip>

#include "test_main.h"
#include "tooltip_width.h"

using namespace quire;

namespace {

QLabel* shown_tooltip() {
  for (QWidget* widget : QApplication::topLevelWidgets()) {
    if (widget->objectName() == QLatin1String("qtooltip_label") && widget->isVisible())
      return qobject_cast<QLabel*>(widget);
  }
  return nullptr;
}

// About 110 characters: narrower than the offscreen screen, so Qt itself
// would show it on one line.
const QString kLongTip = QStringLiteral(
    "Pages evicted from the GPU are kept in host memory by their hash and copied back instead of "
    "being recomputed.");

}  // namespace

class TooltipWidthTest : public QObject {
  Q_OBJECT

 private slots:
  void aLongTooltipWrapsAtAReadableWidth() {
    QWidget window;
    window.resize(1600, 400);
    window.show();
    QVERIFY(QTest::qWaitForWindowExposed(&window));
    // Left to Qt, the tooltip is one line as wide as its text.
    QToolTip::showText(window.mapToGlobal(QPoint(10, 10)), kLongTip, &window);
    QTRY_VERIFY(shown_tooltip() != nullptr);
    const int widest = gui::TooltipWidth::maximumWidth(*shown_tooltip());
    QVERIFY(shown_tooltip()->width() > widest);
    QToolTip::hideText();
    QTRY_VERIFY(shown_tooltip() == nullptr);

    QObject owner;
    new gui::TooltipWidth(&owner);
    QToolTip::showText(window.mapToGlobal(QPoint(10, 10)), kLongTip, &window);
    QTRY_VERIFY(shown_tooltip() != nullptr);
    QLabel* tip = shown_tooltip();
    QVERIFY2(tip->width() <= widest,
             qPrintable(QStringLiteral("%1 px of at most %2").arg(tip->width()).arg(widest)));
    // Wrapped, not cut: the label is tall enough for every line of it.
    QVERIFY(tip->wordWrap());
    QCOMPARE(tip->text(), kLongTip);
    QVERIFY(tip->height() >= tip->heightForWidth(tip->width()));
    QVERIFY(tip->height() > tip->fontMetrics().height() * 3 / 2);
    QToolTip::hideText();
  }

  void aShortTooltipKeepsItsLine() {
    QWidget window;
    window.resize(800, 400);
    window.show();
    QVERIFY(QTest::qWaitForWindowExposed(&window));
    QObject owner;
    new gui::TooltipWidth(&owner);
    const QString text = QStringLiteral("Tokens per second");
    QToolTip::showText(window.mapToGlobal(QPoint(10, 10)), text, &window);
    QTRY_VERIFY(shown_tooltip() != nullptr);
    QLabel* tip = shown_tooltip();
    QCOMPARE(tip->text(), text);
    QVERIFY(tip->height() < 2 * tip->fontMetrics().height() + 12);
    QToolTip::hideText();
  }
};

QUIRE_TEST(TooltipWidthTest)
#include "test_tooltip_width.moc"
