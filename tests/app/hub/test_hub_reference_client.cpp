// Hugging Face's own JavaScript client (@huggingface/hub, pinned in
// tests/reference) against the same fake Hub, and the cache shared both
// ways: its scanCacheDir reads what Quire wrote without a warning, also after
// Quire removed a snapshot, and what its snapshotDownload wrote opens in
// Quire and is not downloaded again.
// Node.js and `npm ci --prefix tests/reference` (scripts/setup-debian.sh)
// are needed; the test fails, saying so, without them.

#include <QDir>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QTemporaryDir>
#include <QTest>

#include "fake_hub.h"
#include "hub_test_support.h"
#include "quire/hub/cached_models.h"
#include "quire/hub/hub_reference.h"
#include "test_main.h"

using namespace quire::hub;
using quire::test::FakeHub;

namespace {

const QString kReferenceDir = QStringLiteral(QUIRE_REFERENCE_DIR);

// Why the JavaScript client cannot run here, or "" when it can.
QString missing_client() {
  if (QStringLiteral(QUIRE_NODE).isEmpty()) return QStringLiteral("Node.js was not found");
  if (!QFile::exists(kReferenceDir + QStringLiteral("/node_modules/@huggingface/hub/package.json")))
    return QStringLiteral("@huggingface/hub is not installed: npm ci --prefix tests/reference");
  return {};
}

// Runs the check script while this process's event loop serves the fake Hub.
// The sample repository's main and 4.0bpw branches, downloaded by Quire.
bool download_both_branches(const FakeHub& hub, const QString& cache) {
  const HubSettings settings = hub_test::settings_for(hub, cache);
  SnapshotRequest request;
  request.repo = QStringLiteral("org/model");
  if (!hub_test::run_download(settings, request).ok) return false;
  request.revision = QStringLiteral("4.0bpw");
  return hub_test::run_download(settings, request).ok;
}

QJsonValue run_client(const QStringList& arguments, QString* error) {
  QProcess process;
  process.setWorkingDirectory(kReferenceDir);
  process.start(QStringLiteral(QUIRE_NODE),
                QStringList{kReferenceDir + QStringLiteral("/hub_client_check.mjs")} + arguments);
  if (!process.waitForStarted()) {
    *error = QStringLiteral("node did not start");
    return {};
  }
  if (!QTest::qWaitFor([&] { return process.state() == QProcess::NotRunning; }, 60000)) {
    process.kill();
    process.waitForFinished();
    *error = QStringLiteral("node did not finish in a minute");
    return {};
  }
  const QByteArray out = process.readAllStandardOutput();
  if (process.exitCode() != 0) {
    *error = QString::fromUtf8(process.readAllStandardError());
    return {};
  }
  QJsonParseError parse;
  const QJsonDocument document = QJsonDocument::fromJson("[" + out + "]", &parse);
  if (parse.error != QJsonParseError::NoError) {
    *error = QStringLiteral("not JSON: ") + QString::fromUtf8(out);
    return {};
  }
  return document.array().at(0);
}

}  // namespace

class HubReferenceClientTest : public QObject {
  Q_OBJECT

 private slots:
  void init() {
    const QString missing = missing_client();
    if (!missing.isEmpty()) QFAIL(qPrintable(missing));
  }

  void theFakeAnswersHuggingFacesClient() {
    FakeHub hub;
    QVERIFY(hub.start());
    hub.addRepo(hub_test::sample_repo(QStringLiteral("org/llama-exl2")));
    hub.addRepo(hub_test::sample_repo(QStringLiteral("other/qwen")));
    QString error;
    const QJsonObject answer =
        run_client({QStringLiteral("search"), hub.endpoint(), QStringLiteral("llama")}, &error)
            .toObject();
    QVERIFY2(error.isEmpty(), qPrintable(error));
    QCOMPARE(answer[QStringLiteral("names")].toArray(),
             QJsonArray{QStringLiteral("org/llama-exl2")});
    QCOMPARE(answer[QStringLiteral("first")].toObject()[QStringLiteral("sha")].toString(),
             hub_test::commit_of("a1"));
  }

