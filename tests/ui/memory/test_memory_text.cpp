#include <QTest>

#include "memory_fixtures.h"
#include "quire/ui/memory_text.h"
#include "quire/ui/page_map_legend.h"
#include "test_main.h"

using namespace quire::ui;
using quire::ui::test::kGiB;
using quire::ui::test::kMiB;

class MemoryTextTest : public QObject {
  Q_OBJECT

 private slots:
  void formatsBytes_data() {
    QTest::addColumn<qint64>("bytes");
    QTest::addColumn<QString>("text");
    QTest::newRow("zero") << qint64{0} << QStringLiteral("0 B");
    QTest::newRow("bytes") << qint64{512} << QStringLiteral("512 B");
    QTest::newRow("KiB") << qint64{12 * 1024} << QStringLiteral("12.0 KiB");
    QTest::newRow("MiB") << 512 * kMiB << QStringLiteral("512 MiB");
    QTest::newRow("MiB, two decimals") << (3 * kMiB + kMiB / 4) << QStringLiteral("3.25 MiB");
    QTest::newRow("GiB") << 8 * kGiB << QStringLiteral("8.00 GiB");
    QTest::newRow("GiB, one decimal") << (23 * kGiB + kGiB / 2) << QStringLiteral("23.5 GiB");
    QTest::newRow("large") << 141 * kGiB << QStringLiteral("141 GiB");
    QTest::newRow("negative") << -2 * kMiB << QStringLiteral("-2.00 MiB");
  }

  void formatsBytes() {
    QFETCH(qint64, bytes);
    QTEST(formatBytes(bytes), "text");
  }

  void groupsDigits() {
    QCOMPARE(groupDigits(0), QStringLiteral("0"));
    QCOMPARE(groupDigits(999), QStringLiteral("999"));
    QCOMPARE(groupDigits(1000), QStringLiteral("1,000"));
    QCOMPARE(groupDigits(8804682752), QStringLiteral("8,804,682,752"));
    QCOMPARE(groupDigits(-1234567), QStringLiteral("-1,234,567"));
  }

  void formatsPercentAndCounts() {
    QCOMPARE(formatPercent(0.7243), QStringLiteral("72.4%"));
    QCOMPARE(formatPercent(1.0), QStringLiteral("100.0%"));
    QCOMPARE(countNoun(1, QStringLiteral("eviction"), QStringLiteral("evictions")),
             QStringLiteral("1 eviction"));
    QCOMPARE(countNoun(1200, QStringLiteral("eviction"), QStringLiteral("evictions")),
             QStringLiteral("1,200 evictions"));
  }

  void pageToolTipForEachState() {
    PageCellView shared{42,
                        PageCellState::Shared,
                        3,
                        256,
                        256,
                        QStringLiteral("3fa9c2e1"),
                        {QStringLiteral("Trip planning"), QStringLiteral("Code review")}};
    QCOMPARE(pageToolTip(shared), QStringLiteral("Page 42 · shared\n"
                                                 "256 / 256 tokens\n"
                                                 "3 references\n"
                                                 "Hash 3fa9c2e1…\n"
                                                 "Held by Trip planning, Code review"));

    PageCellView active{7, PageCellState::Active, 1, 97, 256, QString(), {QStringLiteral("Draft")}};
    QCOMPARE(pageToolTip(active), QStringLiteral("Page 7 · in use\n"
                                                 "97 / 256 tokens\n"
                                                 "1 reference\n"
                                                 "Not hashed yet\n"
                                                 "Held by Draft"));

    PageCellView cached{9, PageCellState::Cached, 0, 256, 256, QStringLiteral("00ff"), {}};
    QCOMPARE(pageToolTip(cached), QStringLiteral("Page 9 · cached\n"
                                                 "256 / 256 tokens\n"
                                                 "No references: kept for reuse\n"
                                                 "Hash 00ff…"));

    PageCellView free{3, PageCellState::Free, 0, 0, 256, QString(), {}};
    QCOMPARE(pageToolTip(free), QStringLiteral("Page 3 · free\nNo content"));
  }

  void pageToolTipNamesAFewHolders() {
    PageCellView page{0,
                      PageCellState::Shared,
                      6,
                      256,
                      256,
                      QStringLiteral("ab"),
                      {QStringLiteral("A"), QStringLiteral("B"), QStringLiteral("C"),
                       QStringLiteral("D"), QStringLiteral("E"), QStringLiteral("F")}};
    QVERIFY(pageToolTip(page).endsWith(QStringLiteral("Held by A, B, C, D and 2 more")));
  }

