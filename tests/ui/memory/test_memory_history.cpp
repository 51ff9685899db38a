#include <QTest>

#include "memory_fixtures.h"
#include "quire/ui/memory_history.h"
#include "quire/ui/memory_history_chart.h"
#include "quire/ui/memory_panel.h"
#include "quire/ui/memory_text.h"
#include "test_main.h"

using namespace quire::ui;
using namespace quire::ui::test;

namespace {

MemorySnapshotView snapshotWith(qint64 sampled_tokens) {
  MemorySnapshotView snapshot;
  DeviceMemoryView a;
  a.name = QStringLiteral("cuda0");
  a.total = 24 * kGiB;
  a.weights = 4 * kGiB;
  a.cache = 2 * kGiB;
  a.scratch = 512 * kMiB;
  a.other = kGiB;
  DeviceMemoryView b = a;
  b.name = QStringLiteral("cuda1");
  b.weights = kGiB;
  b.cache = kGiB;
  b.scratch = 0;
  snapshot.devices = {a, b};
  snapshot.cache.total_pages = 10;
  snapshot.cache.free_pages = 10;
  snapshot.sampled_tokens = sampled_tokens;
  return snapshot;
}

}  // namespace

class MemoryHistoryTest : public QObject {
  Q_OBJECT

 private slots:
  // The same figure as each device bar's "... of ... used": other use counts.
  void usedBytesAreWhatTheDeviceBarsCallUsed() {
    MemoryHistory history;
    history.add(snapshotWith(0), 1000);
    QCOMPARE(history.points().size(), 1);
    QCOMPARE(history.points()[0].used_bytes,
             usedBytes(snapshotWith(0).devices[0]) + usedBytes(snapshotWith(0).devices[1]));
    QCOMPARE(history.points()[0].used_bytes,
             4 * kGiB + 2 * kGiB + 512 * kMiB + kGiB + kGiB + kGiB + kGiB);
    QCOMPARE(history.points()[0].total_bytes, 48 * kGiB);
    QCOMPARE(history.points()[0].tokens_per_second, 0.0);
  }

  void speedIsTokensBetweenSamplesOverTheirDistance() {
    MemoryHistory history;
    history.add(snapshotWith(100), 1000);
    history.add(snapshotWith(160), 3000);  // 60 tokens in 2 s
    history.add(snapshotWith(160), 3500);  // idle
    QCOMPARE(history.points()[1].tokens_per_second, 30.0);
    QCOMPARE(history.points()[2].tokens_per_second, 0.0);
    QCOMPARE(history.peakTokensPerSecond(), 30.0);
  }

  // 1,500 tokens generated in 1 s of a 4 s interval: the chart says 1,500
  // tokens/s, as the reply's statistics do, not the 375 of the whole interval.
  void speedIsOverTheTimeSpentGenerating() {
    MemoryHistory history;
    MemorySnapshotView first = snapshotWith(100);
    first.generating_seconds = 2.0;
    MemorySnapshotView second = snapshotWith(1600);
    second.generating_seconds = 3.0;
    MemorySnapshotView idle = snapshotWith(1600);
    idle.generating_seconds = 3.0;
    history.add(first, 1000);
    history.add(second, 5000);
    history.add(idle, 6000);
    QCOMPARE(history.points()[1].tokens_per_second, 1500.0);
    QCOMPARE(history.points()[2].tokens_per_second, 0.0);
  }

  void theAxesNameTheirUnits() {
    MemoryHistoryChart chart;
    QCOMPARE(chart.axisTitles(), (QStringList{QStringLiteral("Seconds before now"),
                                              QStringLiteral("GiB"), QStringLiteral("tokens/s")}));
    QCOMPARE(chart.speedSeriesName(), QStringLiteral("Decode speed (tokens/s)"));
    MemoryHistory history;
    MemorySnapshotView small;
    DeviceMemoryView device;
    device.total = 24 * kGiB;
    device.weights = 5 * kMiB;
    small.devices = {device};
    history.add(small, 1000);
    chart.setHistory(history);
    QCOMPARE(chart.axisTitles().value(1), QStringLiteral("MiB"));
  }

  void aCounterThatWentBackStartsAfresh() {
    // A new model was loaded: its generator counts from zero.
    MemoryHistory history;
    history.add(snapshotWith(5000), 1000);
    history.add(snapshotWith(20), 2000);
    QCOMPARE(history.points()[1].tokens_per_second, 0.0);
    history.add(snapshotWith(40), 3000);
    QCOMPARE(history.points()[2].tokens_per_second, 20.0);
  }

