// The app's download queue: one quantization at a time, pause keeping the
// partial files, the unfinished downloads back (paused) after a restart and
// resumed where they stopped, cancel removing the partial files, and the
// records file's own faults.

#include <QDir>
#include <QFile>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>

#include "fake_hub.h"
#include "hub_test_support.h"
#include "quire/hub/download_queue.h"
#include "quire/hub/download_records.h"
#include "test_main.h"

using quire::hub::DownloadQueue;
using quire::hub::Quantization;
using quire::hub::QueuedDownload;
using quire::test::FakeHub;
using quire::test::FakeRepo;

namespace {

constexpr qsizetype kWeightBytes = 600 * 1024;

FakeRepo two_size_repo() {
  FakeRepo repo;
  repo.id = QStringLiteral("org/queued");
  for (const char* pair : {"b3", "b4"}) {
    const QString name =
        QString::fromLatin1(pair).replace(u'b', QStringLiteral("")) + QStringLiteral(".0bpw");
    repo.branches.append(
        {name,
         hub_test::commit_of(pair),
         {{QStringLiteral("config.json"), QByteArray("{\"n\":\"") + pair + "\"}", false},
          {QStringLiteral("model.safetensors"),
           hub_test::random_bytes(kWeightBytes, quint32(pair[1])), true}}});
  }
  return repo;
}

// The quantization of `branch` as the survey would find it.
Quantization quantization_of(const FakeRepo& repo, int branch) {
  Quantization quantization;
  quantization.revision = repo.branches[branch].name.toStdString();
  quantization.commit = repo.branches[branch].commit.toStdString();
  for (const quire::test::FakeFile& file : repo.branches[branch].files) {
    quire::hub::RepoFile entry;
    entry.path = file.path.toStdString();
    entry.size = file.content.size();
    entry.blob_id = file.gitSha1().toStdString();
    if (file.lfs) entry.lfs = quire::hub::LfsPointer{file.sha256().toStdString(), entry.size};
    quantization.files.push_back(entry);
    quantization.bytes += entry.size;
  }
  return quantization;
}

struct QueueFixture {
  FakeHub hub;
  QTemporaryDir cache;
  QTemporaryDir data;
  std::unique_ptr<quire::hub::HubClient> client;

  bool start() {
    if (!hub.start()) return false;
    hub.addRepo(two_size_repo());
    client = std::make_unique<quire::hub::HubClient>(hub_test::settings_for(hub, cache.path()));
    client->setRetryPolicy(hub_test::quick_retries());
    return true;
  }
  QString recordsFile() const { return data.filePath(QStringLiteral("downloads.json")); }
  std::unique_ptr<DownloadQueue> queue() {
    quire::hub::SnapshotOptions options;
    options.transfer.stall_timeout_ms = 60'000;  // a stall lasts until the test pauses it
    return std::make_unique<DownloadQueue>(
        client.get(), quire::hub::HubCache(cache.path().toStdString()), recordsFile(), options);
  }
  QString partialOf(const Quantization& quantization) const {
    const quire::hub::HubCache layout(cache.path().toStdString());
    return QString::fromStdString(
        layout.incomplete_path("org/queued", quantization.files[1].etag()).string());
  }
};

QueuedDownload::State state_of(const DownloadQueue& queue, const QString& id) {
  const QueuedDownload* download = queue.find(id);
  return download == nullptr ? QueuedDownload::State::Done : download->state;
}

}  // namespace

class HubDownloadQueueTest : public QObject {
  Q_OBJECT

 private slots:
  void recordsSurviveTheirFile() {
    QTemporaryDir data;
    quire::hub::DownloadRecord record;
    record.id = QStringLiteral("org/m@4.0bpw");
    record.repo = QStringLiteral("org/m");
    record.revision = QStringLiteral("4.0bpw");
    record.commit = hub_test::commit_of("c4");
    record.subfolder = QStringLiteral("exl3");
    record.title = QStringLiteral("org/m 4.0bpw");
    record.paths = {QStringLiteral("exl3/config.json"), QStringLiteral("exl3/model.safetensors")};
    record.etags = {QString(40, u'a'), QString(64, u'b')};
    record.bytes_total = 5'000'000'000;
    record.bytes_done = 1'234'567'890;
    record.paused = true;
    const QString file = data.filePath(QStringLiteral("downloads.json"));
    QString error;
    QVERIFY(quire::hub::write_download_records(file, {record}, &error));
    QCOMPARE(quire::hub::read_download_records(file, &error), QList{record});
    QCOMPARE(error, QString());

    QFile broken(file);
    QVERIFY(broken.open(QIODevice::WriteOnly));
    broken.write("{not json");
    broken.close();
    QVERIFY(quire::hub::read_download_records(file, &error).isEmpty());
    QVERIFY2(error.contains(QStringLiteral("is not valid JSON")), qPrintable(error));
    QVERIFY(quire::hub::read_download_records(data.filePath(QStringLiteral("none.json")), &error)
                .isEmpty());
  }

