#include <QTest>
#include <filesystem>

#include "disk_cache_test_support.h"
#include "quire/engine/disk_cache/disk_cache_usage.h"
#include "test_main.h"

using namespace quire;
using namespace quire::test::disk_cache;

namespace {

// Two sequences sharing their first page, and one of their own:
//   A ─ B ─ C        E ─ F
//    └─ D
// written in the order A B C D E F, each one tick later.
struct Forest {
  cache::PageHash a, b, c, d, e, f;

  Forest() {
    const auto abc = chain(3, 10);
    a = abc[0];
    b = abc[1];
    c = abc[2];
    const std::vector<cache::TokenId> tokens(16, 77);
    d = cache::hash_page(&a, tokens);
    const auto ef = chain(2, 500);
    e = ef[0];
    f = ef[1];
  }

  void write(DiskPageStore& store) const {
    const std::pair<cache::PageHash, std::optional<cache::PageHash>> pages[] = {
        {a, std::nullopt}, {b, a}, {c, b}, {d, a}, {e, std::nullopt}, {f, e}};
    std::uint64_t seed = 0;
    for (const auto& [hash, parent] : pages)
      QCOMPARE(store.write(hash, parent, 16, random_payload(store.coding(), seed++)).status,
               WriteStatus::Written);
  }

  // Which of A..F are stored, as letters.
  std::string stored(const DiskPageStore& store) const {
    std::string letters;
    const cache::PageHash all[] = {a, b, c, d, e, f};
    for (int i = 0; i < 6; ++i)
      if (store.contains(all[i])) letters.push_back(char('A' + i));
    return letters;
  }
};

std::uint64_t page_file_bytes(const DiskPageStore& store) {
  return kPageFileFixedHeader + kPageFileLayerEntry * store.coding().layers.size() +
         std::uint64_t(store.coding().page_bytes()) + kPageFileChecksum;
}

DiskPageStoreOptions with_clock(std::function<std::int64_t()> clock, std::uint64_t limit) {
  DiskPageStoreOptions options;
  options.limit_bytes = limit;
  options.clock = std::move(clock);
  return options;
}

}  // namespace

class StoreEvictionTest : public QObject {
  Q_OBJECT

 private slots:
  // Leaves go first, oldest first; a parent becomes a leaf when its last
  // child is gone. C (oldest leaf), then B, whose child C is gone, go; A is
  // the oldest page of all but stays, as D's parent.
  void leastRecentlyUsedLeavesGoFirst() {
    QTemporaryDir dir;
    DiskPageStore store(path_of(dir), model_number(1), small_coding(),
                        with_clock(ticking_clock(), 1u << 30));
    const Forest forest;
    forest.write(store);
    QCOMPARE(forest.stored(store), std::string("ABCDEF"));
    store.set_limit(4 * page_file_bytes(store));
    QCOMPARE(forest.stored(store), std::string("ADEF"));
    QCOMPARE(store.usage().bytes, 4 * page_file_bytes(store));
  }

  // A read makes a page recent, and the recency is in the files: a store
  // opened afterwards with a smaller limit keeps the page that was read.
  void recencySurvivesAReopen() {
    QTemporaryDir dir;
    const auto clock = ticking_clock();
    const Forest forest;
    std::uint64_t page = 0;
    {
      DiskPageStore store(path_of(dir), model_number(1), small_coding(),
                          with_clock(clock, 1u << 30));
      forest.write(store);
      page = page_file_bytes(store);
      std::vector<std::byte> into(std::size_t(store.coding().page_bytes()));
      QCOMPARE(store.read(forest.d, into).status, ReadStatus::Read);
    }
    // Leaves C (3), D (read: 7), F (6): C, then B, then F, then E go.
    DiskPageStore reopened(path_of(dir), model_number(1), small_coding(),
                           with_clock(clock, 2 * page));
    QCOMPARE(forest.stored(reopened), std::string("AD"));
  }

