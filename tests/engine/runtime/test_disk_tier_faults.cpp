// The disk tier under faults, end to end: page files truncated, bit-flipped,
// empty, from another model or another coding; a disk that fills up; a
// writer killed in the middle of a write; two processes writing one folder.
// Each ends with the right logits and the bad files gone.

#include <sys/wait.h>
#include <unistd.h>

#include <QTest>
#include <cerrno>
#include <csignal>
#include <fstream>
#include <map>

#include "disk_tier_test_support.h"
#include "quire/engine/disk_cache/disk_page_store.h"
#include "quire/engine/disk_cache/disk_page_writer.h"
#include "test_main.h"

using namespace quire;
using quire::test::TestModel;

namespace {

namespace fs = std::filesystem;

// Disk calls that fail as a full disk does.
class FullDisk : public engine::disk_cache::PageFileOps {
 public:
  int write_all(int, std::span<const std::byte>) override { return ENOSPC; }
};

// Disk calls whose writer dies half way through a page.
class DyingWriter : public engine::disk_cache::PageFileOps {
 public:
  int write_all(int fd, std::span<const std::byte> bytes) override {
    PageFileOps::write_all(fd, bytes.first(bytes.size() / 2));
    ::raise(SIGKILL);
    return EIO;
  }
};

void flip_byte(const fs::path& file, std::uint64_t offset) {
  std::fstream stream(file, std::ios::in | std::ios::out | std::ios::binary);
  stream.seekg(static_cast<std::streamoff>(offset));
  char byte = 0;
  stream.read(&byte, 1);
  byte = static_cast<char>(byte ^ 0x10);
  stream.seekp(static_cast<std::streamoff>(offset));
  stream.write(&byte, 1);
}

bool within_tolerance(const std::vector<float>& got, const std::vector<float>& expected) {
  return test::max_abs_difference(got, expected) <= 1e-4f * test::max_abs(expected);
}

// Runs `child` in a forked process that ends with _exit(0); returns its wait status.
template <typename Child>
int in_child(Child&& child) {
  const pid_t pid = ::fork();
  if (pid == 0) {
    child();
    ::_exit(0);
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  return status;
}

}  // namespace

class DiskTierFaultsTest : public QObject {
  Q_OBJECT

  std::unique_ptr<TestModel> model_;
  std::unique_ptr<TestModel> other_model_;

  std::shared_ptr<const engine::ModelDescription> model() { return model_->description(); }

  // What a tier for the model under `disk` names its pages by.
  std::pair<engine::disk_cache::ModelIdentity, engine::disk_cache::PageCoding> identity_and_coding(
      const engine::RuntimeOptions& options, const engine::DiskTierOptions& disk) {
    kernels::CpuBackend backend;
    engine::ModelRuntime runtime(model(), backend, options);
    const engine::DiskTier& tier = runtime.open_disk_tier(disk);
    return {tier.model(), tier.coding()};
  }

  // The first turn's nine page files in `root`, in chain order.
  std::vector<fs::path> archive_first_turn(const engine::DiskTierOptions& disk,
                                           const engine::RuntimeOptions& options) {
    test::compute_and_archive(model(), options, disk, test::first_turn());
    const fs::path folder = test::store_folder_of(model(), options, disk);
    std::vector<fs::path> files;
    const std::vector<cache::PageHash> hashes =
        cache::hash_full_pages(test::first_turn(), options.page_size);
    for (const cache::PageHash& hash : hashes)
      files.push_back(folder / (hash.hex() + ".page"));
    return files;
  }

 private slots:
  void initTestCase() {
    model_ = std::make_unique<TestModel>(test::small_llama_spec());
    engine::modelgen::RandomModelSpec other = test::small_llama_spec();
    other.seed = 6;  // the same shapes, other weights
    other_model_ = std::make_unique<TestModel>(other);
  }

  void aDamagedPageIsRemovedAndComputed_data() {
    QTest::addColumn<QString>("damage");
    for (const char* damage : {"truncated", "empty", "payload bit", "header bit", "checksum bit"})
      QTest::newRow(damage) << QString(damage);
  }

