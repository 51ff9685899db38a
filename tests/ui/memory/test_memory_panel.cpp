#include <QDir>
#include <QLabel>
#include <QSignalSpy>
#include <QTest>
#include <QThread>

#include "memory_fixtures.h"
#include "quire/ui/device_memory_bar.h"
#include "quire/ui/memory_panel.h"
#include "quire/ui/memory_text.h"
#include "quire/ui/page_map_legend.h"
#include "quire/ui/page_map_widget.h"
#include "test_main.h"

using namespace quire::ui;
using namespace quire::ui::test;

namespace {

// Stands in for app/'s engine worker: publishes snapshots by signal.
class SnapshotSource : public QObject {
  Q_OBJECT

 signals:
  void published(const quire::ui::MemorySnapshotView& snapshot);
};

QPalette darkPalette() {
  QPalette dark;
  dark.setColor(QPalette::Window, QColor(0x26, 0x28, 0x2b));
  dark.setColor(QPalette::WindowText, QColor(0xe8, 0xe8, 0xe8));
  dark.setColor(QPalette::Base, QColor(0x1d, 0x1f, 0x21));
  dark.setColor(QPalette::Text, QColor(0xe8, 0xe8, 0xe8));
  dark.setColor(QPalette::PlaceholderText, QColor(0xe8, 0xe8, 0xe8, 150));
  dark.setColor(QPalette::Highlight, QColor(0x3d, 0x8e, 0xd8));
  dark.setColor(QPalette::Button, QColor(0x30, 0x32, 0x36));
  dark.setColor(QPalette::ButtonText, QColor(0xe8, 0xe8, 0xe8));
  return dark;
}

}  // namespace

class MemoryPanelTest : public QObject {
  Q_OBJECT

 private slots:
  void startsWithTheEmptyState() {
    MemoryPanel panel;
    QVERIFY(panel.isShowingEmptyState());
    auto* text = panel.findChild<QLabel*>(QStringLiteral("memoryEmptyText"));
    QVERIFY(text);
    QVERIFY(text->text().startsWith(QStringLiteral("Load a model")));
    QVERIFY(panel.deviceBars().isEmpty());
  }

  void setSnapshotUpdatesEveryPart() {
    MemoryPanel panel;
    panel.resize(800, 640);
    const MemorySnapshotView snapshot = realisticSnapshot();
    panel.setSnapshot(snapshot);
    QVERIFY(!panel.isShowingEmptyState());
    QCOMPARE(panel.snapshot(), snapshot);

    QCOMPARE(panel.deviceBars().size(), 2);
    QCOMPARE(panel.deviceBars()[0]->device(), snapshot.devices[0]);
    QCOMPARE(panel.deviceBars()[1]->device(), snapshot.devices[1]);
    QCOMPARE(panel.pageMap()->pages(), snapshot.pages);

    const CacheSummaryView& cache = snapshot.cache;
    QCOMPARE(panel.legend()->count(PageCellState::Free), cache.free_pages);
    QCOMPARE(panel.legend()->count(PageCellState::Active), cache.active_pages);
    QCOMPARE(panel.legend()->count(PageCellState::Cached), cache.cached_pages);
    QCOMPARE(panel.legend()->count(PageCellState::Shared), cache.shared_pages);
    QCOMPARE(panel.hitRateText(), QStringLiteral("72.4%"));
    QCOMPARE(panel.summaryText(),
             QStringLiteral("184,320 tokens reused, 70,212 computed · 142 evictions · "
                            "host tier: 96 saved, 31 restored · 2 defragmentations"));
    QCOMPARE(panel.cacheShapeText(), QStringLiteral("600 pages of 256 tokens · Q6"));
  }

  void summaryShowsRepliesPausedForPages() {
    MemoryPanel panel;
    MemorySnapshotView snapshot = realisticSnapshot();
    snapshot.cache.preemptions = 5;
    panel.setSnapshot(snapshot);
    QCOMPARE(panel.summaryText(),
             QStringLiteral("184,320 tokens reused, 70,212 computed · 142 evictions · "
                            "5 replies paused for pages · host tier: 96 saved, 31 restored · "
                            "2 defragmentations"));
  }

  void legendCountsAndShares() {
    MemoryPanel panel;
    MemorySnapshotView snapshot = realisticSnapshot();
    snapshot.cache.free_pages = 130;
    snapshot.cache.active_pages = 240;
    snapshot.cache.cached_pages = 224;
    snapshot.cache.shared_pages = 6;
    panel.setSnapshot(snapshot);
    const PageMapLegend* legend = panel.legend();
    QCOMPARE(legend->entryText(PageCellState::Active), QStringLiteral("In use 240 (40.0%)"));
    QCOMPARE(legend->entryText(PageCellState::Shared), QStringLiteral("Shared 6 (1.0%)"));
    QCOMPARE(legend->entryText(PageCellState::Cached), QStringLiteral("Cached 224 (37.3%)"));
    QCOMPARE(legend->entryText(PageCellState::Free), QStringLiteral("Free 130 (21.7%)"));
    QCOMPARE(legend->accessibleDescription(),
             QStringLiteral("In use 240 (40.0%), Shared 6 (1.0%), Cached 224 (37.3%), "
                            "Free 130 (21.7%)"));
  }

