// A chat resumed from disk after a restart gives bit for bit the logits of
// the same chat resumed from a warm cache: for every cache coding (the
// residual window on, as by default), dense and sliding-window models. Pages
// evicted while running reach the disk too, pages of another coding are not
// used, and a mixed sliding-window model runs without the tier.

#include <QTest>
#include <map>

#include "disk_tier_test_support.h"
#include "test_main.h"

using namespace quire;
using quire::test::TestModel;

Q_DECLARE_METATYPE(cache::CacheFormat)

namespace {

engine::modelgen::RandomModelSpec disk_family(const std::string& name) {
  engine::modelgen::RandomModelSpec spec = test::small_llama_spec();
  if (name == "mistral window 5") {
    spec.architecture = "mistral";
    spec.sliding_window = 5;
  } else if (name == "qwen3 window 23") {
    spec.architecture = "qwen3";
    spec.sliding_window = 23;
  } else if (name == "gemma2 window 7") {
    spec.architecture = "gemma2";
    spec.sliding_window = 7;
  }
  return spec;
}

}  // namespace

class DiskTierExactnessTest : public QObject {
  Q_OBJECT

  std::map<std::string, std::unique_ptr<TestModel>> models_;

  std::shared_ptr<const engine::ModelDescription> model(const std::string& name) {
    auto& slot = models_[name];
    if (!slot) slot = std::make_unique<TestModel>(disk_family(name));
    return slot->description();
  }

 private slots:
  void aRestartResumesFromDiskExactly_data() {
    QTest::addColumn<std::string>("family");
    QTest::addColumn<cache::CacheFormat>("format");
    // Tokens the second turn reads from disk: every page of the first turn,
    // or, with a sliding window, the pages of position 144's window.
    QTest::addColumn<int>("diskTokens");
    const std::pair<const char*, int> families[] = {
        {"llama", 144}, {"mistral window 5", 16}, {"qwen3 window 23", 32}};
    for (const auto& [family, tokens] : families) {
      for (const cache::CacheFormat format : cache::all_cache_formats()) {
        QTest::addRow("%s, %s", family, std::string(cache::format_info(format).name).c_str())
            << std::string(family) << format << tokens;
      }
    }
  }

  void aRestartResumesFromDiskExactly() {
    QFETCH(std::string, family);
    QFETCH(cache::CacheFormat, format);
    QFETCH(int, diskTokens);
    QTemporaryDir root;
    const engine::DiskTierOptions disk = test::disk_at(test::path_of(root));
    const engine::RuntimeOptions options = test::disk_test_options(format);

    const engine::ArchiveResult archived =
        test::compute_and_archive(model(family), options, disk, test::first_turn());
    QCOMPARE(archived.written, std::uint64_t(9));
    QCOMPARE(archived.left_out, std::uint64_t(0));
    QVERIFY(archived.error.empty());

    const test::ResumeRun resumed = test::resume(model(family), options, disk, test::second_turn());
    QCOMPARE(resumed.stats.disk_restored_tokens, std::int64_t(diskTokens));
    QCOMPARE(resumed.stats.disk_restores, std::int64_t(diskTokens / 16));
    QCOMPARE(resumed.stats.computed_tokens, std::int64_t(37));
    QCOMPARE(resumed.disk.failed_restores, std::uint64_t(0));

    const std::vector<float> warm =
        test::warm_logits(model(family), options, test::first_turn(), test::second_turn());
    QCOMPARE(resumed.logits.size(), warm.size());
    QVERIFY2(
        resumed.logits == warm,
        qPrintable(
            QString("largest difference %1").arg(test::max_abs_difference(resumed.logits, warm))));
  }

  void pagesEvictedWhileRunningReachTheDisk() {
    // A cache of 12 pages: a second chat of 10 pages evicts most of the first,
    // whose pages are written as they leave. No archive: the runtime just ends.
    QTemporaryDir root;
    const engine::DiskTierOptions disk = test::disk_at(test::path_of(root));
    // FP16: the pages computed between restored ones are compared with a
    // fresh run (see test_disk_tier_faults).
    engine::RuntimeOptions options = test::disk_test_options(cache::CacheFormat::FP16);
    options.cache_tokens = 192;
    {
      kernels::CpuBackend backend;
      engine::ModelRuntime runtime(model("llama"), backend, options);
      runtime.open_disk_tier(disk);
      runtime.prefill(test::first_turn(), false);
      runtime.prefill(test::random_tokens(160, 512, 99), false);
      const cache::CacheStats stats = runtime.cache().stats();
      QVERIFY(stats.disk_saves >= 7);
      runtime.disk_tier()->flush();
      QCOMPARE(runtime.disk_tier()->status().writer.written, std::uint64_t(stats.disk_saves));
    }
    // The pages still in the device cache were not archived: the second turn
    // restores the evicted ones and computes the others.
    const test::ResumeRun resumed =
        test::resume(model("llama"), options, disk, test::second_turn());
    QVERIFY(resumed.stats.disk_restored_tokens >= 7 * 16);
    const std::vector<float> fresh =
        test::last_prefill_logits(model("llama"), options, test::second_turn());
    QVERIFY2(test::max_abs_difference(resumed.logits, fresh) <= 1e-4f * test::max_abs(fresh),
             qPrintable(QString::number(test::max_abs_difference(resumed.logits, fresh))));
  }

  void anotherCodingKeepsItsOwnPages() {
    QTemporaryDir root;
    const engine::DiskTierOptions disk = test::disk_at(test::path_of(root));
    const engine::RuntimeOptions fp16 = test::disk_test_options(cache::CacheFormat::FP16);
    const engine::RuntimeOptions q8 = test::disk_test_options(cache::CacheFormat::Q8);
    test::compute_and_archive(model("llama"), fp16, disk, test::first_turn());
    const test::ResumeRun other = test::resume(model("llama"), q8, disk, test::second_turn());
    QCOMPARE(other.stats.disk_restored_tokens, std::int64_t(0));
    // The FP16 pages are left alone, and serve an FP16 cache.
    QCOMPARE(test::page_files(test::store_folder_of(model("llama"), fp16, disk)).size(),
             std::size_t(9));
    const test::ResumeRun same = test::resume(model("llama"), fp16, disk, test::second_turn());
    QCOMPARE(same.stats.disk_restored_tokens, std::int64_t(144));
  }

  void aMixedWindowModelRunsWithoutTheTier() {
    QTemporaryDir root;
    kernels::CpuBackend backend;
    engine::ModelRuntime runtime(model("gemma2 window 7"), backend,
                                 test::disk_test_options(cache::CacheFormat::FP16));
    try {
      runtime.open_disk_tier(test::disk_at(test::path_of(root)));
      QFAIL("a mixed sliding-window model opened the disk tier");
    } catch (const std::invalid_argument& error) {
      QVERIFY2(std::string(error.what()).find("Gemma 2 and 3") != std::string::npos, error.what());
    }
    QVERIFY(runtime.disk_tier() == nullptr);
    QVERIFY(runtime.cache().disk() == nullptr);
    QCOMPARE(runtime.prefill(test::first_turn(), false).size(), std::size_t(1));
    QCOMPARE(runtime.archive_cache().written, std::uint64_t(0));
  }
};

QUIRE_TEST(DiskTierExactnessTest)
#include "test_disk_tier_exactness.moc"
