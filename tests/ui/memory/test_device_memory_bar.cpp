#include <QApplication>
#include <QHelpEvent>
#include <QTest>
#include <QToolTip>

#include "memory_fixtures.h"
#include "quire/ui/device_memory_bar.h"
#include "quire/ui/memory_style.h"
#include "quire/ui/memory_text.h"
#include "test_main.h"

using namespace quire::ui;
using namespace quire::ui::test;

namespace {

// 24 GiB: 8 weights, 4 cache, 0.5 scratch, 1 other, 10.5 free. At 480 px one
// GiB is 20 px, so the parts are 160, 80, 10, 20 and 210 px wide.
DeviceMemoryView device24() {
  return {QStringLiteral("GPU 0 · Test"), 24 * kGiB, 8 * kGiB, 4 * kGiB, 512 * kMiB, 1 * kGiB,
          10 * kGiB + 512 * kMiB,         {}};
}

}  // namespace

class DeviceMemoryBarTest : public QObject {
  Q_OBJECT

 private slots:
  void segmentsAreProportional() {
    DeviceMemoryBar bar;
    bar.resize(480, bar.heightForWidth(480));
    bar.setDevice(device24());
    const QRect track = bar.barRect();
    QCOMPARE(track.width(), 480);
    QCOMPARE(track.height(), DeviceMemoryBar::kBarHeight);
    const int top = track.top();
    const int h = track.height();
    QCOMPARE(bar.segmentRect(MemorySegment::Weights), QRect(0, top, 160, h));
    QCOMPARE(bar.segmentRect(MemorySegment::Cache), QRect(160, top, 80, h));
    QCOMPARE(bar.segmentRect(MemorySegment::Scratch), QRect(240, top, 10, h));
    QCOMPARE(bar.segmentRect(MemorySegment::Other), QRect(250, top, 20, h));
    QCOMPARE(bar.segmentRect(MemorySegment::Free), QRect(270, top, 210, h));
    QCOMPARE(bar.segmentAt(QPoint(200, top + 5)), std::optional(MemorySegment::Cache));
    QCOMPARE(bar.segmentAt(QPoint(200, top - 2)), std::nullopt);
  }

  void partsTileTheBarWithoutGapsOrOverlap() {
    DeviceMemoryBar bar;
    bar.resize(333, bar.heightForWidth(333));
    // Awkward numbers: rounding must still tile the bar exactly.
    bar.setDevice({QStringLiteral("x"), 1000003, 333331, 1, 249999, 77777, 338895, {}});
    int x = bar.barRect().left();
    for (MemorySegment segment : kMemorySegments) {
      const QRect rect = bar.segmentRect(segment);
      if (rect.isEmpty()) continue;
      QCOMPARE(rect.left(), x);
      x = rect.right() + 1;
    }
    QCOMPARE(x, bar.barRect().right() + 1);
  }

  void eachPartHasItsColourAndPattern() {
    DeviceMemoryBar bar;
    bar.resize(480, bar.heightForWidth(480));
    // Host memory, which has every part.
    DeviceMemoryView device = device24();
    device.host = true;
    device.host_tier = 512 * kMiB;
    device.program = 512 * kMiB;
    device.free -= kGiB;
    bar.setDevice(device);
    const QImage image = render(bar);
    for (MemorySegment segment : kMemorySegments) {
      // Sample inside the part, away from the rounded ends and separators.
      const QRect rect = bar.segmentRect(segment).adjusted(2, 2, -2, -2);
      const QColor fill = segmentColor(segment, bar.palette());
      int plain = 0;
      int hatched = 0;
      for (int y = rect.top(); y <= rect.bottom(); ++y) {
        for (int x = rect.left(); x <= rect.right(); ++x) {
          (QColor::fromRgba(image.pixel(x, y)) == fill ? plain : hatched) += 1;
        }
      }
      QVERIFY2(plain > 0, qPrintable(segmentLabel(segment)));
      // Hatched parts show their lines too, so they differ without colour.
      QCOMPARE(hatched > 0, segmentPattern(segment) != Qt::NoBrush);
    }
    QCOMPARE(segmentColor(MemorySegment::Weights, bar.palette()), QColor(0x00, 0x9e, 0x73));
    QCOMPARE(segmentColor(MemorySegment::Cache, bar.palette()), QColor(0xd5, 0x5e, 0x00));
    QCOMPARE(segmentColor(MemorySegment::Scratch, bar.palette()), QColor(0xcc, 0x79, 0xa7));
    QCOMPARE(segmentColor(MemorySegment::Other, bar.palette()), QColor(0x8c, 0x8c, 0x8c));
    QCOMPARE(segmentColor(MemorySegment::Free, bar.palette()), trackColor(bar.palette()));
  }