  // Pages restored from disk get an entry of their own after the states',
  // only while there are some; they count in their states as well.
  void legendHasAnEntryForPagesRestoredFromDisk() {
    MemoryPanel panel;
    MemorySnapshotView snapshot = realisticSnapshot();
    snapshot.cache.free_pages = 130;
    snapshot.cache.active_pages = 240;
    snapshot.cache.cached_pages = 224;
    snapshot.cache.shared_pages = 6;
    panel.setSnapshot(snapshot);
    QCOMPARE(panel.legend()->fromDiskEntryText(), QString());
    QVERIFY(!panel.legend()->accessibleDescription().contains(QStringLiteral("disk")));

    snapshot.cache.disk_pages = 60;
    panel.setSnapshot(snapshot);
    QCOMPARE(panel.legend()->fromDiskEntryText(), QStringLiteral("Restored from disk 60 (10.0%)"));
    QCOMPARE(panel.legend()->accessibleDescription(),
             QStringLiteral("In use 240 (40.0%), Shared 6 (1.0%), Cached 224 (37.3%), "
                            "Free 130 (21.7%), Restored from disk 60 (10.0%)"));

    // Counted from the pages when the summary has no counts.
    MemorySnapshotView from_pages;
    from_pages.devices = snapshot.devices;
    from_pages.pages = cyclingPages(10);
    from_pages.pages[1].from_disk = true;  // active
    from_pages.pages[0].from_disk = true;  // free: its content is gone
    const PageStateCounts counts = PageStateCounts::fromPages(from_pages.pages);
    QCOMPARE(counts.from_disk, 1);
    QCOMPARE(counts.total(), 10);
  }

  // The disk tier's figures follow the host tier's while it is open.
  void summaryShowsTheDiskTier() {
    CacheSummaryView cache;
    cache.reused_tokens = 512;
    cache.computed_tokens = 300;
    cache.disk.enabled = true;
    cache.disk.used_bytes = 96 * (qint64{1} << 20);
    cache.disk.limit_bytes = qint64{4} << 30;
    cache.disk.pages = 12;
    cache.disk.saves = 3;
    cache.disk.restores = 2;
    QCOMPARE(cacheSummaryText(cache),
             QStringLiteral("512 tokens reused, 300 computed · 0 evictions · "
                            "host tier: 0 saved, 0 restored · disk tier: 96.0 MiB of 4.00 GiB in "
                            "12 pages, 3 saved, 2 restored · 0 defragmentations"));
    cache.disk.enabled = false;
    QVERIFY(!cacheSummaryText(cache).contains(QStringLiteral("disk")));
  }

  void legendFallsBackToThePages() {
    MemoryPanel panel;
    MemorySnapshotView snapshot;
    snapshot.devices = realisticSnapshot().devices;
    snapshot.pages = cyclingPages(10);
    panel.setSnapshot(snapshot);
    QCOMPARE(panel.legend()->count(PageCellState::Free), 3);
    QCOMPARE(panel.legend()->count(PageCellState::Shared), 2);
    QCOMPARE(panel.cacheShapeText(), QStringLiteral("10 pages of 0 tokens"));
  }