  void scanCacheDirReadsQuiresCache() {
    FakeHub hub;
    QVERIFY(hub.start());
    const quire::test::FakeRepo repo = hub_test::sample_repo();
    hub.addRepo(repo);
    QTemporaryDir cache;
    QVERIFY(download_both_branches(hub, cache.path()));

    QString error;
    const QJsonObject scan = run_client({QStringLiteral("scan"), cache.path()}, &error).toObject();
    QVERIFY2(error.isEmpty(), qPrintable(error));
    QCOMPARE(scan[QStringLiteral("warnings")].toArray(), QJsonArray());
    const QJsonArray repos = scan[QStringLiteral("repos")].toArray();
    QCOMPARE(repos.size(), 1);
    const QJsonObject cached = repos[0].toObject();
    QCOMPARE(cached[QStringLiteral("id")].toString(), QStringLiteral("org/model"));
    QCOMPARE(cached[QStringLiteral("type")].toString(), QStringLiteral("model"));
    // The blobs reached from the snapshots' top level (scanCacheDir does not
    // go into folders): three on main, two on 4.0bpw.
    QCOMPARE(cached[QStringLiteral("filesCount")].toInt(), 5);
    const QJsonArray revisions = cached[QStringLiteral("revisions")].toArray();
    QCOMPARE(revisions.size(), 2);
    for (int i = 0; i < 2; ++i) {
      const quire::test::FakeBranch& branch = repo.branches[i];
      const QJsonObject revision = revisions[i].toObject();
      QCOMPARE(revision[QStringLiteral("commit")].toString(), branch.commit);
      QCOMPARE(revision[QStringLiteral("refs")].toArray(), QJsonArray{branch.name});
      // scanCacheDir lists the snapshot's top level; every file there leads
      // to the blob named by its etag, with the file's size.
      for (const QJsonValue& value : revision[QStringLiteral("files")].toArray()) {
        const QJsonObject file = value.toObject();
        const auto known = std::find_if(
            branch.files.begin(), branch.files.end(),
            [&](const auto& f) { return f.path == file[QStringLiteral("name")].toString(); });
        QVERIFY(known != branch.files.end());
        QCOMPARE(file[QStringLiteral("blob")].toString(),
                 QStringLiteral("models--org--model/blobs/") + QString::fromLatin1(known->etag()));
        QCOMPARE(file[QStringLiteral("size")].toInteger(), known->content.size());
      }
    }
  }

