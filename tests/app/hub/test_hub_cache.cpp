// The Hugging Face cache layout as HubCache writes and reads it, and the
// names it refuses so that nothing is written outside the cache.

#include <QDir>
#include <QFile>
#include <QTemporaryDir>
#include <QTest>
#include <fstream>

#include "quire/hub/hub_cache.h"
#include "quire/hub/hub_error.h"
#include "quire/hub/hub_reference.h"
#include "test_main.h"

using namespace quire::hub;
namespace fs = std::filesystem;

namespace {

const std::string kCommit(40, 'a');
const std::string kEtag(64, 'b');

void write_blob(const HubCache& cache, const std::string& etag, const std::string& content) {
  const fs::path blob = cache.blob_path("org/model", etag);
  fs::create_directories(blob.parent_path());
  std::ofstream(blob, std::ios::binary) << content;
}

std::string contents_of(const fs::path& path) {
  QFile file(QString::fromStdString(path.string()));
  if (!file.open(QIODevice::ReadOnly)) return "(unreadable)";
  return file.readAll().toStdString();
}

}  // namespace

class HubCacheTest : public QObject {
  Q_OBJECT

 private slots:
  void namesFoldersAsTheHubDocuments() {
    HubCache cache("/cache");
    QCOMPARE(HubCache::repo_folder_name("TheBloke/Llama-2-7B-GPTQ"),
             std::string("models--TheBloke--Llama-2-7B-GPTQ"));
    QCOMPARE(cache.blob_path("org/m", kEtag), fs::path("/cache/models--org--m/blobs/" + kEtag));
    QCOMPARE(cache.incomplete_path("org/m", kEtag),
             fs::path("/cache/models--org--m/blobs/" + kEtag + ".incomplete"));
    QCOMPARE(cache.lock_path("org/m", kEtag),
             fs::path("/cache/.locks/models--org--m/" + kEtag + ".lock"));
    QCOMPARE(cache.snapshot_file("org/m", kCommit, "a/b.json"),
             fs::path("/cache/models--org--m/snapshots/" + kCommit + "/a/b.json"));
  }

  void refusesBadNames_data() {
    QTest::addColumn<QString>("repo");
    QTest::addColumn<QString>("path");
    QTest::newRow("parent in path") << "org/m"
                                    << "../evil.txt";
    QTest::newRow("parent inside path") << "org/m"
                                        << "a/../../evil.txt";
    QTest::newRow("absolute path") << "org/m"
                                   << "/etc/passwd";
    QTest::newRow("dot segment") << "org/m"
                                 << "./x";
    QTest::newRow("empty segment") << "org/m"
                                   << "a//b";
    QTest::newRow("backslash") << "org/m"
                               << "..\\evil";
    QTest::newRow("drive letter") << "org/m"
                                  << "C:evil";
    QTest::newRow("newline") << "org/m"
                             << "a\nb";
    QTest::newRow("repo without org") << "model"
                                      << "x";
    QTest::newRow("repo climbing") << "../m"
                                   << "x";
    QTest::newRow("repo with three parts") << "a/b/c"
                                           << "x";
    QTest::newRow("repo with double dash") << "a--b/c"
                                           << "x";
  }
  void refusesBadNames() {
    QFETCH(QString, repo);
    QFETCH(QString, path);
    HubCache cache("/cache");
    QVERIFY_THROWS_EXCEPTION(HubProtocolError,
                             cache.snapshot_file(repo.toStdString(), kCommit, path.toStdString()));
  }

  void refusesBadHashes() {
    HubCache cache("/cache");
    QVERIFY_THROWS_EXCEPTION(HubProtocolError, cache.blob_path("org/m", "../../x"));
    QVERIFY_THROWS_EXCEPTION(HubProtocolError, cache.blob_path("org/m", std::string(64, 'G')));
    QVERIFY_THROWS_EXCEPTION(HubProtocolError, cache.snapshot_dir("org/m", "main"));
    QVERIFY(is_valid_etag(std::string(40, '0')));
    QVERIFY(!is_valid_etag(std::string(41, '0')));
  }

  void linksSnapshotFilesRelativelyToBlobs() {
    QTemporaryDir root;
    HubCache cache(root.path().toStdString());
    write_blob(cache, kEtag, "weights");
    QCOMPARE(cache.place_in_snapshot("org/model", kCommit, "model.safetensors", kEtag),
             Placement::Linked);
    QCOMPARE(cache.place_in_snapshot("org/model", kCommit, "sub/dir/w.bin", kEtag),
             Placement::Linked);
    const fs::path top = cache.snapshot_file("org/model", kCommit, "model.safetensors");
    const fs::path nested = cache.snapshot_file("org/model", kCommit, "sub/dir/w.bin");
    QCOMPARE(fs::read_symlink(top), fs::path("../../blobs/" + kEtag));
    QCOMPARE(fs::read_symlink(nested), fs::path("../../../../blobs/" + kEtag));
    QCOMPARE(contents_of(nested), std::string("weights"));
    QVERIFY(cache.stays_inside(nested));
    // Placing it again keeps the link.
    QCOMPARE(cache.place_in_snapshot("org/model", kCommit, "model.safetensors", kEtag),
             Placement::Linked);
  }

  void copiesWhenLinksAreTurnedOff() {
    QTemporaryDir root;
    HubCache cache(root.path().toStdString(), /*links=*/false);
    write_blob(cache, kEtag, "weights");
    QCOMPARE(cache.place_in_snapshot("org/model", kCommit, "sub/w.bin", kEtag), Placement::Copied);
    const fs::path copy = cache.snapshot_file("org/model", kCommit, "sub/w.bin");
    QVERIFY(!fs::is_symlink(fs::symlink_status(copy)));
    QCOMPARE(contents_of(copy), std::string("weights"));
    QVERIFY(cache.stays_inside(copy));
  }