  void groupToolTipCountsStates() {
    const QList<PageCellView> pages = quire::ui::test::cyclingPages(20);
    // Pages 4..9: free, in use, cached, shared, free, in use.
    QCOMPARE(pageGroupToolTip(pages, 4, 6),
             QStringLiteral("Pages 4–9\n2 in use, 1 shared, 1 cached, 2 free"));
    // A run cut short by the end of the cache.
    QCOMPARE(pageGroupToolTip(pages, 18, 10), QStringLiteral("Pages 18–19\n1 shared, 1 cached"));
    QCOMPARE(pageGroupToolTip(pages, 25, 2), QString());
  }

  void deviceToolTipHasExactBytes() {
    DeviceMemoryView device{
        QStringLiteral("GPU 0 · Test"), 24 * kGiB, 8 * kGiB, 4 * kGiB, 512 * kMiB, 1 * kGiB,
        10 * kGiB + 512 * kMiB,         {},        false,    0,        0};
    const QString without = deviceToolTip(device);
    QVERIFY(!without.contains(QStringLiteral("stored as")));
    // How the weights are stored follows their line.
    device.weights_detail = QStringLiteral("EXL3, codebook MUL1: attention 4 bits");
    QCOMPARE(deviceToolTip(device),
             QStringLiteral("GPU 0 · Test\n"
                            "Weights: 8.00 GiB (8,589,934,592 bytes), 33.3% of total\n"
                            "  stored as EXL3, codebook MUL1: attention 4 bits\n"
                            "KV cache: 4.00 GiB (4,294,967,296 bytes), 16.7% of total\n"
                            "Scratch: 512 MiB (536,870,912 bytes), 2.1% of total\n"
                            "Other processes: 1.00 GiB (1,073,741,824 bytes), 4.2% of total\n"
                            "Free: 10.5 GiB (11,274,289,152 bytes), 43.8% of total\n"
                            "Total: 24.0 GiB (25,769,803,776 bytes)"));
    QCOMPARE(deviceUsageText(device), QStringLiteral("13.5 GiB of 24.0 GiB used"));
  }

  // The machine's own memory holds the cache's host tier and Quire itself,
  // each named as what it is rather than counted as other processes.
  void hostMemoryNamesQuiresOwnParts() {
    DeviceMemoryView device;
    device.name = QStringLiteral("cpu");
    device.host = true;
    device.total = 16 * kGiB;
    device.weights = kGiB;
    device.cache = 512 * kMiB;
    device.host_tier = 256 * kMiB;
    device.scratch = 64 * kMiB;
    device.program = 320 * kMiB;
    device.other = 4 * kGiB;
    device.free = 10 * kGiB - 128 * kMiB;
    QCOMPARE(deviceToolTip(device),
             QStringLiteral("cpu\n"
                            "Weights: 1.00 GiB (1,073,741,824 bytes), 6.3% of total\n"
                            "KV cache: 512 MiB (536,870,912 bytes), 3.1% of total\n"
                            "Host tier: 256 MiB (268,435,456 bytes), 1.6% of total\n"
                            "Scratch: 64.0 MiB (67,108,864 bytes), 0.4% of total\n"
                            "Quire itself: 320 MiB (335,544,320 bytes), 2.0% of total\n"
                            "Other processes: 4.00 GiB (4,294,967,296 bytes), 25.0% of total\n"
                            "Free: 9.88 GiB (10,603,200,512 bytes), 61.7% of total\n"
                            "Total: 16.0 GiB (17,179,869,184 bytes)"));
    QCOMPARE(deviceUsageText(device), QStringLiteral("6.13 GiB of 16.0 GiB used"));
  }

