#include <QTest>
#include <cstdlib>
#include <filesystem>
#include <stdexcept>

#include "disk_cache_test_support.h"
#include "test_main.h"

using namespace quire;
using namespace quire::test::disk_cache;

namespace {

DiskPageStoreOptions clocked(std::uint64_t limit = std::uint64_t{1} << 30) {
  DiskPageStoreOptions options;
  options.limit_bytes = limit;
  options.clock = ticking_clock();
  return options;
}

// Writes page `hashes[i]` with payload seed i and its chain parent.
void write_chain(DiskPageStore& store, const std::vector<cache::PageHash>& hashes) {
  for (std::size_t i = 0; i < hashes.size(); ++i) {
    const auto outcome =
        store.write(hashes[i], i == 0 ? std::nullopt : std::optional(hashes[i - 1]), 16,
                    random_payload(store.coding(), i));
    QCOMPARE(outcome.status, WriteStatus::Written);
  }
}

ReadOutcome read_page(DiskPageStore& store, const cache::PageHash& hash) {
  std::vector<std::byte> into(static_cast<std::size_t>(store.coding().page_bytes()));
  return store.read(hash, into);
}

}  // namespace

class DiskPageStoreTest : public QObject {
  Q_OBJECT

 private slots:
  void pagesRoundTrip() {
    QTemporaryDir dir;
    DiskPageStore store(path_of(dir) / "pages", model_number(1), small_coding(), clocked());
    const auto hashes = chain(5, 40);
    QVERIFY(!store.contains(hashes[0]));
    write_chain(store, hashes);
    for (std::size_t i = 0; i < hashes.size(); ++i) {
      QVERIFY(store.contains(hashes[i]));
      std::vector<std::byte> into(static_cast<std::size_t>(store.coding().page_bytes()));
      const ReadOutcome outcome = store.read(hashes[i], into);
      QCOMPARE(outcome.status, ReadStatus::Read);
      QVERIFY(into == random_payload(store.coding(), i));
      QVERIFY(outcome.parent == (i == 0 ? std::nullopt : std::optional(hashes[i - 1])));
      QCOMPARE(outcome.token_count, 16u);
    }
    const StoreUsage usage = store.usage();
    QCOMPARE(usage.pages, std::uint64_t(5));
    QCOMPARE(usage.bytes, 5 * std::filesystem::file_size(store.path_of(hashes[0])));
    QCOMPARE(store.rejected_files(), std::uint64_t(0));
  }

  void severalPagesAreReadAtOnce() {
    QTemporaryDir dir;
    DiskPageStore store(path_of(dir), model_number(1), small_coding(), clocked());
    const auto hashes = chain(4, 3);
    write_chain(store, hashes);
    const std::vector<cache::PageHash> wanted = {hashes[3], chain(1, 999)[0], hashes[0]};
    std::vector<std::vector<std::byte>> buffers(
        3, std::vector<std::byte>(static_cast<std::size_t>(store.coding().page_bytes())));
    const std::vector<std::span<std::byte>> spans(buffers.begin(), buffers.end());
    const auto outcomes = store.read_many(wanted, spans);
    QCOMPARE(outcomes.size(), std::size_t(3));
    QCOMPARE(outcomes[0].status, ReadStatus::Read);
    QCOMPARE(outcomes[1].status, ReadStatus::Missing);
    QCOMPARE(outcomes[2].status, ReadStatus::Read);
    QVERIFY(buffers[0] == random_payload(store.coding(), 3));
    QVERIFY(buffers[2] == random_payload(store.coding(), 0));

    // A damaged file among them is refused alone.
    auto bytes = read_file(store.path_of(hashes[1]));
    bytes[bytes.size() / 2] ^= std::byte{0x80};
    write_file(store.path_of(hashes[1]), bytes);
    const std::vector<cache::PageHash> again = {hashes[0], hashes[1], hashes[2]};
    const auto second = store.read_many(again, spans);
    QCOMPARE(second[0].status, ReadStatus::Read);
    QCOMPARE(second[1].status, ReadStatus::Rejected);
    QVERIFY(second[1].problem == PageFileProblem::ChecksumMismatch);
    QCOMPARE(second[2].status, ReadStatus::Read);
    QVERIFY(buffers[2] == random_payload(store.coding(), 2));
    QVERIFY(!store.contains(hashes[1]));
  }