  void aMixedModelsWindowPoolHasAMapOfItsOwn() {
    MemoryPanel panel;
    panel.resize(800, 760);
    panel.setSnapshot(realisticSnapshot());
    QVERIFY(!panel.isShowingWindowPool());
    QCOMPARE(panel.globalLayersCaptionText(), QString());

    const MemorySnapshotView snapshot = windowPoolSnapshot();
    panel.setSnapshot(snapshot);
    QVERIFY(panel.isShowingWindowPool());
    QCOMPARE(panel.pageMap()->pages(), snapshot.pages);
    QCOMPARE(panel.windowPageMap()->pages(), snapshot.window_pool.pages);
    QCOMPARE(panel.legend()->count(PageCellState::Active), snapshot.cache.active_pages);
    QCOMPARE(panel.windowLegend()->count(PageCellState::Active), 4);
    QCOMPARE(panel.windowLegend()->count(PageCellState::Shared), 1);
    QCOMPARE(panel.windowLegend()->count(PageCellState::Cached), 18);
    QCOMPARE(panel.windowLegend()->count(PageCellState::Free), 25);
    QCOMPARE(panel.globalLayersCaptionText(),
             QStringLiteral("Global layers (5 of 34): every token of each chat · 13.8 GiB"));
    QCOMPARE(panel.slidingLayersCaptionText(),
             QStringLiteral("Sliding layers (29 of 34): the last 1,024 tokens of each chat · "
                            "1.23 GiB"));
    QCOMPARE(panel.windowShapeText(), QStringLiteral("48 pages of 256 tokens · Q6"));
    QCOMPARE(panel.cacheShapeText(), QStringLiteral("600 pages of 256 tokens · Q6"));
    QCOMPARE(panel.windowPageMap()->toolTipForPage(1),
             QStringLiteral("Page 1 · in use\n256 / 256 tokens\n1 reference\nNot hashed yet\n"
                            "Held by Refactor the parser"));

    // Both maps get room on screen, the pool's below the main one.
    QVERIFY(showAndSettle(panel));
    const int main_top = panel.pageMap()->mapTo(&panel, QPoint()).y();
    const int pool_top = panel.windowPageMap()->mapTo(&panel, QPoint()).y();
    QVERIFY(pool_top >= main_top + panel.pageMap()->height());
    QVERIFY(panel.pageMap()->cellLayout().cell > 0);
    QCOMPARE(panel.windowPageMap()->cellLayout().cells, 48);
    QVERIFY(panel.windowPageMap()->cellLayout().cell > 0);

    // The next model has no pool: the second map goes, and its pages with it.
    panel.setSnapshot(realisticSnapshot());
    QVERIFY(!panel.isShowingWindowPool());
    QVERIFY(panel.windowPageMap()->pages().isEmpty());
    QCOMPARE(panel.slidingLayersCaptionText(), QString());
  }

  void devicesComeAndGo() {
    MemoryPanel panel;
    MemorySnapshotView snapshot = realisticSnapshot();
    panel.setSnapshot(snapshot);
    DeviceMemoryBar* first = panel.deviceBars()[0];
    snapshot.devices.removeLast();
    panel.setSnapshot(snapshot);
    QCOMPARE(panel.deviceBars().size(), 1);
    QCOMPARE(panel.deviceBars()[0], first);  // kept, not rebuilt
    snapshot.devices << snapshot.devices[0] << snapshot.devices[0];
    snapshot.devices[2].name = QStringLiteral("GPU 2");
    panel.setSnapshot(snapshot);
    QCOMPARE(panel.deviceBars().size(), 3);
    QCOMPARE(panel.deviceBars()[2]->device().name, QStringLiteral("GPU 2"));
  }

  // A model with a vision tower: the tower is an item of its own under the
  // devices (name, bytes, where), with its exact bytes in the tooltip; a
  // model without one shows no such line.
  void aVisionTowerIsShownAsItsOwnItem() {
    MemoryPanel panel;
    panel.resize(800, 640);
    MemorySnapshotView snapshot = realisticSnapshot();
    panel.setSnapshot(snapshot);
    auto* label = panel.findChild<QLabel*>(QStringLiteral("visionTower"));
    QVERIFY(label);
    QVERIFY(label->isHidden());
    QCOMPARE(panel.visionTowerText(), QString());

    snapshot.vision_tower.name = QStringLiteral("SigLIP tower, Gemma 3 projector");
    snapshot.vision_tower.where = QStringLiteral("host memory");
    snapshot.vision_tower.weights = 851'223'552;
    snapshot.vision_tower.scratch = 302'972'928;
    snapshot.vision_tower.not_loaded = QStringLiteral("images are not yet given to the model");
    panel.setSnapshot(snapshot);
    QVERIFY(!label->isHidden());
    QCOMPARE(panel.visionTowerText(),
             QStringLiteral("Vision tower (SigLIP tower, Gemma 3 projector) · host memory: "
                            "812 MiB of weights, 289 MiB to read an image · not loaded: images "
                            "are not yet given to the model"));
    QCOMPARE(label->toolTip(), visionTowerToolTip(snapshot.vision_tower));
    // The device bars are the devices' alone: the tower is not among them.
    QCOMPARE(panel.deviceBars().size(), 2);

    snapshot.vision_tower = VisionTowerView{};
    panel.setSnapshot(snapshot);
    QVERIFY(label->isHidden());
    QCOMPARE(panel.visionTowerText(), QString());
  }

  void emptySnapshotShowsTheExplanationAgain() {
    MemoryPanel panel;
    panel.setSnapshot(realisticSnapshot());
    QVERIFY(!panel.isShowingEmptyState());
    panel.clear();
    QVERIFY(panel.isShowingEmptyState());
    panel.setSnapshot(realisticSnapshot());
    QVERIFY(!panel.isShowingEmptyState());
    panel.setSnapshot(MemorySnapshotView{});
    QVERIFY(panel.isShowingEmptyState());
  }