  // The vision tower's line and tooltip: in memory, and not loaded.
  void visionTowerTexts() {
    VisionTowerView tower;
    tower.name = QStringLiteral("SigLIP tower, Gemma 3 projector");
    tower.where = QStringLiteral("host memory");
    tower.weights = 165'120;
    tower.scratch = 87'808;
    QCOMPARE(visionTowerText(tower),
             QStringLiteral("Vision tower (SigLIP tower, Gemma 3 projector) · host memory: "
                            "161 KiB of weights, 85.8 KiB to read an image"));
    QCOMPARE(visionTowerToolTip(tower),
             QStringLiteral("Vision tower: SigLIP tower, Gemma 3 projector\n"
                            "Weights: 161 KiB (165,120 bytes)\n"
                            "Reading one image: 85.8 KiB (87,808 bytes) at most\n"
                            "In host memory: the tower runs on the CPU"));
    tower.not_loaded = QStringLiteral("images are not yet given to the model");
    QCOMPARE(visionTowerText(tower),
             QStringLiteral("Vision tower (SigLIP tower, Gemma 3 projector) · host memory: "
                            "161 KiB of weights, 85.8 KiB to read an image · not loaded: images "
                            "are not yet given to the model"));
    QVERIFY(visionTowerToolTip(tower).endsWith(
        QStringLiteral("\nNot loaded: images are not yet given to the model")));
  }

  void summaryTexts() {
    CacheSummaryView cache;
    cache.page_size = 256;
    cache.total_pages = 600;
    cache.reused_tokens = 18432;
    cache.computed_tokens = 7020;
    cache.hit_rate = 0.7242;
    cache.evictions = 12;
    cache.host_saves = 3;
    cache.host_restores = 2;
    cache.defragmentations = 1;
    cache.format = QStringLiteral("q4");
    QCOMPARE(hitRateText(cache), QStringLiteral("72.4%"));
    QCOMPARE(cacheSummaryText(cache),
             QStringLiteral("18,432 tokens reused, 7,020 computed · 12 evictions · "
                            "host tier: 3 saved, 2 restored · 1 defragmentation"));
    QCOMPARE(cacheShapeText(cache), QStringLiteral("600 pages of 256 tokens · Q4"));
    // Before the first prompt there is no rate to speak of.
    QCOMPARE(hitRateText(CacheSummaryView{}), QStringLiteral("—"));
  }

  void theTwoPoolsOfAMixedModelSayWhichLayersTheyHold() {
    WindowPoolView pool;
    pool.layers = 2;
    pool.sliding_layers = 1;
    pool.window_tokens = 1;
    QCOMPARE(globalLayersCaptionText(pool),
             QStringLiteral("Global layers (1 of 2): every token of each chat"));
    QCOMPARE(slidingLayersCaptionText(pool),
             QStringLiteral("Sliding layers (1 of 2): the last 1 token of each chat"));
    pool.layers = 34;
    pool.sliding_layers = 29;
    pool.window_tokens = 1024;
    pool.bytes = 1536 * (qint64{1} << 20);
    pool.global_bytes = 2 * (qint64{1} << 30) + (qint64{1} << 29);
    QCOMPARE(globalLayersCaptionText(pool),
             QStringLiteral("Global layers (5 of 34): every token of each chat · 2.50 GiB"));
    QCOMPARE(slidingLayersCaptionText(pool),
             QStringLiteral("Sliding layers (29 of 34): the last 1,024 tokens of each chat · "
                            "1.50 GiB"));
  }

  void summaryCountsRepliesPausedForPages() {
    CacheSummaryView cache;
    cache.reused_tokens = 512;
    cache.computed_tokens = 300;
    cache.evictions = 4;
    cache.preemptions = 1;
    QCOMPARE(cacheSummaryText(cache),
             QStringLiteral("512 tokens reused, 300 computed · 4 evictions · "
                            "1 reply paused for pages · host tier: 0 saved, 0 restored · "
                            "0 defragmentations"));
    cache.preemptions = 3;
    QVERIFY(cacheSummaryText(cache).contains(QStringLiteral(" · 3 replies paused for pages · ")));
  }

  void stateCountsFromSummaryAndPages() {
    CacheSummaryView cache;
    cache.free_pages = 10;
    cache.active_pages = 20;
    cache.cached_pages = 30;
    cache.shared_pages = 40;
    const PageStateCounts counts = PageStateCounts::fromSummary(cache);
    QCOMPARE(counts[PageCellState::Free], 10);
    QCOMPARE(counts[PageCellState::Shared], 40);
    QCOMPARE(counts.total(), 100);
    const PageStateCounts cycled = PageStateCounts::fromPages(quire::ui::test::cyclingPages(10));
    QCOMPARE(cycled[PageCellState::Free], 3);
    QCOMPARE(cycled[PageCellState::Active], 3);
    QCOMPARE(cycled[PageCellState::Cached], 2);
    QCOMPARE(cycled[PageCellState::Shared], 2);
  }
};

QUIRE_TEST(MemoryTextTest)
#include "test_memory_text.moc"
