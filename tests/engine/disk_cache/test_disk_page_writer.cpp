#include <QTest>
#include <cstring>

#include "disk_cache_test_support.h"
#include "quire/engine/disk_cache/disk_page_writer.h"
#include "test_main.h"

using namespace quire;
using namespace quire::test::disk_cache;

namespace {

PageToWrite page_of(const DiskPageStore& store, const std::vector<cache::PageHash>& hashes,
                    std::size_t i) {
  return PageToWrite{hashes[i], i == 0 ? std::nullopt : std::optional(hashes[i - 1]), 16,
                     random_payload(store.coding(), i)};
}

DiskPageStoreOptions with_ops(PageFileOps* ops) {
  DiskPageStoreOptions options;
  options.clock = ticking_clock();
  options.file_ops = ops;
  return options;
}

}  // namespace

class DiskPageWriterTest : public QObject {
  Q_OBJECT

 private slots:
  void pagesAreWrittenInTheBackground() {
    QTemporaryDir dir;
    DiskPageStore store(path_of(dir), model_number(1), small_coding(), with_ops(nullptr));
    const auto hashes = chain(6, 2);
    DiskPageWriter writer(store, 8);
    for (std::size_t i = 0; i < hashes.size(); ++i)
      QVERIFY(writer.write(page_of(store, hashes, i)));
    QVERIFY(writer.write(page_of(store, hashes, 2)));
    writer.flush();
    const DiskWriterStatus status = writer.status();
    QCOMPARE(status.written, std::uint64_t(6));
    QCOMPARE(status.already_stored, std::uint64_t(1));
    QVERIFY(!status.disk_full);
    QVERIFY(status.notice.empty());
    std::vector<std::byte> into(std::size_t(store.coding().page_bytes()));
    for (std::size_t i = 0; i < hashes.size(); ++i) {
      QCOMPARE(store.read(hashes[i], into).status, ReadStatus::Read);
      QVERIFY(into == random_payload(store.coding(), i));
    }
  }

  // While the thread is busy with one page, the queue takes `capacity` more;
  // the next is dropped at once and counted.
  void aFullQueueDropsThePage() {
    QTemporaryDir dir;
    GateOps gate;
    DiskPageStore store(path_of(dir), model_number(1), small_coding(), with_ops(&gate));
    const auto hashes = chain(5, 30);
    DiskPageWriter writer(store, 2);
    QVERIFY(writer.write(page_of(store, hashes, 0)));
    gate.wait_until_entered();
    QVERIFY(writer.write(page_of(store, hashes, 1)));
    QVERIFY(writer.write(page_of(store, hashes, 2)));
    QVERIFY(!writer.write(page_of(store, hashes, 3)));
    QCOMPARE(writer.status().dropped_queue_full, std::uint64_t(1));
    gate.release();
    writer.flush();
    QCOMPARE(writer.status().written, std::uint64_t(3));
    QVERIFY(store.contains(hashes[2]));
    QVERIFY(!store.contains(hashes[3]));
  }

  void aFullDiskStopsWritingWithOneNotice() {
    QTemporaryDir dir;
    FailingOps ops;
    DiskPageStore store(path_of(dir), model_number(1), small_coding(), with_ops(&ops));
    const auto hashes = chain(4, 60);
    DiskPageWriter writer(store, 8);
    QVERIFY(writer.write(page_of(store, hashes, 0)));
    writer.flush();
    ops.fail(FailingOps::Step::Write, ENOSPC, 100);
    QVERIFY(writer.write(page_of(store, hashes, 1)));
    writer.flush();
    ops.fail(FailingOps::Step::None, 0);  // space again: the tier stays stopped
    QVERIFY(!writer.write(page_of(store, hashes, 2)));
    QVERIFY(!writer.write(page_of(store, hashes, 3)));
    writer.flush();
    const DiskWriterStatus status = writer.status();
    QVERIFY(status.disk_full);
    QCOMPARE(status.notice, std::string("the disk is full; the cache's disk tier stopped writing"));
    QCOMPARE(status.written, std::uint64_t(1));
    QCOMPARE(status.dropped_disk_full, std::uint64_t(3));
    QCOMPARE(status.failed, std::uint64_t(0));
    QVERIFY(status.last_error.ends_with(std::string(": cannot write the page file: ") +
                                        std::strerror(ENOSPC)));
    QCOMPARE(folder_names(path_of(dir)), std::vector<std::string>{hashes[0].hex() + ".page"});
    std::vector<std::byte> into(std::size_t(store.coding().page_bytes()));
    QCOMPARE(store.read(hashes[0], into).status, ReadStatus::Read);
  }

  void otherErrorsAreCountedPerPage() {
    QTemporaryDir dir;
    FailingOps ops;
    DiskPageStore store(path_of(dir), model_number(1), small_coding(), with_ops(&ops));
    const auto hashes = chain(3, 80);
    DiskPageWriter writer(store, 8);
    ops.fail(FailingOps::Step::Rename, EIO);
    QVERIFY(writer.write(page_of(store, hashes, 0)));
    writer.flush();
    ops.fail(FailingOps::Step::None, 0);
    QVERIFY(writer.write(page_of(store, hashes, 1)));
    QVERIFY(writer.write(page_of(store, hashes, 2)));
    writer.flush();
    const DiskWriterStatus status = writer.status();
    QCOMPARE(status.failed, std::uint64_t(1));
    QCOMPARE(status.written, std::uint64_t(2));
    QVERIFY(!status.disk_full);
    QVERIFY(status.last_error.ends_with(std::string(": cannot move the page file into place: ") +
                                        std::strerror(EIO)));
    QVERIFY(!store.contains(hashes[0]));
  }

  void destroyingTheWriterWritesWhatIsQueued() {
    QTemporaryDir dir;
    GateOps gate;
    DiskPageStore store(path_of(dir), model_number(1), small_coding(), with_ops(&gate));
    const auto hashes = chain(4, 90);
    {
      DiskPageWriter writer(store, 4);
      for (std::size_t i = 0; i < hashes.size(); ++i)
        QVERIFY(writer.write(page_of(store, hashes, i)));
      gate.release();
    }
    for (const auto& hash : hashes)
      QVERIFY(store.contains(hash));
  }
};

QUIRE_TEST(DiskPageWriterTest)
#include "test_disk_page_writer.moc"
