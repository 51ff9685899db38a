#include <sys/wait.h>
#include <unistd.h>

#include <QTest>
#include <filesystem>
#include <random>

#include "disk_cache_test_support.h"
#include "test_main.h"

using namespace quire;
using namespace quire::test::disk_cache;

namespace {

constexpr int kPages = 48;
constexpr int kWritesPerProcess = 120;

// Writes random pages of one shared set of chains, reading some back, under
// a limit that keeps evicting; exits 0 when every read page was intact.
[[noreturn]] void write_and_evict(const std::filesystem::path& folder, std::uint64_t limit,
                                  std::uint64_t seed) {
  int code = 0;
  try {
    DiskPageStoreOptions options;
    options.limit_bytes = limit;
    DiskPageStore store(folder, model_number(1), small_coding(), options);
    const auto hashes = chain(kPages, 1);
    std::mt19937_64 random(seed);
    std::vector<std::byte> into(std::size_t(store.coding().page_bytes()));
    for (int i = 0; i < kWritesPerProcess; ++i) {
      const std::size_t page = random() % kPages;
      const auto outcome =
          store.write(hashes[page], page == 0 ? std::nullopt : std::optional(hashes[page - 1]), 16,
                      random_payload(store.coding(), page));
      if (outcome.status != WriteStatus::Written && outcome.status != WriteStatus::AlreadyStored)
        code = 2;
      const std::size_t other = random() % kPages;
      const ReadOutcome read = store.read(hashes[other], into);
      if (read.status == ReadStatus::Rejected || read.status == ReadStatus::Failed) code = 3;
      if (read.status == ReadStatus::Read && into != random_payload(store.coding(), other))
        code = 4;
    }
  } catch (...) {
    code = 5;
  }
  ::_exit(code);
}

}  // namespace

class StoreProcessesTest : public QObject {
  Q_OBJECT

 private slots:
  // Two processes write, read and evict in one folder at once. Afterwards
  // every page file validates, no temporary is left and the limit holds.
  void twoProcessesShareAFolder() {
    QTemporaryDir dir;
    const auto folder = path_of(dir) / "pages";
    DiskPageStoreOptions options;
    DiskPageStore probe(folder, model_number(1), small_coding(), options);
    const std::uint64_t page = kPageFileFixedHeader + kPageFileLayerEntry * 3 +
                               std::uint64_t(probe.coding().page_bytes()) + kPageFileChecksum;
    const std::uint64_t limit = 10 * page;

    pid_t children[2];
    for (int i = 0; i < 2; ++i) {
      children[i] = ::fork();
      QVERIFY(children[i] >= 0);
      if (children[i] == 0) write_and_evict(folder, limit, 1000 + std::uint64_t(i));
    }
    for (const pid_t child : children) {
      int status = 0;
      QCOMPARE(::waitpid(child, &status, 0), child);
      QVERIFY(WIFEXITED(status));
      QCOMPARE(WEXITSTATUS(status), 0);
    }

    const auto hashes = chain(kPages, 1);
    std::vector<std::byte> into(std::size_t(probe.coding().page_bytes()));
    std::uint64_t stored = 0;
    for (int i = 0; i < kPages; ++i) {
      const ReadOutcome outcome = probe.read(hashes[std::size_t(i)], into);
      QVERIFY2(outcome.status == ReadStatus::Read || outcome.status == ReadStatus::Missing,
               outcome.message.c_str());
      if (outcome.status == ReadStatus::Read) {
        ++stored;
        QVERIFY(into == random_payload(probe.coding(), std::uint64_t(i)));
      }
    }
    QVERIFY(stored > 0);
    QCOMPARE(probe.usage().pages, stored);
    QVERIFY(probe.usage().bytes <= limit);
    for (const std::string& name : folder_names(folder))
      QVERIFY2(name.ends_with(".page"), name.c_str());
  }
};

QUIRE_TEST(StoreProcessesTest)
#include "test_store_processes.moc"