  void writesStayWithinTheLimit() {
    QTemporaryDir dir;
    DiskPageStore probe(path_of(dir) / "probe", model_number(1), small_coding(),
                        with_clock(ticking_clock(), 1u << 30));
    const std::uint64_t page = page_file_bytes(probe);
    DiskPageStore store(path_of(dir) / "pages", model_number(1), small_coding(),
                        with_clock(ticking_clock(), 5 * page + page / 2));
    const auto hashes = chain(12, 1);
    for (std::size_t i = 0; i < hashes.size(); ++i) {
      store.write(hashes[i], i == 0 ? std::nullopt : std::optional(hashes[i - 1]), 16,
                  random_payload(store.coding(), i));
      QVERIFY(store.usage().bytes <= 5 * page + page / 2);
    }
    // A restore walks a chain from its first page, so a chain longer than
    // the limit keeps its first pages: each newer page is the only leaf
    // (or an orphan, once its parent is gone) and goes at once.
    for (std::size_t i = 0; i < hashes.size(); ++i)
      QCOMPARE(store.contains(hashes[i]), i < 5);
    QCOMPARE(store.usage().pages, std::uint64_t(5));
  }

  void aPageLargerThanTheLimitIsNotWritten() {
    QTemporaryDir dir;
    DiskPageStore store(path_of(dir), model_number(1), small_coding(),
                        with_clock(ticking_clock(), 100));
    QCOMPARE(
        store.write(chain(1, 1)[0], std::nullopt, 16, random_payload(store.coding(), 1)).status,
        WriteStatus::TooLarge);
    QCOMPARE(store.usage().pages, std::uint64_t(0));
  }

  void clearRemovesEveryPage() {
    QTemporaryDir dir;
    DiskPageStore store(path_of(dir), model_number(1), small_coding(),
                        with_clock(ticking_clock(), 1u << 30));
    Forest().write(store);
    write_file(path_of(dir) / "notes.txt", {std::byte{'x'}});
    store.clear();
    QCOMPARE(store.usage().pages, std::uint64_t(0));
    QCOMPARE(folder_names(path_of(dir)), std::vector<std::string>{"notes.txt"});
  }

  void usageIsCountedByModel() {
    QTemporaryDir dir;
    const auto root = path_of(dir);
    QVERIFY(usage_by_model(root / "absent").empty());
    const PageCoding q6 = small_coding();
    const PageCoding fp16 = small_coding(cache::CacheFormat::FP16);
    QCOMPARE(store_folder(root, model_number(1), q6), root / model_number(1).hex() / q6.key());
    DiskPageStore first(store_folder(root, model_number(1), q6), model_number(1), q6,
                        with_clock(ticking_clock(), 1u << 30));
    DiskPageStore first_fp16(store_folder(root, model_number(1), fp16), model_number(1), fp16,
                             with_clock(ticking_clock(), 1u << 30));
    DiskPageStore second(store_folder(root, model_number(2), fp16), model_number(2), fp16,
                         with_clock(ticking_clock(), 1u << 30));
    std::filesystem::create_directory(root / "not-a-model");
    Forest().write(first);
    const auto hashes = chain(2, 9);
    first_fp16.write(hashes[0], std::nullopt, 16, random_payload(fp16, 0));
    second.write(hashes[0], std::nullopt, 16, random_payload(fp16, 0));
    second.write(hashes[1], hashes[0], 16, random_payload(fp16, 1));

    auto usage = usage_by_model(root);
    QCOMPARE(usage.size(), std::size_t(2));
    const std::size_t one = usage[0].model == model_number(1).hex() ? 0 : 1;
    QCOMPARE(usage[one].model, model_number(1).hex());
    QCOMPARE(usage[one].pages, std::uint64_t(7));
    QCOMPARE(usage[one].bytes, 6 * page_file_bytes(first) + page_file_bytes(first_fp16));
    QCOMPARE(usage[1 - one].model, model_number(2).hex());
    QCOMPARE(usage[1 - one].pages, std::uint64_t(2));
    QCOMPARE(usage[1 - one].bytes, 2 * page_file_bytes(second));

    clear_all_models(root);
    usage = usage_by_model(root);
    QCOMPARE(usage.size(), std::size_t(2));
    QCOMPARE(usage[0].pages + usage[1].pages, std::uint64_t(0));
    QVERIFY(std::filesystem::exists(root / "not-a-model"));
  }
};

QUIRE_TEST(StoreEvictionTest)
#include "test_store_eviction.moc"
