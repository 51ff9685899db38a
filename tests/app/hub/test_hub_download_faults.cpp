// Downloads through the faults users meet: a connection dropped mid-file, a
// stall, a partial file from an earlier run, a server that ignores Range,
// 429 with Retry-After, gated repositories, wrong bytes and a listing that
// lies about sizes. Each ends with the right bytes in the cache, or with a
// message and no damaged file in it.

#include <QDir>
#include <QElapsedTimer>
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

// org/model with only its 300 KiB LFS weights chosen.
SnapshotRequest weights_only() {
  SnapshotRequest request;
  request.repo = QStringLiteral("org/model");
  request.filter.include = {"model.safetensors"};
  return request;
}

const quire::test::FakeFile& weights_of(const quire::test::FakeRepo& repo) {
  return repo.branches[0].files[1];
}

QString blob_of(const QTemporaryDir& cache, const quire::test::FakeFile& file) {
  return cache.path() + QStringLiteral("/models--org--model/blobs/") + file.etag();
}

QList<QByteArray> file_host_ranges(const FakeHub& hub) {
  QList<QByteArray> ranges;
  for (const auto& request : hub.requests())
    if (request.file_host) ranges.append(request.headers.value("range"));
  return ranges;
}

bool any_note_contains(const QStringList& notes, const QString& text) {
  for (const QString& note : notes)
    if (note.contains(text)) return true;
  return false;
}

}  // namespace

class HubDownloadFaultsTest : public QObject {
  Q_OBJECT

 private slots:
  void resumesAfterADroppedConnection() {
    FakeHub hub;
    QVERIFY(hub.start());
    const quire::test::FakeRepo repo = hub_test::sample_repo();
    hub.addRepo(repo);
    hub.faults().drops = 2;
    hub.faults().drop_after = 100'000;
    QTemporaryDir cache;
    const auto run = hub_test::run_download(
        hub_test::settings_for(hub, cache.path(), QStringLiteral("hf_secret")), weights_only());
    QVERIFY2(run.ok, qPrintable(run.error));
    QCOMPARE(hub_test::read_file(run.folder + QStringLiteral("/model.safetensors")),
             weights_of(repo).content);
    // Each try asks for the bytes after those already on disk.
    QCOMPARE(file_host_ranges(hub),
             (QList<QByteArray>{QByteArray(), "bytes=100000-", "bytes=200000-"}));
    QCOMPARE(hub.fileHostRequestsWithAuthorization(), 0);
  }

  void retriesAStalledTransfer() {
    FakeHub hub;
    QVERIFY(hub.start());
    const quire::test::FakeRepo repo = hub_test::sample_repo();
    hub.addRepo(repo);
    hub.faults().stalls = 1;
    hub.faults().stall_after = 50'000;
    QTemporaryDir cache;
    SnapshotOptions options;
    options.transfer.stall_timeout_ms = 300;
    const auto run =
        hub_test::run_download(hub_test::settings_for(hub, cache.path()), weights_only(), options);
    QVERIFY2(run.ok, qPrintable(run.error));
    QCOMPARE(hub_test::read_file(run.folder + QStringLiteral("/model.safetensors")),
             weights_of(repo).content);
    QVERIFY2(any_note_contains(run.notes, QStringLiteral("model.safetensors stalled")),
             qPrintable(run.notes.join('\n')));
    QCOMPARE(file_host_ranges(hub), (QList<QByteArray>{QByteArray(), "bytes=50000-"}));
  }

