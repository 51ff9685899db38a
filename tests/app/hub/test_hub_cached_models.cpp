// The models already on disk (list_cached_models, list_model_folders) and
// HubCache::remove_snapshot: sizes with shared blobs counted once, refs,
// subfolder models, links out of the cache neither counted nor followed, and
// nothing deleted that another snapshot, a running download or anything
// outside the cache still has.

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <QTemporaryDir>
#include <QTest>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>

#include "quire/hub/cached_models.h"
#include "quire/hub/hub_cache.h"
#include "quire/hub/hub_error.h"
#include "test_main.h"

using namespace quire::hub;

namespace cached_models_test {

namespace fs = std::filesystem;

const std::string kRepo = "org/model";
const std::string kMain(40, 'a');      // main, other
const std::string kQuant(40, 'b');     // 4.0bpw, refs/pr/1
const std::string kLoose(40, 'c');     // no ref, no config.json: not a model
const std::string kDetached(40, 'd');  // no ref
const std::string kTiny(40, 'e');      // another/tiny: main, v1.0

std::string etag(char digit) {
  return std::string(64, digit);
}

void write_bytes(const fs::path& path, std::size_t size) {
  fs::create_directories(path.parent_path());
  std::ofstream(path, std::ios::binary) << std::string(size, 'x');
}

// Links `path` of `commit` to the blob named by `digit`, written with `size`
// bytes the first time.
void put(const HubCache& cache, const std::string& repo, const std::string& commit,
         const std::string& path, char digit, std::size_t size) {
  const fs::path blob = cache.blob_path(repo, etag(digit));
  if (!fs::exists(blob)) write_bytes(blob, size);
  cache.place_in_snapshot(repo, commit, path, etag(digit));
}

// org/model as the tests below know it; sizes in bytes, blobs by digit:
//   main      config.json 1:100, model.safetensors 2:5000,
//             nested/tokenizer.model 3:300, copy.safetensors 2 again
//   4.0bpw    config.json 4:200, model.safetensors 2, extra.safetensors 5:7000,
//             exl3/README.md 6:10, exl3/4.0bpw/{config.json 7:40, w.safetensors 8:900},
//             6.0bpw/{config.json 9:50, w.safetensors 2}
//   kLoose    README.md 0:60
//   kDetached config.json 1
// and another/tiny at kTiny (main, v1.0): config.json f:30.
void build_sample(const HubCache& cache) {
  put(cache, kRepo, kMain, "config.json", '1', 100);
  put(cache, kRepo, kMain, "model.safetensors", '2', 5000);
  put(cache, kRepo, kMain, "nested/tokenizer.model", '3', 300);
  put(cache, kRepo, kMain, "copy.safetensors", '2', 5000);
  put(cache, kRepo, kQuant, "config.json", '4', 200);
  put(cache, kRepo, kQuant, "model.safetensors", '2', 5000);
  put(cache, kRepo, kQuant, "extra.safetensors", '5', 7000);
  put(cache, kRepo, kQuant, "exl3/README.md", '6', 10);
  put(cache, kRepo, kQuant, "exl3/4.0bpw/config.json", '7', 40);
  put(cache, kRepo, kQuant, "exl3/4.0bpw/w.safetensors", '8', 900);
  put(cache, kRepo, kQuant, "6.0bpw/config.json", '9', 50);
  put(cache, kRepo, kQuant, "6.0bpw/w.safetensors", '2', 5000);
  put(cache, kRepo, kLoose, "README.md", '0', 60);
  put(cache, kRepo, kDetached, "config.json", '1', 100);
  cache.write_ref(kRepo, "main", kMain);
  cache.write_ref(kRepo, "other", kMain);
  cache.write_ref(kRepo, "4.0bpw", kQuant);
  cache.write_ref(kRepo, "refs/pr/1", kQuant);
  put(cache, "another/tiny", kTiny, "config.json", 'f', 30);
  cache.write_ref("another/tiny", "main", kTiny);
  cache.write_ref("another/tiny", "v1.0", kTiny);
}

// "repo@refs|commit/subfolder bytes" for each model, to compare lists at a glance.
QStringList summary(const std::vector<CachedModel>& models) {
  QStringList lines;
  for (const CachedModel& model : models) {
    std::string refs;
    for (const std::string& ref : model.refs)
      refs += (refs.empty() ? "" : ",") + ref;
    lines.append(QString::fromStdString(model.repo + "@" + (refs.empty() ? model.commit : refs) +
                                        "/" + model.subfolder + " " + std::to_string(model.bytes)));
  }
  return lines;
}

bool exists_here(const fs::path& path) {
  std::error_code error;
  return fs::exists(fs::symlink_status(path, error));
}

// Holds a download's lock as Quire's downloads and huggingface_hub do.
class HeldDownloadLock {
 public:
  explicit HeldDownloadLock(const fs::path& path) {
    fs::create_directories(path.parent_path());
    fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0664);
    locked_ = fd_ >= 0 && ::flock(fd_, LOCK_EX | LOCK_NB) == 0;
  }
  HeldDownloadLock(const HeldDownloadLock&) = delete;
  HeldDownloadLock& operator=(const HeldDownloadLock&) = delete;
  ~HeldDownloadLock() {
    if (fd_ >= 0) ::close(fd_);
  }
  bool locked() const { return locked_; }