  void replacesAForeignEntryAndRefusesLinkedFolders() {
    QTemporaryDir root;
    QTemporaryDir outside;
    HubCache cache(root.path().toStdString());
    write_blob(cache, kEtag, "weights");
    const fs::path snapshot = cache.snapshot_dir("org/model", kCommit);
    fs::create_directories(snapshot);
    // A link that leads out of the cache is not followed, and not kept.
    fs::create_symlink(outside.path().toStdString() + "/victim", snapshot / "model.safetensors");
    QVERIFY(!cache.stays_inside(snapshot / "model.safetensors"));
    QCOMPARE(cache.place_in_snapshot("org/model", kCommit, "model.safetensors", kEtag),
             Placement::Linked);
    QVERIFY(cache.stays_inside(snapshot / "model.safetensors"));
    QVERIFY(!QFile::exists(outside.path() + "/victim"));
    // A folder that is a link out of the cache is refused.
    fs::create_directory_symlink(outside.path().toStdString(), snapshot / "sub");
    QVERIFY_THROWS_EXCEPTION(HubProtocolError,
                             cache.place_in_snapshot("org/model", kCommit, "sub/w.bin", kEtag));
    QVERIFY(QDir(outside.path()).isEmpty());
  }

  void writesAndReadsRefs() {
    QTemporaryDir root;
    HubCache cache(root.path().toStdString());
    cache.write_ref("org/model", "main", kCommit);
    cache.write_ref("org/model", "refs/pr/1", std::string(40, 'c'));
    QCOMPARE(contents_of(cache.repo_dir("org/model") / "refs" / "main"),
             kCommit);  // no newline, as huggingface_hub writes it
    QCOMPARE(cache.read_ref("org/model", "refs/pr/1").value_or(""), std::string(40, 'c'));
    QVERIFY(!cache.read_ref("org/model", "4.0bpw"));
    QVERIFY_THROWS_EXCEPTION(HubProtocolError, cache.write_ref("org/model", "../x", kCommit));
    QVERIFY_THROWS_EXCEPTION(HubProtocolError, cache.write_ref("org/model", "main", "abc"));
  }

  void findsSnapshotsByRefOrCommit() {
    QTemporaryDir root;
    HubCache cache(root.path().toStdString());
    QVERIFY(!cache.find_snapshot("org/model", "main"));
    fs::create_directories(cache.snapshot_dir("org/model", kCommit));
    cache.write_ref("org/model", "main", kCommit);
    QCOMPARE(cache.find_snapshot("org/model", "main").value_or(""),
             cache.snapshot_dir("org/model", kCommit));
    QCOMPARE(cache.find_snapshot("org/model", kCommit).value_or(""),
             cache.snapshot_dir("org/model", kCommit));
    QVERIFY(!cache.find_snapshot("org/model", std::string(40, 'd')));
  }

  void readsHubReferences() {
    QVERIFY(!parse_hub_reference("/models/llama"));
    const auto plain = parse_hub_reference("hf:org/model");
    QCOMPARE(plain->repo, std::string("org/model"));
    QCOMPARE(plain->revision, std::string("main"));
    const auto branch = parse_hub_reference("hf:org/model@4.0bpw");
    QCOMPARE(branch->revision, std::string("4.0bpw"));
    QCOMPARE(parse_hub_reference("hf:org/model@refs/pr/2")->revision, std::string("refs/pr/2"));
    QVERIFY_THROWS_EXCEPTION(HubProtocolError, parse_hub_reference("hf:model"));
    QVERIFY_THROWS_EXCEPTION(HubProtocolError, parse_hub_reference("hf:org/model@"));
    QVERIFY_THROWS_EXCEPTION(HubProtocolError, parse_hub_reference("hf:org/model@../../x"));
  }

  void opensCachedSnapshotsThatStayInside() {
    QTemporaryDir root;
    QTemporaryDir outside;
    HubCache cache(root.path().toStdString());
    write_blob(cache, kEtag, "weights");
    cache.place_in_snapshot("org/model", kCommit, "model.safetensors", kEtag);
    cache.write_ref("org/model", "main", kCommit);
    const HubReference reference{"org/model", "main"};
    QCOMPARE(cached_snapshot(reference, cache), cache.snapshot_dir("org/model", kCommit));
    QVERIFY_THROWS_EXCEPTION(HubProtocolError, cached_snapshot({"org/model", "4.0bpw"}, cache));
    fs::create_symlink(outside.path().toStdString(),
                       cache.snapshot_dir("org/model", kCommit) / "escape");
    QVERIFY_THROWS_EXCEPTION(HubProtocolError, cached_snapshot(reference, cache));
  }

  void commitsTheFirstFinishedBlob() {
    QTemporaryDir root;
    HubCache cache(root.path().toStdString());
    const fs::path partial = cache.incomplete_path("org/model", kEtag);
    fs::create_directories(partial.parent_path());
    std::ofstream(partial) << "first";
    cache.commit_blob("org/model", kEtag, partial);
    QVERIFY(cache.has_blob("org/model", kEtag));
    QVERIFY(!fs::exists(partial));
    std::ofstream(partial) << "second";
    cache.commit_blob("org/model", kEtag, partial);
    QVERIFY(!fs::exists(partial));
    QCOMPARE(contents_of(cache.blob_path("org/model", kEtag)), std::string("first"));
  }
};

QUIRE_TEST(HubCacheTest)
#include "test_hub_cache.moc"