  void oneDownloadRunsAtATimeAndEachEndsInTheCache() {
    QueueFixture fixture;
    QVERIFY(fixture.start());
    auto queue = fixture.queue();
    const FakeRepo repo = two_size_repo();
    QSignalSpy downloaded(queue.get(), &DownloadQueue::downloaded);
    const QString first = queue->add(repo.id, quantization_of(repo, 0));
    const QString second = queue->add(repo.id, quantization_of(repo, 1));
    QCOMPARE(first, QStringLiteral("org/queued@3.0bpw"));
    QCOMPARE(state_of(*queue, first), QueuedDownload::State::Running);
    QCOMPARE(state_of(*queue, second), QueuedDownload::State::Queued);
    // Asking again for the same one does not queue it twice.
    QCOMPARE(queue->add(repo.id, quantization_of(repo, 0)), first);
    QCOMPARE(queue->downloads().size(), 2);

    QTRY_COMPARE_WITH_TIMEOUT(downloaded.size(), 2, 20'000);
    QCOMPARE(downloaded[0][0].toString(), first);
    QCOMPARE(downloaded[1][0].toString(), second);
    const QString folder = downloaded[1][1].toString();
    QCOMPARE(folder, QDir(fixture.cache.path())
                         .filePath(QStringLiteral("models--org--queued/snapshots/") +
                                   hub_test::commit_of("b4")));
    QCOMPARE(hub_test::read_file(QDir(folder).filePath(QStringLiteral("model.safetensors"))),
             repo.branches[1].files[1].content);
    // The branch it was chosen on names its commit, as Python's tools write it.
    QCOMPARE(hub_test::read_file(
                 fixture.cache.filePath(QStringLiteral("models--org--queued/refs/4.0bpw"))),
             hub_test::commit_of("b4").toLatin1());
    // Nothing unfinished is left to restore.
    QString error;
    QVERIFY(quire::hub::read_download_records(fixture.recordsFile(), &error).isEmpty());
  }

  void aPausedDownloadComesBackAfterARestartAndResumes() {
    QueueFixture fixture;
    QVERIFY(fixture.start());
    const FakeRepo repo = two_size_repo();
    const Quantization wanted = quantization_of(repo, 1);
    // The weights fall silent after 200 KiB: the test pauses it there.
    fixture.hub.faults().stalls = 1;
    fixture.hub.faults().stall_after = 200 * 1024;
    QString id;
    {
      auto queue = fixture.queue();
      id = queue->add(repo.id, wanted);
      QTRY_VERIFY_WITH_TIMEOUT(QFileInfo(fixture.partialOf(wanted)).size() == 200 * 1024, 20'000);
      QTRY_COMPARE_WITH_TIMEOUT(queue->find(id)->record.bytes_done,
                                qint64(200 * 1024 + repo.branches[1].files[0].content.size()),
                                10'000);
      queue->pause(id);
      QCOMPARE(state_of(*queue, id), QueuedDownload::State::Paused);
      QVERIFY(QFile::exists(fixture.partialOf(wanted)));
    }  // the program quits

    auto queue = fixture.queue();
    QCOMPARE(queue->restore(), QString());
    QCOMPARE(queue->downloads().size(), 1);
    const QueuedDownload& restored = queue->downloads().front();
    QCOMPARE(restored.state, QueuedDownload::State::Paused);
    QCOMPARE(restored.record.title, QStringLiteral("org/queued 4.0bpw"));
    QCOMPARE(restored.record.bytes_total, wanted.bytes);
    QVERIFY(restored.record.bytes_done >= 200 * 1024);

    const int file_requests_before = fixture.hub.fileHostRequests();
    QSignalSpy downloaded(queue.get(), &DownloadQueue::downloaded);
    queue->resume(id);
    QTRY_COMPARE_WITH_TIMEOUT(downloaded.size(), 1, 20'000);
    const QString folder = downloaded[0][1].toString();
    QCOMPARE(hub_test::read_file(QDir(folder).filePath(QStringLiteral("model.safetensors"))),
             repo.branches[1].files[1].content);
    // It went on from where it stopped: one ranged request for the rest.
    QCOMPARE(fixture.hub.fileHostRequests() - file_requests_before, 1);
    const quire::test::SeenRequest& last = fixture.hub.requests().back();
    QCOMPARE(last.headers.value("range"), QByteArray("bytes=204800-"));
  }

  void cancelRemovesThePartialFiles() {
    QueueFixture fixture;
    QVERIFY(fixture.start());
    const FakeRepo repo = two_size_repo();
    const Quantization wanted = quantization_of(repo, 0);
    fixture.hub.faults().stalls = 1;
    fixture.hub.faults().stall_after = 100 * 1024;
    auto queue = fixture.queue();
    const QString id = queue->add(repo.id, wanted);
    QTRY_VERIFY_WITH_TIMEOUT(QFileInfo(fixture.partialOf(wanted)).size() == 100 * 1024, 20'000);
    queue->pause(id);
    QVERIFY(QFile::exists(fixture.partialOf(wanted)));
    // Cancelled while paused: nothing of it runs, its partial file goes.
    queue->cancel(id);
    QVERIFY(!QFile::exists(fixture.partialOf(wanted)));
    QVERIFY(queue->downloads().isEmpty());
    QString error;
    QVERIFY(quire::hub::read_download_records(fixture.recordsFile(), &error).isEmpty());
  }
};

QUIRE_TEST(HubDownloadQueueTest)
#include "test_hub_download_queue.moc"