  void samplesOlderThanTheWindowAreDropped() {
    MemoryHistory history(10'000);
    for (qint64 t = 0; t <= 30'000; t += 1000)
      history.add(snapshotWith(t / 100), t);
    QCOMPARE(history.points().size(), 11);
    QCOMPARE(history.points().first().time_ms, 20'000);
    QCOMPARE(history.points().last().time_ms, 30'000);
    history.clear();
    QVERIFY(history.points().isEmpty());
  }

  void theChartDrawsSecondsBeforeNowInGiBAndTokensPerSecond() {
    MemoryHistory history(60'000);
    history.add(snapshotWith(0), 10'000);
    history.add(snapshotWith(170), 20'000);
    MemoryHistoryChart chart;
    chart.setHistory(history);
    const QList<QPointF> memory = chart.memoryPoints();
    const QList<QPointF> speed = chart.speedPoints();
    QCOMPARE(memory.size(), 2);
    QCOMPARE(memory[0], QPointF(-10.0, 10.5));
    QCOMPARE(memory[1], QPointF(0.0, 10.5));
    QCOMPARE(speed[1], QPointF(0.0, 17.0));
    // Axes end on round numbers above the data.
    QCOMPARE(chart.memoryAxisMaximum(), 20.0);
    QCOMPARE(chart.speedAxisMaximum(), 20.0);
  }

  void aSmallModelIsDrawnInMiB() {
    MemorySnapshotView snapshot;
    DeviceMemoryView device;
    device.total = 24 * kGiB;
    device.weights = 5 * kMiB;
    device.cache = 12 * kMiB;
    device.scratch = 7 * kMiB;
    snapshot.devices = {device};
    MemoryHistory history;
    history.add(snapshot, 1000);
    MemoryHistoryChart chart;
    chart.setHistory(history);
    QCOMPARE(chart.memoryPoints().value(0), QPointF(0.0, 24.0));
    QCOMPARE(chart.memoryAxisMaximum(), 50.0);
  }

  // Figures that hover around 1 GiB keep the axis's unit: GiB once the
  // peak reaches it, MiB again only when the peak falls well below.
  void theUnitHoldsWhileTheFiguresHoverAroundAGibibyte() {
    const auto used = [](qint64 bytes) {
      MemorySnapshotView snapshot;
      DeviceMemoryView device;
      device.total = 16 * kGiB;
      device.weights = bytes;
      snapshot.devices = {device};
      return snapshot;
    };
    MemoryHistoryChart chart;
    const auto unitAt = [&](qint64 bytes, qint64 time_ms) {
      // A short window: each sample leaves only itself to draw.
      MemoryHistory history(1);
      history.add(used(bytes), time_ms);
      chart.setHistory(history);
      return chart.axisTitles().value(1);
    };
    QCOMPARE(unitAt(1000 * kMiB, 1000), QStringLiteral("MiB"));
    QCOMPARE(unitAt(1100 * kMiB, 2000), QStringLiteral("GiB"));
    QCOMPARE(chart.memoryPoints().value(0).y(), 1100.0 / 1024.0);
    QCOMPARE(unitAt(1000 * kMiB, 3000), QStringLiteral("GiB"));
    QCOMPARE(chart.memoryPoints().value(0).y(), 1000.0 / 1024.0);
    QCOMPARE(unitAt(600 * kMiB, 4000), QStringLiteral("GiB"));
    QCOMPARE(unitAt(300 * kMiB, 5000), QStringLiteral("MiB"));
    QCOMPARE(chart.memoryPoints().value(0).y(), 300.0);
    QCOMPARE(unitAt(1000 * kMiB, 6000), QStringLiteral("MiB"));
  }

  void thePanelRecordsSamplesOnlyWithAModel() {
    MemoryPanel panel;
    panel.recordSample(1000);
    QVERIFY(panel.history().points().isEmpty());
    panel.setSnapshot(snapshotWith(10));
    panel.recordSample(2000);
    panel.setSnapshot(snapshotWith(30));
    panel.recordSample(3000);
    QCOMPARE(panel.history().points().size(), 2);
    QCOMPARE(panel.history().points()[1].tokens_per_second, 20.0);
    QCOMPARE(panel.historyChart()->speedPoints().size(), 2);
    panel.clear();
    QVERIFY(panel.history().points().isEmpty());
    QVERIFY(panel.historyChart()->speedPoints().isEmpty());
  }
};

QUIRE_TEST(MemoryHistoryTest)
#include "test_memory_history.moc"