  void aDamagedPageIsRemovedAndComputed() {
    QFETCH(QString, damage);
    QTemporaryDir root;
    const engine::DiskTierOptions disk = test::disk_at(test::path_of(root));
    // FP16: with a coded cache the residual window reads the open page of
    // each prefill chunk unquantized, so a page computed alone, between
    // restored ones, differs from the fresh run's (test_residual_window).
    const engine::RuntimeOptions options = test::disk_test_options(cache::CacheFormat::FP16);
    const std::vector<fs::path> files = archive_first_turn(disk, options);
    const fs::path damaged = files[4];
    const std::uint64_t size = fs::file_size(damaged);
    if (damage == "truncated") fs::resize_file(damaged, size - 100);
    if (damage == "empty") fs::resize_file(damaged, 0);
    if (damage == "payload bit") flip_byte(damaged, size / 2);
    if (damage == "header bit") flip_byte(damaged, 70);
    if (damage == "checksum bit") flip_byte(damaged, size - 1);

    const test::ResumeRun resumed = test::resume(model(), options, disk, test::second_turn());
    QCOMPARE(resumed.stats.disk_restored_tokens, std::int64_t(8 * 16));
    QCOMPARE(resumed.disk.failed_restores, std::uint64_t(1));
    QCOMPARE(resumed.disk.rejected_files, std::uint64_t(1));
    QVERIFY(!fs::exists(damaged));
    const std::vector<float> fresh =
        test::last_prefill_logits(model(), options, test::second_turn());
    QVERIFY(within_tolerance(resumed.logits, fresh));
  }

  void pagesOfAnotherModelOrCodingAreRefused_data() {
    QTest::addColumn<bool>("otherModel");
    QTest::newRow("another model") << true;
    QTest::newRow("another coding") << false;
  }

  void pagesOfAnotherModelOrCodingAreRefused() {
    // Files copied into the folder where this model's, or this coding's,
    // pages are looked for, under the names their hashes give.
    QFETCH(bool, otherModel);
    QTemporaryDir root;
    const engine::DiskTierOptions disk = test::disk_at(test::path_of(root));
    const engine::RuntimeOptions q6 = test::disk_test_options(cache::CacheFormat::Q6);
    const std::vector<fs::path> files = archive_first_turn(disk, q6);
    const auto target = otherModel ? other_model_->description() : model();
    const engine::RuntimeOptions options =
        otherModel ? q6 : test::disk_test_options(cache::CacheFormat::Q8);
    const fs::path folder = test::store_folder_of(target, options, disk);
    QVERIFY(folder != files.front().parent_path());
    for (const fs::path& file : files)
      fs::copy_file(file, folder / file.filename());

    const test::ResumeRun resumed = test::resume(target, options, disk, test::second_turn());
    QCOMPARE(resumed.stats.disk_restored_tokens, std::int64_t(0));
    QCOMPARE(resumed.disk.rejected_files, std::uint64_t(9));
    QVERIFY(test::page_files(folder).empty());
    const std::vector<float> fresh =
        test::last_prefill_logits(target, options, test::second_turn());
    QVERIFY(within_tolerance(resumed.logits, fresh));
    // The originals still serve their own model and coding.
    QCOMPARE(test::page_files(files.front().parent_path()).size(), std::size_t(9));
  }

