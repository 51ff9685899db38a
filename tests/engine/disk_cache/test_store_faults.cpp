#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <QTest>
#include <cstring>
#include <filesystem>
#include <thread>
#include <utility>

#include "disk_cache_test_support.h"
#include "test_main.h"

using namespace quire;
using namespace quire::test::disk_cache;

namespace {

DiskPageStoreOptions failing(FailingOps& ops) {
  DiskPageStoreOptions options;
  options.clock = ticking_clock();
  options.file_ops = &ops;
  return options;
}

// Writes in the child stop half way: the child tells the parent through a
// pipe, then waits to be killed.
class StallingOps : public PageFileOps {
 public:
  explicit StallingOps(int notify) : notify_(notify) {}
  int write_all(int fd, std::span<const std::byte> bytes) override {
    if (const int err = PageFileOps::write_all(fd, bytes.first(bytes.size() / 2)); err != 0)
      return err;
    const char ready = 'w';
    [[maybe_unused]] const ssize_t sent = ::write(notify_, &ready, 1);
    for (;;)
      ::pause();
  }

 private:
  int notify_;
};

// The first new temporary is seen by a store opening on the folder before
// its writer has locked it, as another process opening in that moment would.
class OpenedBeforeTheLock : public PageFileOps {
 public:
  explicit OpenedBeforeTheLock(std::filesystem::path folder) : folder_(std::move(folder)) {}
  int lock(int fd) override {
    if (!opened_) {
      opened_ = true;
      DiskPageStoreOptions plain;
      plain.clock = ticking_clock();
      DiskPageStore other(folder_, model_number(1), small_coding(), plain);
      removed_ = other.removed_temporaries();
    }
    return PageFileOps::lock(fd);
  }
  std::uint64_t removed() const { return removed_; }

 private:
  std::filesystem::path folder_;
  bool opened_ = false;
  std::uint64_t removed_ = 0;
};

}  // namespace

class StoreFaultTest : public QObject {
  Q_OBJECT

 private slots:
  // ENOSPC or EDQUOT at any step: DiskFull, with the file, the step and the
  // reason, and nothing left in the folder; the pages already there stay readable.
  void aFullDiskLeavesNothingBehind_data() {
    QTest::addColumn<int>("step");
    QTest::addColumn<int>("error");
    QTest::addColumn<QString>("message");
    using Step = FailingOps::Step;
    QTest::addRow("write") << int(Step::Write) << ENOSPC << "cannot write the page file";
    QTest::addRow("sync") << int(Step::Sync) << ENOSPC << "cannot flush the page file to disk";
    QTest::addRow("rename, quota")
        << int(Step::Rename) << EDQUOT << "cannot move the page file into place";
  }
  void aFullDiskLeavesNothingBehind() {
    QFETCH(int, step);
    QFETCH(int, error);
    QFETCH(QString, message);
    QTemporaryDir dir;
    FailingOps ops;
    DiskPageStore store(path_of(dir), model_number(1), small_coding(), failing(ops));
    const auto hashes = chain(2, 1);
    QCOMPARE(store.write(hashes[0], std::nullopt, 16, random_payload(store.coding(), 0)).status,
             WriteStatus::Written);

    ops.fail(FailingOps::Step(step), error, 1000);
    const WriteOutcome outcome =
        store.write(hashes[1], hashes[0], 16, random_payload(store.coding(), 1));
    QCOMPARE(outcome.status, WriteStatus::DiskFull);
    QCOMPARE(outcome.error, error);
    QVERIFY2(outcome.message.find(": " + message.toStdString() + ": " + std::strerror(error)) !=
                 std::string::npos,
             outcome.message.c_str());
    QVERIFY(outcome.message.starts_with((path_of(dir) / ".tmp-").string()));
    QCOMPARE(folder_names(path_of(dir)), std::vector<std::string>{hashes[0].hex() + ".page"});

    std::vector<std::byte> into(std::size_t(store.coding().page_bytes()));
    QCOMPARE(store.read(hashes[0], into).status, ReadStatus::Read);
  }

  void otherErrorsFailThePage() {
    QTemporaryDir dir;
    FailingOps ops;
    DiskPageStore store(path_of(dir), model_number(1), small_coding(), failing(ops));
    ops.fail(FailingOps::Step::Sync, EIO);
    const auto hash = chain(1, 3)[0];
    const WriteOutcome outcome =
        store.write(hash, std::nullopt, 16, random_payload(store.coding(), 0));
    QCOMPARE(outcome.status, WriteStatus::Failed);
    QCOMPARE(outcome.error, EIO);
    QVERIFY(outcome.message.ends_with(std::string(": cannot flush the page file to disk: ") +
                                      std::strerror(EIO)));
    QVERIFY(folder_names(path_of(dir)).empty());
    ops.fail(FailingOps::Step::None, 0);
    QCOMPARE(store.write(hash, std::nullopt, 16, random_payload(store.coding(), 0)).status,
             WriteStatus::Written);
  }

