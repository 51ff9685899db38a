// Snapshot downloads into the shared cache against the fake Hub: the layout
// (blobs named by etag, relative links, refs), the token kept from the file
// host, filters, branches, the offline mode, the free-space check, and names
// that would leave the cache.

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QTemporaryDir>
#include <QTest>

#include "fake_hub.h"
#include "hub_test_support.h"
#include "test_main.h"

using namespace quire::hub;
using quire::test::FakeHub;

namespace {

SnapshotRequest request_for(const QString& repo, const QString& revision = QStringLiteral("main")) {
  SnapshotRequest request;
  request.repo = repo;
  request.revision = revision;
  return request;
}

QString repo_dir(const QTemporaryDir& cache) {
  return cache.path() + QStringLiteral("/models--org--model");
}

}  // namespace

class HubDownloadTest : public QObject {
  Q_OBJECT

 private slots:
  void downloadsASnapshotIntoTheSharedLayout() {
    FakeHub hub;
    QVERIFY(hub.start());
    const quire::test::FakeRepo repo = hub_test::sample_repo();
    hub.addRepo(repo);
    QTemporaryDir cache;
    const auto run = hub_test::run_download(
        hub_test::settings_for(hub, cache.path(), QStringLiteral("hf_secret")),
        request_for(QStringLiteral("org/model")));
    QVERIFY2(run.ok, qPrintable(run.error));
    const QString commit = hub_test::commit_of("a1");
    QCOMPARE(run.folder, repo_dir(cache) + QStringLiteral("/snapshots/") + commit);
    QCOMPARE(hub_test::read_file(repo_dir(cache) + QStringLiteral("/refs/main")),
             commit.toLatin1());
    for (const quire::test::FakeFile& file : repo.branches[0].files) {
      const QString linked = run.folder + QLatin1Char('/') + file.path;
      const QString depth = QStringLiteral("../").repeated(file.path.count(QLatin1Char('/')) + 2);
      QCOMPARE(
          QFileInfo(linked).symLinkTarget(),
          QFileInfo(repo_dir(cache) + QStringLiteral("/blobs/") + file.etag()).absoluteFilePath());
      QCOMPARE(QFile::symLinkTarget(linked), QFileInfo(linked).symLinkTarget());
      QCOMPARE(QFileInfo(linked).isSymLink(), true);
      QCOMPARE(QDir(QFileInfo(linked).path()).relativeFilePath(QFileInfo(linked).symLinkTarget()),
               depth + QStringLiteral("blobs/") + file.etag());
      QCOMPARE(hub_test::read_file(linked), file.content);
    }
    // No partial or temporary file is left beside the blobs.
    QCOMPARE(QDir(repo_dir(cache) + QStringLiteral("/blobs")).entryList(QDir::Files).size(), 4);
    QVERIFY(QFile::exists(cache.path() + QStringLiteral("/.locks/models--org--model/") +
                          repo.branches[0].files[1].sha256() + QStringLiteral(".lock")));
    // The token reached the Hub, never the file host.
    QCOMPARE(hub.fileHostRequests(), 2);
    QCOMPARE(hub.fileHostRequestsWithAuthorization(), 0);
    int hub_requests_with_token = 0;
    for (const auto& request : hub.requests())
      if (!request.file_host && request.headers.value("authorization") == "Bearer hf_secret")
        ++hub_requests_with_token;
    QCOMPARE(hub_requests_with_token, hub.requests().size() - 2);

    // A second run finds every blob and asks only for the file list.
    const int before = hub.requests().size();
    const auto again = hub_test::run_download(hub_test::settings_for(hub, cache.path()),
                                              request_for(QStringLiteral("org/model")));
    QVERIFY2(again.ok, qPrintable(again.error));
    QCOMPARE(hub.requests().size(), before + 1);
  }

  void downloadsABranchWithFilters() {
    FakeHub hub;
    QVERIFY(hub.start());
    hub.addRepo(hub_test::sample_repo());
    QTemporaryDir cache;
    SnapshotRequest request = request_for(QStringLiteral("org/model"), QStringLiteral("4.0bpw"));
    request.filter.include = {"*.safetensors", "*.json"};
    request.filter.exclude = {"config.*"};
    const auto run = hub_test::run_download(hub_test::settings_for(hub, cache.path()), request);
    QVERIFY2(run.ok, qPrintable(run.error));
    QCOMPARE(QDir(run.folder).entryList(QDir::Files | QDir::System),
             QStringList{QStringLiteral("output.safetensors")});
    QCOMPARE(hub_test::read_file(repo_dir(cache) + QStringLiteral("/refs/4.0bpw")),
             hub_test::commit_of("b2").toLatin1());
    QVERIFY(!QFile::exists(repo_dir(cache) + QStringLiteral("/refs/main")));
  }