  void aFullDiskStopsWritingWithOneNotice() {
    QTemporaryDir root;
    FullDisk full;
    engine::DiskTierOptions disk = test::disk_at(test::path_of(root));
    disk.file_ops = &full;
    engine::RuntimeOptions options = test::disk_test_options(cache::CacheFormat::FP16);
    options.cache_tokens = 192;  // twelve pages: the prompts below evict
    const std::vector<cache::TokenId> last = test::random_tokens(150, 512, 8);
    std::vector<float> logits;
    {
      kernels::CpuBackend backend;
      engine::ModelRuntime runtime(model(), backend, options);
      runtime.open_disk_tier(disk);
      for (std::uint32_t seed = 1; seed <= 3; ++seed)
        runtime.prefill(test::random_tokens(150, 512, seed), false);
      logits = runtime.prefill(last, false).back();
      runtime.disk_tier()->flush();
      const engine::DiskTierStatus status = runtime.disk_tier()->status();
      QVERIFY(status.writer.disk_full);
      QCOMPARE(status.writer.notice, std::string(engine::disk_cache::kDiskFullNotice));
      QCOMPARE(status.writer.written, std::uint64_t(0));
      QVERIFY(status.writer.dropped_disk_full > 0);
      const engine::ArchiveResult archived = runtime.archive_cache();
      QCOMPARE(archived.written, std::uint64_t(0));
      QVERIFY(archived.left_out > 0);
      QVERIFY(!archived.error.empty());
      const fs::path folder = runtime.disk_tier()->folder();
      QVERIFY(test::page_files(folder).empty());
      QVERIFY(test::temporaries(folder).empty());
    }
    QCOMPARE(logits, test::last_prefill_logits(model(), options, last));
  }