 private:
  int fd_ = -1;
  bool locked_ = false;
};

}  // namespace cached_models_test

using namespace cached_models_test;

class HubCachedModelsTest : public QObject {
  Q_OBJECT

 private slots:
  void listsSnapshotsAndTheirSubfolderModels() {
    QTemporaryDir root;
    const HubCache cache(root.path().toStdString());
    build_sample(cache);
    // Not models of the cache: a dataset, an old single-name model, a stray file.
    write_bytes(
        root.path().toStdString() + "/datasets--org--data/snapshots/" + kMain + "/config.json", 10);
    write_bytes(root.path().toStdString() + "/models--gpt2/snapshots/" + kMain + "/config.json",
                10);
    write_bytes(root.path().toStdString() + "/version.txt", 1);
    // The newest file of main is its tokenizer.
    const auto later = fs::file_time_type::clock::now() + std::chrono::hours(24);
    fs::last_write_time(cache.blob_path(kRepo, etag('3')), later);

    const std::vector<CachedModel> models = list_cached_models(cache.root());
    QCOMPARE(summary(models), (QStringList{
                                  "another/tiny@main,v1.0/ 30",
                                  "org/model@4.0bpw,refs/pr/1/ 12210",
                                  "org/model@4.0bpw,refs/pr/1/6.0bpw 5050",
                                  "org/model@4.0bpw,refs/pr/1/exl3/4.0bpw 940",
                                  "org/model@main,other/ 5400",
                                  "org/model@" + QString::fromStdString(kDetached) + "/ 100",
                              }));
    const CachedModel& quant = models[2];
    QCOMPARE(quant.repo, kRepo);
    QCOMPARE(quant.commit, kQuant);
    QCOMPARE(quant.subfolder, std::string("6.0bpw"));
    QCOMPARE(quant.folder, cache.snapshot_dir(kRepo, kQuant) / "6.0bpw");
    const CachedModel& main = models[4];
    QCOMPARE(main.folder, cache.snapshot_dir(kRepo, kMain));
    QCOMPARE(main.refs, (std::vector<std::string>{"main", "other"}));
    QCOMPARE(main.modified, fs::last_write_time(cache.blob_path(kRepo, etag('3'))));
    QVERIFY(models[1].modified < main.modified);

    QVERIFY(list_cached_models(root.path().toStdString() + "/absent").empty());
  }

  void linksOutOfTheCacheAreNeitherFollowedNorCounted() {
    QTemporaryDir root;
    QTemporaryDir outside;
    const HubCache cache(root.path().toStdString());
    const fs::path away = outside.path().toStdString();
    write_bytes(away / "big.bin", 4000);
    write_bytes(away / "model" / "config.json", 20);
    put(cache, "org/escape", kMain, "config.json", '1', 100);
    cache.write_ref("org/escape", "main", kMain);
    const fs::path snapshot = cache.snapshot_dir("org/escape", kMain);
    fs::create_symlink(away / "big.bin", snapshot / "big.bin");
    fs::path climb;  // from the snapshot up to "/"
    for ([[maybe_unused]] const fs::path& part : snapshot.relative_path())
      climb /= "..";
    fs::create_symlink(climb / away.relative_path() / "big.bin", snapshot / "relative.bin");
    QCOMPARE(fs::file_size(snapshot / "relative.bin"), std::uintmax_t{4000});
    fs::create_directory_symlink(away / "model", snapshot / "linked-model");
    // A snapshot whose config.json leads out of the cache is no model.
    fs::create_directories(cache.snapshot_dir("org/fake", kMain));
    fs::create_symlink(away / "model" / "config.json",
                       cache.snapshot_dir("org/fake", kMain) / "config.json");

    QCOMPARE(summary(list_cached_models(cache.root())), QStringList{"org/escape@main/ 100"});
  }