  void keepsThePartialFileWhenTriesRunOut() {
    FakeHub hub;
    QVERIFY(hub.start());
    const quire::test::FakeRepo repo = hub_test::sample_repo();
    hub.addRepo(repo);
    hub.faults().drops = 1;
    hub.faults().drop_after = 100'000;
    hub.faults().stalls = 100;  // every try after the first falls silent at once
    hub.faults().stall_after = 0;
    QTemporaryDir cache;
    SnapshotOptions options;
    options.transfer.stall_timeout_ms = 200;
    const auto run =
        hub_test::run_download(hub_test::settings_for(hub, cache.path()), weights_only(), options);
    QVERIFY(!run.ok);
    QCOMPARE(run.error, QStringLiteral("model.safetensors: the transfer kept breaking off (no data "
                                       "for 0.2 s); run the download again to resume it."));
    // Five tries counted from the last one that brought bytes: that one, then
    // four that stalled. The partial file stays for the next run.
    QCOMPARE(file_host_ranges(hub).size(), 5);
    QCOMPARE(QFileInfo(blob_of(cache, weights_of(repo)) + QStringLiteral(".incomplete")).size(),
             100'000);
    QVERIFY(!QFile::exists(blob_of(cache, weights_of(repo))));
  }

  void resumesAPartialFileFromAnEarlierRun() {
    FakeHub hub;
    QVERIFY(hub.start());
    const quire::test::FakeRepo repo = hub_test::sample_repo();
    hub.addRepo(repo);
    QTemporaryDir cache;
    const QString partial = blob_of(cache, weights_of(repo)) + QStringLiteral(".incomplete");
    QVERIFY(QDir().mkpath(QFileInfo(partial).path()));
    QFile file(partial);
    QVERIFY(file.open(QIODevice::WriteOnly));
    file.write(weights_of(repo).content.left(123'456));
    file.close();
    const auto run =
        hub_test::run_download(hub_test::settings_for(hub, cache.path()), weights_only());
    QVERIFY2(run.ok, qPrintable(run.error));
    QCOMPARE(file_host_ranges(hub), (QList<QByteArray>{"bytes=123456-"}));
    QCOMPARE(hub_test::read_file(run.folder + QStringLiteral("/model.safetensors")),
             weights_of(repo).content);
    QVERIFY(!QFile::exists(partial));
  }

  void startsAgainWhenRangeIsIgnored() {
    FakeHub hub;
    QVERIFY(hub.start());
    const quire::test::FakeRepo repo = hub_test::sample_repo();
    hub.addRepo(repo);
    hub.faults().ignore_range = true;
    hub.faults().drops = 1;
    hub.faults().drop_after = 100'000;
    QTemporaryDir cache;
    const auto run =
        hub_test::run_download(hub_test::settings_for(hub, cache.path()), weights_only());
    QVERIFY2(run.ok, qPrintable(run.error));
    // The resume was asked for, answered whole, and written from the start.
    QCOMPARE(file_host_ranges(hub), (QList<QByteArray>{QByteArray(), "bytes=100000-"}));
    QCOMPARE(hub_test::read_file(run.folder + QStringLiteral("/model.safetensors")),
             weights_of(repo).content);
    QVERIFY2(any_note_contains(run.notes, QStringLiteral("the server ignored the resume request")),
             qPrintable(run.notes.join('\n')));
  }

  void decodesGzippedTextFiles() {
    FakeHub hub;
    QVERIFY(hub.start());
    const quire::test::FakeRepo repo = hub_test::sample_repo();
    hub.addRepo(repo);
    hub.faults().gzip_text = true;
    QTemporaryDir cache;
    // A partial text file from an earlier run is not resumed: text starts again.
    const QString partial = cache.path() + QStringLiteral("/models--org--model/blobs/") +
                            QString::fromLatin1(repo.branches[0].files[0].gitSha1()) +
                            QStringLiteral(".incomplete");
    QVERIFY(QDir().mkpath(QFileInfo(partial).path()));
    QFile stale(partial);
    QVERIFY(stale.open(QIODevice::WriteOnly));
    stale.write("{\"arch");
    stale.close();
    SnapshotRequest every_file;
    every_file.repo = QStringLiteral("org/model");
    const auto run = hub_test::run_download(hub_test::settings_for(hub, cache.path()), every_file);
    QVERIFY2(run.ok, qPrintable(run.error));
    for (const quire::test::FakeFile& file : repo.branches[0].files)
      QCOMPARE(hub_test::read_file(run.folder + QLatin1Char('/') + file.path), file.content);
    for (const auto& request : hub.requests()) {
      if (!request.target.startsWith("/org/model/resolve/")) continue;
      const bool text =
          request.target.endsWith("config.json") || request.target.endsWith("README.md");
      QCOMPARE(request.headers.value("accept-encoding").contains("gzip"), text);
      QVERIFY(!request.headers.contains("range"));
    }
  }

  void waitsOutRateLimits() {
    FakeHub hub;
    QVERIFY(hub.start());
    const quire::test::FakeRepo repo = hub_test::sample_repo();
    hub.addRepo(repo);
    hub.faults().rate_limits = 2;  // the file list, then the file
    hub.faults().retry_after_s = 1;
    QTemporaryDir cache;
    QElapsedTimer timer;
    timer.start();
    const auto run =
        hub_test::run_download(hub_test::settings_for(hub, cache.path()), weights_only());
    QVERIFY2(run.ok, qPrintable(run.error));
    QVERIFY2(timer.elapsed() >= 1900, qPrintable(QString::number(timer.elapsed())));
    QCOMPARE(hub_test::read_file(run.folder + QStringLiteral("/model.safetensors")),
             weights_of(repo).content);
  }

  void explainsGatedRepositories() {
    FakeHub hub;
    QVERIFY(hub.start());
    quire::test::FakeRepo repo = hub_test::sample_repo();
    repo.gated = QStringLiteral("manual");
    hub.addRepo(repo);
    hub.setAcceptedToken("hf_granted");
    QTemporaryDir cache;

    const auto anonymous =
        hub_test::run_download(hub_test::settings_for(hub, cache.path()), weights_only());
    QVERIFY(!anonymous.ok);
    QCOMPARE(anonymous.error,
             QStringLiteral("org/model is gated: the Hub refused the file model.safetensors "
                            "(HTTP 401: Access to model org/model is restricted. You must have "
                            "access to it and be authenticated to access it. Please log in.). "
                            "Accept the licence on the model's page, %1/org/model, while logged "
                            "in, then set a token: HF_TOKEN, or the token file %2/home/token.")
                 .arg(hub.endpoint(), cache.path()));

    const auto refused = hub_test::run_download(
        hub_test::settings_for(hub, cache.path(), QStringLiteral("hf_other")), weights_only());
    QVERIFY(!refused.ok);
    QVERIFY2(refused.error.contains(QLatin1String("(HTTP 403: ")), qPrintable(refused.error));
    QVERIFY2(refused.error.endsWith(QLatin1String(
                 "then check that the token in HF_TOKEN or the token file belongs to that "
                 "account and may read gated repositories.")),
             qPrintable(refused.error));

    const auto granted = hub_test::run_download(
        hub_test::settings_for(hub, cache.path(), QStringLiteral("hf_granted")), weights_only());
    QVERIFY2(granted.ok, qPrintable(granted.error));
    QCOMPARE(hub_test::read_file(granted.folder + QStringLiteral("/model.safetensors")),
             weights_of(repo).content);
    QCOMPARE(hub.fileHostRequestsWithAuthorization(), 0);
  }

  void discardsWrongBytes() {
    FakeHub hub;
    QVERIFY(hub.start());
    const quire::test::FakeRepo repo = hub_test::sample_repo();
    hub.addRepo(repo);
    hub.faults().wrong_bytes = true;
    QTemporaryDir cache;
    const auto run =
        hub_test::run_download(hub_test::settings_for(hub, cache.path()), weights_only());
    QVERIFY(!run.ok);
    QVERIFY2(run.error.startsWith(QStringLiteral("model.safetensors does not match its SHA-256 "
                                                 "(expected %1, got ")
                                      .arg(QString::fromLatin1(weights_of(repo).sha256()))),
             qPrintable(run.error));
    QVERIFY(
        run.error.endsWith(QLatin1String("the downloaded copy was discarded. Download again; "
                                         "if it repeats, the Hub or a proxy is serving a "
                                         "damaged file.")));
    QVERIFY(!QFile::exists(blob_of(cache, weights_of(repo))));
    QVERIFY(!QFile::exists(blob_of(cache, weights_of(repo)) + QStringLiteral(".incomplete")));
    QVERIFY(!QFile::exists(cache.path() + QStringLiteral("/models--org--model/snapshots/") +
                           hub_test::commit_of("a1") + QStringLiteral("/model.safetensors")));
  }

  void refusesFilesBiggerOrSmallerThanListed() {
    FakeHub hub;
    QVERIFY(hub.start());
    const quire::test::FakeRepo repo = hub_test::sample_repo();
    hub.addRepo(repo);
    hub.faults().size_lie = -10;  // the listing says less than the file holds
    QTemporaryDir cache;
    SnapshotRequest small_file = weights_only();
    small_file.filter.include = {"README.md"};
    const auto run = hub_test::run_download(hub_test::settings_for(hub, cache.path()), small_file);
    QVERIFY(!run.ok);
    QVERIFY2(run.error.startsWith(QLatin1String("README.md")), qPrintable(run.error));
    QCOMPARE(
        QDir(cache.path() + QStringLiteral("/models--org--model/blobs")).entryList(QDir::Files),
        QStringList());
  }
};

QUIRE_TEST(HubDownloadFaultsTest)
#include "test_hub_download_faults.moc"