  void followsARenamedRepository() {
    FakeHub hub;
    QVERIFY(hub.start());
    const quire::test::FakeRepo repo = hub_test::sample_repo(QStringLiteral("neworg/model"));
    hub.addRepo(repo);
    hub.addRename(QStringLiteral("org/model"), QStringLiteral("neworg/model"));
    QTemporaryDir cache;
    const auto run = hub_test::run_download(
        hub_test::settings_for(hub, cache.path(), QStringLiteral("hf_secret")),
        request_for(QStringLiteral("org/model")));
    QVERIFY2(run.ok, qPrintable(run.error));
    // Kept under the name asked for, as huggingface_hub keeps it.
    QCOMPARE(run.folder,
             repo_dir(cache) + QStringLiteral("/snapshots/") + hub_test::commit_of("a1"));
    QCOMPARE(hub_test::read_file(run.folder + QStringLiteral("/model.safetensors")),
             repo.branches[0].files[1].content);
    // The relative redirect stays on the Hub, so the token followed it.
    int renamed_with_token = 0;
    for (const auto& request : hub.requests())
      if (request.target.startsWith("/neworg/model/resolve/") &&
          request.headers.value("authorization") == "Bearer hf_secret")
        ++renamed_with_token;
    QCOMPARE(renamed_with_token, 4);
    QCOMPARE(hub.fileHostRequestsWithAuthorization(), 0);
  }

  void waitsForTheLockAnotherProgramHolds() {
    FakeHub hub;
    QVERIFY(hub.start());
    const quire::test::FakeRepo repo = hub_test::sample_repo();
    hub.addRepo(repo);
    QTemporaryDir cache;
    // huggingface_hub's lock for the weights' blob, held as filelock holds it.
    const QString lock_path = cache.path() + QStringLiteral("/.locks/models--org--model/") +
                              QString::fromLatin1(repo.branches[0].files[1].sha256()) +
                              QStringLiteral(".lock");
    QVERIFY(QDir().mkpath(QFileInfo(lock_path).path()));
    const int fd = ::open(QFile::encodeName(lock_path).constData(), O_RDWR | O_CREAT, 0664);
    QVERIFY(fd >= 0);
    QCOMPARE(::flock(fd, LOCK_EX), 0);

    HubClient client(hub_test::settings_for(hub, cache.path()));
    SnapshotRequest request = request_for(QStringLiteral("org/model"));
    request.filter.include = {"model.safetensors"};
    SnapshotDownload download(&client, HubCache(cache.path().toStdString()), request, {});
    QString folder;
    QStringList notes;
    connect(&download, &SnapshotDownload::finished, this, [&](const QString& f) { folder = f; });
    connect(&download, &SnapshotDownload::note, this, [&](const QString& n) { notes.append(n); });
    download.start();
    QTest::qWait(1500);
    QVERIFY(folder.isEmpty());
    QCOMPARE(hub.fileHostRequests(), 0);
    QCOMPARE(notes, QStringList{QStringLiteral(
                        "model.safetensors: another download of the same file holds its lock; "
                        "waiting")});
    ::flock(fd, LOCK_UN);
    ::close(fd);
    QVERIFY(QTest::qWaitFor([&] { return !folder.isEmpty(); }, 10000));
    QCOMPARE(hub_test::read_file(folder + QStringLiteral("/model.safetensors")),
             repo.branches[0].files[1].content);
  }