  void listsModelFoldersUpToTwoLevelsDown() {
    QTemporaryDir root_dir;
    QTemporaryDir outside;
    const fs::path root = root_dir.path().toStdString();
    write_bytes(root / "llama" / "config.json", 10);
    write_bytes(root / "llama" / "model.safetensors", 1000);
    fs::create_symlink("model.safetensors", root / "llama" / "same.safetensors");
    write_bytes(root / "llama" / "draft" / "config.json", 20);
    write_bytes(root / "llama" / "draft" / "w.safetensors", 300);
    write_bytes(root / "exl3" / "q4" / "config.json", 5);
    write_bytes(root / "exl3" / "q4" / "w.safetensors", 50);
    write_bytes(root / "deep" / "a" / "b" / "config.json", 1);  // three levels: not looked for
    write_bytes(root / ".git" / "config.json", 1);              // hidden
    write_bytes(fs::path(outside.path().toStdString()) / "ext" / "config.json", 7);
    write_bytes(fs::path(outside.path().toStdString()) / "ext" / "w.bin", 70);
    fs::create_directory_symlink(fs::path(outside.path().toStdString()) / "ext", root / "linked");

    const std::vector<CachedModel> models = list_model_folders(root);
    QCOMPARE(summary(models),
             (QStringList{"@/exl3/q4 55", "@/linked 77", "@/llama 1010", "@/llama/draft 320"}));
    QCOMPARE(models[2].folder, root / "llama");
    QVERIFY(models[2].commit.empty() && models[2].refs.empty());

    // A root that is itself a model holds the files no listed model does.
    write_bytes(root / "config.json", 3);
    QCOMPARE(summary(list_model_folders(root)).first(), QStringLiteral("@/ 5"));
    QVERIFY(list_model_folders(root / "absent").empty());
  }

  void removesSnapshotsKeepingSharedBlobs() {
    QTemporaryDir root;
    const HubCache cache(root.path().toStdString());
    build_sample(cache);
    const fs::path repo = cache.repo_dir(kRepo);
    write_bytes(repo / "blobs" / etag('e'), 11);  // no snapshot links to it
    write_bytes(root.path().toStdString() + "/.locks/models--org--model/" + etag('2') + ".lock", 0);

    // 4.0bpw shares model.safetensors (blob 2) with main.
    const SnapshotRemoval quant = cache.remove_snapshot(kRepo, kQuant);
    QCOMPARE(quant.blobs_removed, 6);
    QCOMPARE(quant.blobs_kept, 1);
    QCOMPARE(quant.freed_bytes, std::int64_t{200 + 7000 + 10 + 40 + 900 + 50});
    QVERIFY(!exists_here(cache.snapshot_dir(kRepo, kQuant)));
    QVERIFY(exists_here(cache.blob_path(kRepo, etag('2'))));
    QVERIFY(!exists_here(cache.blob_path(kRepo, etag('5'))));
    QVERIFY(!exists_here(repo / "refs" / "4.0bpw"));
    QVERIFY(!exists_here(repo / "refs" / "refs"));  // refs/pr/1 and its empty folders
    QCOMPARE(cache.read_ref(kRepo, "main").value_or(""), kMain);
    QCOMPARE(summary(list_cached_models(cache.root())),
             (QStringList{"another/tiny@main,v1.0/ 30", "org/model@main,other/ 5400",
                          "org/model@" + QString::fromStdString(kDetached) + "/ 100"}));

    // main: its config.json is still the detached snapshot's.
    const SnapshotRemoval main = cache.remove_snapshot(kRepo, kMain);
    QCOMPARE(main.blobs_removed, 2);
    QCOMPARE(main.blobs_kept, 1);
    QCOMPARE(main.freed_bytes, std::int64_t{5000 + 300});
    QVERIFY(!cache.read_ref(kRepo, "main"));
    QVERIFY(!exists_here(repo / "refs" / "other"));
    QVERIFY(fs::is_directory(repo / "refs"));  // kept for the snapshots left

    const SnapshotRemoval detached = cache.remove_snapshot(kRepo, kDetached);
    QCOMPARE(detached.blobs_removed, 1);
    QCOMPARE(detached.freed_bytes, std::int64_t{100});
    QVERIFY(exists_here(repo));

    // The last snapshot: the repository's folders go, with the blob nothing named.
    const SnapshotRemoval last = cache.remove_snapshot(kRepo, kLoose);
    QCOMPARE(last.blobs_removed, 2);
    QCOMPARE(last.blobs_kept, 0);
    QCOMPARE(last.freed_bytes, std::int64_t{60 + 11});
    QVERIFY(!exists_here(repo));
    QVERIFY(!exists_here(root.path().toStdString() + "/.locks/models--org--model"));
    QCOMPARE(summary(list_cached_models(cache.root())), QStringList{"another/tiny@main,v1.0/ 30"});
  }