  void scanCacheDirAgreesAfterQuireRemovesASnapshot() {
    FakeHub hub;
    QVERIFY(hub.start());
    const quire::test::FakeRepo repo = hub_test::sample_repo();
    hub.addRepo(repo);
    QTemporaryDir cache;
    QVERIFY(download_both_branches(hub, cache.path()));
    const quire::test::FakeBranch& main_branch = repo.branches[0];
    const quire::test::FakeBranch& quant = repo.branches[1];

    const HubCache quire_cache(cache.path().toStdString());
    QCOMPARE(list_cached_models(quire_cache.root()).size(), std::size_t{2});
    const SnapshotRemoval removal =
        quire_cache.remove_snapshot("org/model", quant.commit.toStdString());
    QCOMPARE(removal.blobs_removed, 2);
    QCOMPARE(removal.blobs_kept, 0);
    QCOMPARE(removal.freed_bytes, quant.files[0].content.size() + quant.files[1].content.size());

    QString error;
    QJsonObject scan = run_client({QStringLiteral("scan"), cache.path()}, &error).toObject();
    QVERIFY2(error.isEmpty(), qPrintable(error));
    QCOMPARE(scan[QStringLiteral("warnings")].toArray(), QJsonArray());
    const QJsonArray repos = scan[QStringLiteral("repos")].toArray();
    QCOMPARE(repos.size(), 1);
    const QJsonArray revisions = repos[0].toObject()[QStringLiteral("revisions")].toArray();
    QCOMPARE(revisions.size(), 1);
    const QJsonObject revision = revisions[0].toObject();
    QCOMPARE(revision[QStringLiteral("commit")].toString(), main_branch.commit);
    QCOMPARE(revision[QStringLiteral("refs")].toArray(), QJsonArray{QStringLiteral("main")});
    // scanCacheDir sums the snapshot's top level; Quire's listing every file.
    qint64 top_level = 0;
    qint64 every_file = 0;
    for (const quire::test::FakeFile& file : main_branch.files) {
      every_file += file.content.size();
      if (!file.path.contains(QLatin1Char('/'))) top_level += file.content.size();
    }
    QCOMPARE(revision[QStringLiteral("size")].toInteger(), top_level);
    QCOMPARE(repos[0].toObject()[QStringLiteral("size")].toInteger(), top_level);
    QCOMPARE(repos[0].toObject()[QStringLiteral("filesCount")].toInt(), 3);
    const std::vector<CachedModel> left = list_cached_models(quire_cache.root());
    QCOMPARE(left.size(), std::size_t{1});
    QCOMPARE(QString::fromStdString(left[0].commit), main_branch.commit);
    QCOMPARE(left[0].refs, std::vector<std::string>{"main"});
    QCOMPARE(left[0].bytes, every_file);
    // Every blob left is main's.
    QCOMPARE(QDir(cache.path() + QStringLiteral("/models--org--model/blobs"))
                 .entryList(QDir::Files | QDir::NoDotAndDotDot)
                 .size(),
             main_branch.files.size());

    // The last snapshot: the repository is gone for both.
    const SnapshotRemoval last =
        quire_cache.remove_snapshot("org/model", main_branch.commit.toStdString());
    QCOMPARE(last.blobs_removed, 4);
    QCOMPARE(last.freed_bytes, every_file);
    scan = run_client({QStringLiteral("scan"), cache.path()}, &error).toObject();
    QVERIFY2(error.isEmpty(), qPrintable(error));
    QCOMPARE(scan[QStringLiteral("warnings")].toArray(), QJsonArray());
    QCOMPARE(scan[QStringLiteral("repos")].toArray(), QJsonArray());
    QVERIFY(list_cached_models(quire_cache.root()).empty());
  }

  void quireOpensWhatSnapshotDownloadWrote() {
    FakeHub hub;
    QVERIFY(hub.start());
    const quire::test::FakeRepo repo = hub_test::sample_repo();
    hub.addRepo(repo);
    QTemporaryDir cache;
    QString error;
    const QString folder =
        run_client({QStringLiteral("download"), hub.endpoint(), QStringLiteral("org/model"),
                    QStringLiteral("main"), cache.path()},
                   &error)
            .toString();
    QVERIFY2(error.isEmpty(), qPrintable(error));

    const HubCache quire_cache(cache.path().toStdString());
    const auto snapshot = cached_snapshot({"org/model", "main"}, quire_cache);
    QCOMPARE(QString::fromStdString(snapshot.string()), folder);
    for (const quire::test::FakeFile& file : repo.branches[0].files)
      QCOMPARE(hub_test::read_file(folder + QLatin1Char('/') + file.path), file.content);

    // Quire finds every blob there and downloads nothing.
    const int file_requests = hub.fileHostRequests();
    SnapshotRequest request;
    request.repo = QStringLiteral("org/model");
    const auto run = hub_test::run_download(hub_test::settings_for(hub, cache.path()), request);
    QVERIFY2(run.ok, qPrintable(run.error));
    QCOMPARE(run.folder, folder);
    QCOMPARE(hub.fileHostRequests(), file_requests);
    QCOMPARE(hub.requests().last().target,
             QByteArray("/api/models/org/model/revision/main?blobs=true"));
  }
};

QUIRE_TEST(HubReferenceClientTest)
#include "test_hub_reference_client.moc"