  // The real system calls failing: a file size limit (RLIMIT_FSIZE, with
  // SIGXFSZ ignored) makes write() fail with EFBIG in a child process. That
  // is not a full disk: the page fails alone, and nothing is left behind.
  void aFailingWriteSystemCallLeavesNothingBehind() {
    QTemporaryDir dir;
    const pid_t child = ::fork();
    QVERIFY(child >= 0);
    if (child == 0) {
      ::signal(SIGXFSZ, SIG_IGN);
      const rlimit limit{1000, 1000};
      if (::setrlimit(RLIMIT_FSIZE, &limit) != 0) ::_exit(10);
      DiskPageStoreOptions options;
      DiskPageStore store(path_of(dir), model_number(1), small_coding(), options);
      const auto hash = chain(1, 4)[0];
      const WriteOutcome outcome =
          store.write(hash, std::nullopt, 16, random_payload(store.coding(), 0));
      if (outcome.status != WriteStatus::Failed) ::_exit(11);
      if (outcome.error != EFBIG) ::_exit(12);
      if (!outcome.message.ends_with(std::string(": cannot write the page file: ") +
                                     std::strerror(EFBIG)))
        ::_exit(13);
      ::_exit(0);
    }
    int status = 0;
    QCOMPARE(::waitpid(child, &status, 0), child);
    QVERIFY(WIFEXITED(status));
    QCOMPARE(WEXITSTATUS(status), 0);
    QVERIFY(folder_names(path_of(dir)).empty());
  }

  // A writer killed in the middle of a page leaves only its temporary, never
  // a page file; the next store to open the folder removes the temporary.
  void aWriterKilledMidWriteLeavesNoPage() {
    QTemporaryDir dir;
    const auto hashes = chain(2, 5);
    DiskPageStoreOptions plain;
    plain.clock = ticking_clock();
    {
      DiskPageStore store(path_of(dir), model_number(1), small_coding(), plain);
      store.write(hashes[0], std::nullopt, 16, random_payload(store.coding(), 0));
    }
    int pipe_fds[2];
    QCOMPARE(::pipe(pipe_fds), 0);
    const pid_t child = ::fork();
    QVERIFY(child >= 0);
    if (child == 0) {
      ::close(pipe_fds[0]);
      StallingOps stalling(pipe_fds[1]);
      DiskPageStoreOptions options;
      options.file_ops = &stalling;
      DiskPageStore store(path_of(dir), model_number(1), small_coding(), options);
      store.write(hashes[1], hashes[0], 16, random_payload(store.coding(), 1));
      ::_exit(3);  // not reached: the write stalls until the parent kills it
    }
    ::close(pipe_fds[1]);
    char ready = 0;
    QCOMPARE(::read(pipe_fds[0], &ready, 1), ssize_t(1));
    ::close(pipe_fds[0]);
    QCOMPARE(::kill(child, SIGKILL), 0);
    int status = 0;
    QCOMPARE(::waitpid(child, &status, 0), child);
    QVERIFY(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);

    const auto names = folder_names(path_of(dir));
    QCOMPARE(names.size(), std::size_t(2));
    QCOMPARE(names[0].substr(0, 5 + 32), ".tmp-" + hashes[1].hex());
    QCOMPARE(names[1], hashes[0].hex() + ".page");

    DiskPageStore reopened(path_of(dir), model_number(1), small_coding(), plain);
    QCOMPARE(reopened.removed_temporaries(), std::uint64_t(1));
    QCOMPARE(folder_names(path_of(dir)), std::vector<std::string>{hashes[0].hex() + ".page"});
    std::vector<std::byte> into(std::size_t(reopened.coding().page_bytes()));
    QCOMPARE(reopened.read(hashes[0], into).status, ReadStatus::Read);
    QCOMPARE(reopened.read(hashes[1], into).status, ReadStatus::Missing);
  }

  // A temporary whose writer is alive (it holds the temporary's flock) is left alone.
  void aLiveWritersTemporaryIsKept() {
    QTemporaryDir dir;
    GateOps gate;
    DiskPageStoreOptions options;
    options.clock = ticking_clock();
    options.file_ops = &gate;
    DiskPageStore store(path_of(dir), model_number(1), small_coding(), options);
    const auto hash = chain(1, 8)[0];
    std::thread writer(
        [&] { store.write(hash, std::nullopt, 16, random_payload(store.coding(), 0)); });
    gate.wait_until_entered();
    DiskPageStoreOptions plain;
    plain.clock = ticking_clock();
    DiskPageStore second(path_of(dir), model_number(1), small_coding(), plain);
    QCOMPARE(second.removed_temporaries(), std::uint64_t(0));
    gate.release();
    writer.join();
    std::vector<std::byte> into(std::size_t(second.coding().page_bytes()));
    QCOMPARE(second.read(hash, into).status, ReadStatus::Read);
    QVERIFY(into == random_payload(second.coding(), 0));
  }

  // A store opening between a temporary's creation and its lock removes it
  // as a dead writer's; the write notices that its name is gone and writes
  // the page through a new temporary (it failed before, now and then, when
  // two processes shared a folder).
  void aTemporaryRemovedBeforeItsLockIsMadeAgain() {
    QTemporaryDir dir;
    OpenedBeforeTheLock racing(path_of(dir));
    DiskPageStoreOptions options;
    options.clock = ticking_clock();
    options.file_ops = &racing;
    DiskPageStore store(path_of(dir), model_number(1), small_coding(), options);
    const auto hash = chain(1, 9)[0];
    const WriteOutcome outcome =
        store.write(hash, std::nullopt, 16, random_payload(store.coding(), 0));
    QCOMPARE(racing.removed(), std::uint64_t(1));
    QVERIFY2(outcome.status == WriteStatus::Written, outcome.message.c_str());
    std::vector<std::byte> into(std::size_t(store.coding().page_bytes()));
    QCOMPARE(store.read(hash, into).status, ReadStatus::Read);
    QVERIFY(into == random_payload(store.coding(), 0));
    QCOMPARE(store.usage().pages, std::uint64_t(1));
  }
};

QUIRE_TEST(StoreFaultTest)
#include "test_store_faults.moc"