  void aWriterKilledMidWriteLeavesNothingBehind() {
    QTemporaryDir root;
    const engine::DiskTierOptions disk = test::disk_at(test::path_of(root));
    // FP16, as aDamagedPageIsRemovedAndComputed.
    const engine::RuntimeOptions options = test::disk_test_options(cache::CacheFormat::FP16);
    const std::vector<fs::path> files = archive_first_turn(disk, options);
    const fs::path folder = files.front().parent_path();
    // Page 3 is being written again when its writer dies.
    std::vector<std::byte> payload;
    const auto names = identity_and_coding(options, disk);
    const engine::disk_cache::ModelIdentity& identity = names.first;
    const engine::disk_cache::PageCoding& coding = names.second;
    const cache::PageHash hash = cache::hash_full_pages(test::first_turn(), options.page_size)[3];
    payload.resize(static_cast<std::size_t>(coding.page_bytes()));
    {
      engine::disk_cache::DiskPageStore store(folder, identity, coding);
      QCOMPARE(store.read(hash, payload).status, engine::disk_cache::ReadStatus::Read);
    }
    fs::remove(files[3]);
    const int status = in_child([&] {
      DyingWriter dying;
      engine::disk_cache::DiskPageStoreOptions store_options;
      store_options.file_ops = &dying;
      engine::disk_cache::DiskPageStore store(folder, identity, coding, store_options);
      store.write(hash, cache::hash_full_pages(test::first_turn(), options.page_size)[2], 16,
                  payload);
    });
    QVERIFY(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
    QCOMPARE(test::temporaries(folder).size(), std::size_t(1));
    QVERIFY(!fs::exists(files[3]));

    const test::ResumeRun resumed = test::resume(model(), options, disk, test::second_turn());
    QVERIFY(test::temporaries(folder).empty());
    QCOMPARE(resumed.stats.disk_restored_tokens, std::int64_t(8 * 16));
    const std::vector<float> fresh =
        test::last_prefill_logits(model(), options, test::second_turn());
    QVERIFY(within_tolerance(resumed.logits, fresh));
  }

  void twoProcessesWritingOneFolderLeaveValidPages() {
    QTemporaryDir source_root;
    QTemporaryDir root;
    const engine::RuntimeOptions options = test::disk_test_options(cache::CacheFormat::Q8);
    const engine::DiskTierOptions source = test::disk_at(test::path_of(source_root));
    const engine::DiskTierOptions disk = test::disk_at(test::path_of(root));
    const std::vector<fs::path> files = archive_first_turn(source, options);
    // The pages' bytes, read once, then written by two processes at once,
    // each many times over, removing them between rounds.
    const fs::path folder = test::store_folder_of(model(), options, disk);
    const auto names = identity_and_coding(options, disk);
    const engine::disk_cache::ModelIdentity& identity = names.first;
    const engine::disk_cache::PageCoding& coding = names.second;
    const std::vector<cache::PageHash> hashes =
        cache::hash_full_pages(test::first_turn(), options.page_size);
    std::vector<std::vector<std::byte>> payloads(hashes.size());
    {
      engine::disk_cache::DiskPageStore store(files.front().parent_path(), identity, coding);
      for (std::size_t i = 0; i < hashes.size(); ++i) {
        payloads[i].resize(static_cast<std::size_t>(coding.page_bytes()));
        QCOMPARE(store.read(hashes[i], payloads[i]).status, engine::disk_cache::ReadStatus::Read);
      }
    }
    const auto writer = [&] {
      engine::disk_cache::DiskPageStore store(folder, identity, coding);
      for (int round = 0; round < 20; ++round) {
        for (std::size_t i = 0; i < hashes.size(); ++i) {
          std::optional<cache::PageHash> parent;
          if (i > 0) parent = hashes[i - 1];
          const engine::disk_cache::WriteOutcome outcome =
              store.write(hashes[i], parent, 16, payloads[i]);
          if (outcome.status != engine::disk_cache::WriteStatus::Written &&
              outcome.status != engine::disk_cache::WriteStatus::AlreadyStored)
            ::_exit(2);
        }
        if (round + 1 < 20 && round % 3 == 0) store.clear();
      }
    };
    const pid_t first = ::fork();
    if (first == 0) {
      writer();
      ::_exit(0);
    }
    const int second = in_child(writer);
    int first_status = 0;
    ::waitpid(first, &first_status, 0);
    QVERIFY(WIFEXITED(first_status) && WEXITSTATUS(first_status) == 0);
    QVERIFY(WIFEXITED(second) && WEXITSTATUS(second) == 0);
    QCOMPARE(test::page_files(folder).size(), std::size_t(9));
    QVERIFY(test::temporaries(folder).empty());

    const test::ResumeRun resumed = test::resume(model(), options, disk, test::second_turn());
    QCOMPARE(resumed.stats.disk_restored_tokens, std::int64_t(144));
    QCOMPARE(resumed.disk.rejected_files, std::uint64_t(0));
    QCOMPARE(resumed.logits,
             test::warm_logits(model(), options, test::first_turn(), test::second_turn()));
  }

  void otherModelsMakeRoomWithinTheLimit() {
    // Three models' folders under one root; the oldest go first until the
    // others take at most the budget.
    QTemporaryDir root;
    const fs::path base = test::path_of(root);
    const auto make = [&](char digit, int files, int age_hours) {
      const fs::path folder = base / std::string(32, digit) / "q6-16-0000000000000000";
      fs::create_directories(folder);
      for (int i = 0; i < files; ++i) {
        const fs::path file = folder / (std::to_string(i) + ".page");
        std::ofstream(file) << std::string(1000, 'x');
        fs::last_write_time(file, fs::file_time_type::clock::now() - std::chrono::hours(age_hours));
      }
    };
    make('1', 3, 30);  // the oldest: removed first
    make('2', 2, 20);
    make('3', 4, 10);
    engine::disk_cache::ModelIdentity keep;
    keep.bytes.fill(0x33);  // "333…": the model in use, never trimmed
    QCOMPARE(engine::trim_other_models(base, keep, 2500), std::uint64_t(2000));
    QVERIFY(!fs::exists(base / std::string(32, '1')));
    QVERIFY(fs::exists(base / std::string(32, '2')));
    QVERIFY(fs::exists(base / std::string(32, '3')));
    QCOMPARE(engine::trim_other_models(base, keep, 0), std::uint64_t(0));
    QVERIFY(!fs::exists(base / std::string(32, '2')));
    QCOMPARE(test::page_files(base / std::string(32, '3') / "q6-16-0000000000000000").size(),
             std::size_t(4));
  }
};

QUIRE_TEST(DiskTierFaultsTest)
#include "test_disk_tier_faults.moc"