  void leavesPartialsThatADownloadHolds() {
    QTemporaryDir root;
    const HubCache cache(root.path().toStdString());
    const std::string repo = "org/part";
    put(cache, repo, kMain, "config.json", '1', 100);
    put(cache, repo, kMain, "w.safetensors", '2', 2000);
    put(cache, repo, kQuant, "config.json", '3', 300);
    const fs::path blobs = cache.repo_dir(repo) / "blobs";
    write_bytes(blobs / (etag('2') + ".incomplete"), 123);
    write_bytes(blobs / (etag('2') + ".0123abcd.incomplete"), 45);
    write_bytes(blobs / (etag('1') + ".incomplete"), 77);
    const HeldDownloadLock lock(cache.lock_path(repo, etag('1')));
    QVERIFY(lock.locked());

    const SnapshotRemoval main = cache.remove_snapshot(repo, kMain);
    QCOMPARE(main.blobs_removed, 2);
    QCOMPARE(main.freed_bytes, std::int64_t{100 + 2000 + 123 + 45});
    QVERIFY(!exists_here(blobs / (etag('2') + ".incomplete")));
    QVERIFY(!exists_here(blobs / (etag('2') + ".0123abcd.incomplete")));
    QVERIFY(exists_here(blobs / (etag('1') + ".incomplete")));

    // The last snapshot goes, but the folder stays while the download runs.
    const SnapshotRemoval last = cache.remove_snapshot(repo, kQuant);
    QCOMPARE(last.blobs_removed, 1);
    QCOMPARE(last.freed_bytes, std::int64_t{300});
    QVERIFY(exists_here(blobs / (etag('1') + ".incomplete")));
    QVERIFY(fs::is_empty(cache.repo_dir(repo) / "snapshots"));
  }

  void countsCopiesAsFreed() {
    QTemporaryDir root;
    const HubCache cache(root.path().toStdString(), /*links=*/false);
    put(cache, "org/copied", kMain, "config.json", '1', 100);
    put(cache, "org/copied", kMain, "w.bin", '2', 1000);
    QCOMPARE(summary(list_cached_models(cache.root())),
             QStringList{"org/copied@" + QString::fromStdString(kMain) + "/ 1100"});
    const SnapshotRemoval removal = cache.remove_snapshot("org/copied", kMain);
    // Neither the copies nor the blobs are linked: the blobs go with the folder.
    QCOMPARE(removal.blobs_removed, 2);
    QCOMPARE(removal.freed_bytes, std::int64_t{2 * 1100});
    QVERIFY(!exists_here(cache.repo_dir("org/copied")));

    // huggingface_hub's degraded mode: copies and no blobs/ at all.
    write_bytes(cache.snapshot_dir("org/plain", kMain) / "config.json", 30);
    write_bytes(cache.snapshot_dir("org/plain", kMain) / "w.bin", 300);
    const SnapshotRemoval plain = cache.remove_snapshot("org/plain", kMain);
    QCOMPARE(plain.blobs_removed, 0);
    QCOMPARE(plain.freed_bytes, std::int64_t{330});
    QVERIFY(!exists_here(cache.repo_dir("org/plain")));
  }