  void cancelRemovesThePartialFile() {
    FakeHub hub;
    QVERIFY(hub.start());
    const quire::test::FakeRepo repo = hub_test::sample_repo();
    hub.addRepo(repo);
    hub.faults().stalls = 1;
    hub.faults().stall_after = 100'000;
    QTemporaryDir cache;
    HubClient client(hub_test::settings_for(hub, cache.path()));
    SnapshotRequest request = request_for(QStringLiteral("org/model"));
    request.filter.include = {"model.safetensors"};
    SnapshotDownload download(&client, HubCache(cache.path().toStdString()), request, {});
    QString error;
    connect(&download, &SnapshotDownload::failed, this, [&](const QString& e) { error = e; });
    download.start();
    QVERIFY(QTest::qWaitFor([&] { return download.progress().bytes_done == 100'000; }, 10000));
    const QString partial = repo_dir(cache) + QStringLiteral("/blobs/") +
                            QString::fromLatin1(repo.branches[0].files[1].sha256()) +
                            QStringLiteral(".incomplete");
    QVERIFY(QFile::exists(partial));
    download.cancel();
    QCOMPARE(error, QStringLiteral("Cancelled."));
    QVERIFY(!QFile::exists(partial));
    QCOMPARE(QDir(repo_dir(cache) + QStringLiteral("/blobs")).entryList(QDir::Files),
             QStringList());
  }

  void downloadsAFewFilesAtOnce() {
    FakeHub hub;
    QVERIFY(hub.start());
    quire::test::FakeRepo repo = hub_test::sample_repo();
    for (int i = 0; i < 6; ++i)
      repo.branches[0].files.append({QStringLiteral("model-%1-of-6.safetensors").arg(i + 1),
                                     hub_test::random_bytes(10'000, 10 + i), true});
    hub.addRepo(repo);
    hub.faults().file_delay_ms = 300;
    QTemporaryDir cache;
    SnapshotRequest request = request_for(QStringLiteral("org/model"));
    request.filter.include = {"model-*"};
    SnapshotOptions options;
    options.parallel_files = 3;
    const auto run =
        hub_test::run_download(hub_test::settings_for(hub, cache.path()), request, options);
    QVERIFY2(run.ok, qPrintable(run.error));
    QCOMPARE(hub.fileHostRequests(), 6);
    QCOMPARE(hub.mostConcurrentFileRequests(), 3);
    for (int i = 0; i < 6; ++i)
      QCOMPARE(
          hub_test::read_file(run.folder + QStringLiteral("/model-%1-of-6.safetensors").arg(i + 1)),
          repo.branches[0].files[4 + i].content);
  }

  void answersFromTheCacheWhenOffline() {
    FakeHub hub;
    QVERIFY(hub.start());
    hub.addRepo(hub_test::sample_repo());
    QTemporaryDir cache;
    HubSettings settings = hub_test::settings_for(hub, cache.path());
    const auto online = hub_test::run_download(settings, request_for(QStringLiteral("org/model")));
    QVERIFY2(online.ok, qPrintable(online.error));
    const int requests = hub.requests().size();
    settings.offline = true;
    const auto offline = hub_test::run_download(settings, request_for(QStringLiteral("org/model")));
    QVERIFY2(offline.ok, qPrintable(offline.error));
    QCOMPARE(offline.folder, online.folder);
    const auto absent = hub_test::run_download(
        settings, request_for(QStringLiteral("org/model"), QStringLiteral("4.0bpw")));
    QVERIFY(!absent.ok);
    QCOMPARE(absent.error, QStringLiteral("HF_HUB_OFFLINE is set and org/model at 4.0bpw is not in "
                                          "the cache %1.")
                               .arg(cache.path()));
    QCOMPARE(hub.requests().size(), requests);
  }

  void checksFreeSpaceBeforeTheFirstByte() {
    FakeHub hub;
    QVERIFY(hub.start());
    hub.addRepo(hub_test::sample_repo());
    QTemporaryDir cache;
    SnapshotOptions options;
    QString asked;
    options.free_bytes = [&](const QString& folder) {
      asked = folder;
      return qint64{100 * 1024};
    };
    const auto run = hub_test::run_download(hub_test::settings_for(hub, cache.path()),
                                            request_for(QStringLiteral("org/model")), options);
    QVERIFY(!run.ok);
    QCOMPARE(asked, cache.path());
    QVERIFY2(run.error.startsWith(QLatin1String("org/model needs 0.3 MiB more on disk, and ")),
             qPrintable(run.error));
    QVERIFY2(run.error.endsWith(QLatin1String("has 0.1 MiB free; nothing was downloaded.")),
             qPrintable(run.error));
    QCOMPARE(hub.fileHostRequests(), 0);
    QVERIFY(!QFile::exists(repo_dir(cache)));
  }

  void refusesNamesThatLeaveTheCache_data() {
    QTest::addColumn<QString>("name");
    QTest::newRow("parent") << QStringLiteral("../escaped.txt");
    QTest::newRow("deep parent") << QStringLiteral("a/../../../escaped.txt");
    QTest::newRow("absolute") << QStringLiteral("/tmp/quire-hub-escaped.txt");
  }
  void refusesNamesThatLeaveTheCache() {
    QFETCH(QString, name);
    FakeHub hub;
    QVERIFY(hub.start());
    quire::test::FakeRepo repo = hub_test::sample_repo();
    repo.branches[0].files.append({name, "escaped", false});
    hub.addRepo(repo);
    QTemporaryDir parent;
    const QString cache = parent.path() + QStringLiteral("/hub");
    const auto run = hub_test::run_download(hub_test::settings_for(hub, cache),
                                            request_for(QStringLiteral("org/model")));
    QVERIFY(!run.ok);
    QCOMPARE(run.error, QStringLiteral("The Hub named a file \"%1\", %2; it is not written.")
                            .arg(name, name.startsWith(QLatin1Char('/'))
                                           ? QStringLiteral("an absolute path")
                                           : QStringLiteral("that climbs out of its folder")));
    // Nothing at all was written: not the other files, not outside the cache.
    QVERIFY(!QFile::exists(cache));
    QCOMPARE(QDir(parent.path()).entryList(QDir::AllEntries | QDir::NoDotAndDotDot), QStringList());
    QVERIFY(!QFile::exists(QStringLiteral("/tmp/quire-hub-escaped.txt")));
    QCOMPARE(hub.fileHostRequests(), 0);
  }
};

QUIRE_TEST(HubDownloadTest)
#include "test_hub_download.moc"