  void aBufferOfAnotherSizeIsRefused() {
    QTemporaryDir dir;
    DiskPageStore store(path_of(dir), model_number(1), small_coding(), clocked());
    std::vector<std::byte> small(10);
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument, store.read(chain(1, 1)[0], small));
  }

  void aPageWrittenTwiceIsStoredOnce() {
    QTemporaryDir dir;
    DiskPageStore store(path_of(dir), model_number(1), small_coding(), clocked());
    const auto hash = chain(1, 5)[0];
    const auto payload = random_payload(store.coding(), 5);
    QCOMPARE(store.write(hash, std::nullopt, 16, payload).status, WriteStatus::Written);
    QCOMPARE(store.write(hash, std::nullopt, 16, payload).status, WriteStatus::AlreadyStored);
    QCOMPARE(folder_names(path_of(dir)), std::vector<std::string>{hash.hex() + ".page"});
  }

  void filesArePrivate() {
    QTemporaryDir dir;
    const auto folder = path_of(dir) / "quire" / "pages" / model_number(1).hex();
    DiskPageStore store(folder, model_number(1), small_coding(), clocked());
    const auto hash = chain(1, 5)[0];
    store.write(hash, std::nullopt, 16, random_payload(store.coding(), 5));
    QCOMPARE(mode_of(store.path_of(hash)), 0600);
    QCOMPARE(mode_of(folder / ".lock"), 0600);
    QCOMPARE(mode_of(folder), 0700);
    QCOMPARE(mode_of(path_of(dir) / "quire" / "pages"), 0700);
    QCOMPARE(mode_of(path_of(dir) / "quire"), 0700);
  }

  void aFolderThatIsAFileIsNamed() {
    QTemporaryDir dir;
    write_file(path_of(dir) / "file", {});
    try {
      DiskPageStore store(path_of(dir) / "file", model_number(1), small_coding(), clocked());
      QFAIL("a file was taken for a folder");
    } catch (const std::system_error& error) {
      QCOMPARE(std::string(error.what()),
               "disk cache: " + (path_of(dir) / "file").string() + ": is not a folder: " +
                   std::error_code(ENOTDIR, std::generic_category()).message());
    }
  }

  // Each damaged or foreign file is refused with its reason and removed.
  void badFilesAreRefusedAndRemoved_data() {
    QTest::addColumn<QString>("damage");
    QTest::addColumn<int>("problem");
    QTest::addRow("truncated in the header") << "cut:50" << int(PageFileProblem::Truncated);
    QTest::addRow("truncated in the table") << "cut:100" << int(PageFileProblem::Truncated);
    QTest::addRow("truncated in the data") << "cut:2000" << int(PageFileProblem::Truncated);
    QTest::addRow("truncated in the checksum") << "cut:-1" << int(PageFileProblem::Truncated);
    QTest::addRow("empty") << "cut:0" << int(PageFileProblem::Truncated);
    QTest::addRow("bit flipped in the header")
        << "flip:20" << int(PageFileProblem::ChecksumMismatch);
    QTest::addRow("bit flipped in the data")
        << "flip:3000" << int(PageFileProblem::ChecksumMismatch);
    QTest::addRow("not a page file") << "flip:1" << int(PageFileProblem::BadMagic);
    QTest::addRow("another model") << "model" << int(PageFileProblem::OtherModel);
    QTest::addRow("another coding") << "coding:3" << int(PageFileProblem::OtherCoding);
    QTest::addRow("fewer layers") << "coding:2" << int(PageFileProblem::OtherCoding);
    QTest::addRow("more layers") << "coding:5" << int(PageFileProblem::OtherCoding);
    QTest::addRow("another coding, damaged")
        << "coding:-5" << int(PageFileProblem::ChecksumMismatch);
    QTest::addRow("another page") << "rename" << int(PageFileProblem::OtherPage);
  }
  void badFilesAreRefusedAndRemoved() {
    QFETCH(QString, damage);
    QFETCH(int, problem);
    QTemporaryDir dir;
    DiskPageStore store(path_of(dir), model_number(1), small_coding(), clocked());
    const auto hashes = chain(2, 70);
    write_chain(store, hashes);
    const auto path = store.path_of(hashes[1]);
    auto bytes = read_file(path);
    const QString kind = damage.section(':', 0, 0);
    const long long at = damage.section(':', 1, 1).toLongLong();
    if (kind == "cut") {
      bytes.resize(at < 0 ? bytes.size() - 1 : std::size_t(at));
      write_file(path, bytes);
    } else if (kind == "flip") {
      bytes[std::size_t(at)] ^= std::byte{0x04};
      write_file(path, bytes);
    } else if (kind == "model") {
      DiskPageStore other(path_of(dir) / "other", model_number(2), small_coding(), clocked());
      other.write(hashes[1], hashes[0], 16, random_payload(store.coding(), 1));
      std::filesystem::rename(other.path_of(hashes[1]), path);
    } else if (kind == "coding") {
      // FP8 pages of as many layers, or Q6 pages of another layer count; a
      // negative count: such a file with a flipped bit in its data.
      const int layers = int(std::abs(at));
      DiskPageStore other(
          path_of(dir) / "other", model_number(1),
          small_coding(layers == 3 ? cache::CacheFormat::FP8 : cache::CacheFormat::Q6, layers),
          clocked());
      other.write(hashes[1], hashes[0], 16, random_payload(other.coding(), 1));
      std::filesystem::rename(other.path_of(hashes[1]), path);
      if (at < 0) {
        bytes = read_file(path);
        bytes[bytes.size() - 100] ^= std::byte{0x01};
        write_file(path, bytes);
      }
    } else {
      std::filesystem::rename(store.path_of(hashes[0]), path);
    }

    const ReadOutcome outcome = read_page(store, hashes[1]);
    QCOMPARE(outcome.status, ReadStatus::Rejected);
    QVERIFY(outcome.problem.has_value());
    QCOMPARE(int(*outcome.problem), problem);
    QVERIFY2(outcome.message.starts_with(path.string() + ": " + to_string(*outcome.problem) + ": "),
             outcome.message.c_str());
    QVERIFY(outcome.message.ends_with(
        "; the page file was removed and the page will be computed again"));
    QVERIFY(!std::filesystem::exists(path));
    QVERIFY(!store.contains(hashes[1]));
    QCOMPARE(store.rejected_files(), std::uint64_t(1));
    QCOMPARE(read_page(store, hashes[1]).status, ReadStatus::Missing);
  }
};

QUIRE_TEST(DiskPageStoreTest)
#include "test_disk_page_store.moc"