  void refusesBadNamesBeforeTouchingTheDisk_data() {
    QTest::addColumn<QString>("repo");
    QTest::addColumn<QString>("commit");
    QTest::newRow("repo climbing") << "../model" << QString::fromStdString(kMain);
    QTest::newRow("repo in three parts") << "a/b/c" << QString::fromStdString(kMain);
    QTest::newRow("repo without org") << "model" << QString::fromStdString(kMain);
    QTest::newRow("a ref, not a commit") << "org/model"
                                         << "main";
    QTest::newRow("commit climbing") << "org/model"
                                     << "../../../../etc";
    QTest::newRow("short commit") << "org/model"
                                  << "aaaaaaa";
  }
  void refusesBadNamesBeforeTouchingTheDisk() {
    QFETCH(QString, repo);
    QFETCH(QString, commit);
    QTemporaryDir root;
    const HubCache cache(root.path().toStdString());
    build_sample(cache);
    QVERIFY_THROWS_EXCEPTION(HubProtocolError,
                             cache.remove_snapshot(repo.toStdString(), commit.toStdString()));
    QCOMPARE(list_cached_models(cache.root()).size(), std::size_t{6});
  }

  void saysWhenTheSnapshotIsNotThere() {
    QTemporaryDir root;
    const HubCache cache(root.path().toStdString());
    build_sample(cache);
    try {
      cache.remove_snapshot(kRepo, std::string(40, '9'));
      QFAIL("no error");
    } catch (const HubProtocolError&) {
      QFAIL("a name error");
    } catch (const HubError& error) {
      QCOMPARE(QString::fromUtf8(error.what()),
               QStringLiteral("org/model has no snapshot %1 in the cache %2.")
                   .arg(QString(40, QLatin1Char('9')), root.path()));
    }
  }

  void deletesNothingOutsideTheCache() {
    QTemporaryDir root;
    QTemporaryDir outside;
    const HubCache cache(root.path().toStdString());
    const fs::path away = outside.path().toStdString();
    write_bytes(away / "victim.bin", 4000);
    write_bytes(away / "folder" / "kept.bin", 10);

    // Links in the snapshot: the links go, what they lead to stays.
    put(cache, "org/escape", kMain, "config.json", '1', 100);
    const fs::path snapshot = cache.snapshot_dir("org/escape", kMain);
    fs::create_symlink(away / "victim.bin", snapshot / "victim.bin");
    fs::create_directory_symlink(away / "folder", snapshot / "folder");
    const SnapshotRemoval removal = cache.remove_snapshot("org/escape", kMain);
    QCOMPARE(removal.blobs_removed, 1);
    QCOMPARE(removal.freed_bytes, std::int64_t{100});
    QCOMPARE(fs::file_size(away / "victim.bin"), std::uintmax_t{4000});
    QVERIFY(exists_here(away / "folder" / "kept.bin"));

    // Folders of the cache that are links out of it are refused whole.
    write_bytes(away / "repo" / "snapshots" / kMain / "config.json", 5);
    fs::create_directory_symlink(away / "repo", cache.repo_dir("org/linked"));
    QVERIFY_THROWS_EXCEPTION(HubError, cache.remove_snapshot("org/linked", kMain));
    QVERIFY(exists_here(away / "repo" / "snapshots" / kMain / "config.json"));

    put(cache, "org/blobs", kMain, "config.json", '1', 100);
    fs::rename(cache.repo_dir("org/blobs") / "blobs", away / "blobs");
    fs::create_directory_symlink(away / "blobs", cache.repo_dir("org/blobs") / "blobs");
    QVERIFY_THROWS_EXCEPTION(HubError, cache.remove_snapshot("org/blobs", kMain));
    QVERIFY(exists_here(away / "blobs" / etag('1')));
    QVERIFY(exists_here(cache.snapshot_dir("org/blobs", kMain)));

    write_bytes(away / "snapshot" / "config.json", 5);
    fs::create_directories(cache.repo_dir("org/snap") / "snapshots");
    fs::create_directory_symlink(away / "snapshot", cache.snapshot_dir("org/snap", kMain));
    QVERIFY_THROWS_EXCEPTION(HubError, cache.remove_snapshot("org/snap", kMain));
    QVERIFY(exists_here(away / "snapshot" / "config.json"));
  }
};

QUIRE_TEST(HubCachedModelsTest)
#include "test_hub_cached_models.moc"