  void toolTipGivesExactNumbers() {
    DeviceMemoryBar bar;
    bar.resize(480, bar.heightForWidth(480));
    bar.setDevice(device24());
    const QString expected = QStringLiteral(
        "GPU 0 · Test\n"
        "Weights: 8.00 GiB (8,589,934,592 bytes), 33.3% of total\n"
        "KV cache: 4.00 GiB (4,294,967,296 bytes), 16.7% of total\n"
        "Scratch: 512 MiB (536,870,912 bytes), 2.1% of total\n"
        "Other processes: 1.00 GiB (1,073,741,824 bytes), 4.2% of total\n"
        "Free: 10.5 GiB (11,274,289,152 bytes), 43.8% of total\n"
        "Total: 24.0 GiB (25,769,803,776 bytes)");
    QCOMPARE(bar.toolTipText(), expected);
    QCOMPARE(bar.accessibleDescription(), expected);

    bar.show();
    QVERIFY(QTest::qWaitForWindowExposed(&bar));
    const QPoint point = bar.segmentRect(MemorySegment::Cache).center();
    QHelpEvent help(QEvent::ToolTip, point, bar.mapToGlobal(point));
    QApplication::sendEvent(&bar, &help);
    QCOMPARE(QToolTip::text(), expected);
    QToolTip::hideText();
  }

  void repaintsOnlyWhenTheNumbersChange() {
    DeviceMemoryBar bar;
    bar.resize(480, bar.heightForWidth(480));
    bar.setDevice(device24());
    QVERIFY(showAndSettle(bar));
    PaintCounter paints(&bar);
    for (int i = 0; i < 5; ++i)
      bar.setDevice(device24());
    QTest::qWait(50);
    QCOMPARE(paints.count(), 0);

    DeviceMemoryView busier = device24();
    busier.cache += 256 * kMiB;
    busier.free -= 256 * kMiB;
    bar.setDevice(busier);
    QTRY_VERIFY(paints.count() > 0);
  }

  void keepsItsHeightWhileNumbersMove() {
    DeviceMemoryBar bar;
    bar.setDevice(device24());
    const int height = bar.heightForWidth(600);
    DeviceMemoryView moved = device24();
    moved.cache = 4 * kGiB + 300 * kMiB;
    moved.free -= 300 * kMiB;
    bar.setDevice(moved);
    QCOMPARE(bar.heightForWidth(600), height);
    // Narrow, the legend wraps and the widget grows; it never shrinks below the bar.
    QVERIFY(bar.heightForWidth(200) > height);
    QVERIFY(bar.minimumSizeHint().height() >= DeviceMemoryBar::kBarHeight);
  }

  void emptyDeviceDrawsAnEmptyTrack() {
    DeviceMemoryBar bar;
    bar.resize(300, bar.heightForWidth(300));
    bar.setDevice({QStringLiteral("cpu0"), 0, 0, 0, 0, 0, 0, {}});
    for (MemorySegment segment : kMemorySegments)
      QVERIFY(bar.segmentRect(segment).isEmpty());
    const QImage image = render(bar);
    QCOMPARE(QColor::fromRgba(image.pixel(bar.barRect().center())), trackColor(bar.palette()));
  }
};

QUIRE_TEST(DeviceMemoryBarTest)
#include "test_device_memory_bar.moc"