  void sameSnapshotRepaintsNothing() {
    MemoryPanel panel;
    panel.resize(800, 640);
    const MemorySnapshotView snapshot = realisticSnapshot();
    panel.setSnapshot(snapshot);
    QVERIFY(showAndSettle(panel));
    PaintCounter map_paints(panel.pageMap());
    PaintCounter bar_paints(panel.deviceBars()[0]);
    PaintCounter legend_paints(panel.legend());
    for (int i = 0; i < 10; ++i)
      panel.setSnapshot(snapshot);
    QTest::qWait(50);
    QCOMPARE(map_paints.count(), 0);
    QCOMPARE(bar_paints.count(), 0);
    QCOMPARE(legend_paints.count(), 0);

    // One page changes state and device 1 gains cache: only those repaint.
    MemorySnapshotView next = snapshot;
    next.pages[300].state = PageCellState::Active;
    next.devices[1].cache += 64 * kMiB;
    next.devices[1].free -= 64 * kMiB;
    PaintCounter other_bar_paints(panel.deviceBars()[1]);
    panel.setSnapshot(next);
    QTRY_VERIFY(map_paints.count() > 0);
    QTRY_VERIFY(other_bar_paints.count() > 0);
    QCOMPARE(map_paints.painted(), panel.pageMap()->pageRect(300));
    QCOMPARE(bar_paints.count(), 0);
    QCOMPARE(legend_paints.count(), 0);  // the summary's counts did not change
  }

  void snapshotsTravelThroughQueuedSignals() {
    MemoryPanel panel;
    SnapshotSource source;
    QObject::connect(&source, &SnapshotSource::published, &panel, &MemoryPanel::setSnapshot,
                     Qt::QueuedConnection);
    QSignalSpy spy(&source, &SnapshotSource::published);
    const MemorySnapshotView snapshot = realisticSnapshot();
    // Emitted from another thread, as the engine worker does.
    QThread* worker = QThread::create([&] { emit source.published(snapshot); });
    worker->start();
    QVERIFY(worker->wait(5000));
    delete worker;
    QCOMPARE(spy.count(), 1);
    QCOMPARE(spy.at(0).at(0).value<MemorySnapshotView>(), snapshot);
    QVERIFY(panel.isShowingEmptyState());  // not delivered until the loop runs
    QTRY_COMPARE(panel.snapshot(), snapshot);
    QVERIFY(!panel.isShowingEmptyState());
  }

  void followsADarkPalette() {
    MemoryPanel panel;
    panel.setPalette(darkPalette());
    panel.resize(800, 640);
    panel.setSnapshot(realisticSnapshot());
    PageMapWidget* map = panel.pageMap();
    QCOMPARE(map->stateColor(PageCellState::Free), trackColor(darkPalette()));
    // Titles use the palette's text colour, not a fixed black.
    for (QLabel* label : panel.findChildren<QLabel*>()) {
      QVERIFY(label->palette().color(label->foregroundRole()).lightness() > 128);
    }
  }

  void screenshot() {
    const QString dir = qEnvironmentVariable("QUIRE_SCREENSHOT_DIR");
    if (dir.isEmpty()) QSKIP("set QUIRE_SCREENSHOT_DIR to save screenshots of the panel");
    QVERIFY(QDir().mkpath(dir));
    struct Shot {
      const char* name;
      QSize size;
      bool dark;
    };
    for (const Shot& shot : {Shot{"memory_panel.png", {860, 660}, false},
                             Shot{"memory_panel_dark.png", {860, 660}, true},
                             Shot{"memory_panel_narrow.png", {400, 720}, false}}) {
      MemoryPanel panel;
      if (shot.dark) panel.setPalette(darkPalette());
      panel.setAutoFillBackground(true);
      panel.resize(shot.size);
      panel.setSnapshot(realisticSnapshot());
      QVERIFY(showAndSettle(panel));
      const QString name = QString::fromLatin1(shot.name);
      QVERIFY(panel.grab().save(QDir(dir).filePath(name)));
    }
    MemoryPanel mixed;
    mixed.setAutoFillBackground(true);
    mixed.resize(860, 760);
    mixed.setSnapshot(windowPoolSnapshot());
    QVERIFY(showAndSettle(mixed));
    QVERIFY(mixed.grab().save(QDir(dir).filePath(QStringLiteral("memory_panel_window_pool.png"))));
    MemoryPanel empty;
    empty.setAutoFillBackground(true);
    empty.resize(520, 320);
    QVERIFY(showAndSettle(empty));
    QVERIFY(empty.grab().save(QDir(dir).filePath(QStringLiteral("memory_panel_empty.png"))));
  }
};

QUIRE_TEST(MemoryPanelTest)
#include "test_memory_panel.moc"
