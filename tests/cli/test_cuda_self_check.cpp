// The CUDA backend's self-check in quire-cli. `devices --check` where the
// CUDA backend cannot run (forced with a QUIRE_CUDA_LIBRARY that does not
// exist): the listing, one line on standard error saying why, exit status 2.
// With a fake CUDA backend library (the CPU backend under the name "cuda",
// its linear layers 10% wrong with QUIRE_FAKE_CUDA_SCALE=1.1): `--devices
// auto` runs on the CPU and says why in one line naming the log, `--devices
// cuda` is refused with the way to override, QUIRE_SKIP_CUDA_SELF_CHECK=1
// overrides, and `devices` reports the outcome, which a new driver redoes.
// Every run keeps its cache folder (XDG_CACHE_HOME) in a temporary directory.

#include <QDir>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>
#include <QTest>

#include "cli_run.h"
#include "test_main.h"

namespace {

using cli_test::Run;
using cli_test::run_cli;

QString message(const Run& run) {
  return QStringLiteral("exit %1, stderr: %2").arg(run.exit_code).arg(run.err);
}

QJsonObject cuda_entry(const Run& run) {
  const QJsonArray backends = QJsonDocument::fromJson(run.out)[u"backends"].toArray();
  return backends.last().toObject();
}

}  // namespace

class CudaSelfCheckTest : public QObject {
  Q_OBJECT

  QTemporaryDir root_;
  QString model_;
  std::unique_ptr<QTemporaryDir> cache_;

  QString log_path() const { return cache_->filePath(QStringLiteral("Quire/cuda-self-check.log")); }
  QStringList logits(const QString& devices) const {
    return {QStringLiteral("logits"),    model_,
            QStringLiteral("--tokens"),  QStringLiteral("1,5,9"),
            QStringLiteral("--devices"), devices};
  }

 private slots:
  void initTestCase() {
    model_ = root_.filePath(QStringLiteral("fp16"));
    const Run made = run_cli({QStringLiteral("make-model"), model_});
    QVERIFY2(made.exit_code == 0, qPrintable(made.err));
  }
  void init() {
    cache_ = std::make_unique<QTemporaryDir>();
    qputenv("XDG_CACHE_HOME", cache_->path().toUtf8());
    qputenv("QUIRE_CUDA_LIBRARY", QUIRE_FAKE_CUDA_LIBRARY);
  }
  void cleanup() {
    for (const char* name : {"XDG_CACHE_HOME", "QUIRE_CUDA_LIBRARY", "QUIRE_FAKE_CUDA_SCALE",
                             "QUIRE_FAKE_CUDA_VERSION", "QUIRE_SKIP_CUDA_SELF_CHECK"}) {
      qunsetenv(name);
    }
  }

  void checkWithoutACudaBackendSaysItCannotRun() {
    qputenv("QUIRE_CUDA_LIBRARY", "/nonexistent/quire/libquire_cuda.so");
    const Run run = run_cli({QStringLiteral("devices"), QStringLiteral("--check")});
    QVERIFY2(run.exit_code == 2, qPrintable(message(run)));
    QCOMPARE(run.err.count(u'\n'), 1);
    QVERIFY2(run.err.startsWith(QStringLiteral(
                 "quire-cli: the CUDA backend cannot run, so it cannot be checked: ")),
             qPrintable(run.err));
    QVERIFY2(run.err.contains(QStringLiteral("/nonexistent/quire/libquire_cuda.so")),
             qPrintable(run.err));
    // The listing is there as without --check; nothing was written.
    QVERIFY2(QString::fromUtf8(run.out).contains(QStringLiteral("\ncuda\n  not available: ")),
             qPrintable(QString::fromUtf8(run.out)));
    QVERIFY(!QDir(cache_->filePath(QStringLiteral("Quire"))).exists());

    const Run json =
        run_cli({QStringLiteral("devices"), QStringLiteral("--check"), QStringLiteral("--json")});
    QVERIFY2(json.exit_code == 2, qPrintable(message(json)));
    QVERIFY(!cuda_entry(json)[u"available"].toBool());
    QVERIFY(!cuda_entry(json).contains(u"self_check"));

    const Run cpu = run_cli({QStringLiteral("devices"), QStringLiteral("--check"),
                             QStringLiteral("--devices"), QStringLiteral("cpu")});
    QVERIFY2(cpu.exit_code == 2, qPrintable(message(cpu)));
    QVERIFY2(cpu.err.contains(QStringLiteral("--check checks the CUDA backend")),
             qPrintable(cpu.err));
  }

  void aFaithfulBackendPassesAndIsUsed() {
    const Run before = run_cli({QStringLiteral("devices")});
    QVERIFY2(before.exit_code == 0, qPrintable(message(before)));
    const QString text = QString::fromUtf8(before.out);
    QVERIFY2(text.contains(QStringLiteral("  0  Fake GPU 0 (sm_86): ")), qPrintable(text));
    QVERIFY2(text.contains(QStringLiteral("  self-check against the CPU: not run yet")),
             qPrintable(text));
    QVERIFY2(text.contains(QStringLiteral("  verified so far on: sm_90 (NVIDIA H200, 2026-11-26); "
                                          "sm_86 here is not verified yet")),
             qPrintable(text));

    const Run automatic = run_cli(logits(QStringLiteral("auto")));
    QVERIFY2(automatic.exit_code == 0, qPrintable(message(automatic)));
    QCOMPARE(automatic.err,
             QStringLiteral("quire-cli: running on the CUDA backend (1 device: Fake GPU 0)\n"));
    const Run cpu = run_cli(logits(QStringLiteral("cpu")));
    QCOMPARE(automatic.out, cpu.out);

    const Run after = run_cli({QStringLiteral("devices"), QStringLiteral("--json")});
    const QJsonObject check = cuda_entry(after)[u"self_check"].toObject();
    QCOMPARE(check[u"status"].toString(), QStringLiteral("passed"));
    QVERIFY(!check[u"ran_now"].toBool());
    QVERIFY(!check[u"checked_at"].toString().isEmpty());
    QCOMPARE(check[u"unverified_architectures_here"].toArray(),
             QJsonArray{QStringLiteral("sm_86")});
    QCOMPARE(check[u"verified_architectures"][0][u"architecture"].toString(),
             QStringLiteral("sm_90"));
    QCOMPARE(check[u"log"].toString(), log_path());
  }

  void aWrongBackendIsPassedOverAndTheLineNamesTheLog() {
    qputenv("QUIRE_FAKE_CUDA_SCALE", "1.1");
    const Run automatic = run_cli(logits(QStringLiteral("auto")));
    QVERIFY2(automatic.exit_code == 0, qPrintable(message(automatic)));
    QCOMPARE(automatic.err.count(u'\n'), 1);
    QVERIFY2(
        automatic.err.startsWith(QStringLiteral(
            "quire-cli: running on the CPU backend; the CUDA backend failed its self-check "
            "against the CPU: device 0 (Fake GPU 0, sm_86): logits differ from the CPU's by ")),
        qPrintable(automatic.err));
    QVERIFY2(automatic.err.endsWith(QStringLiteral("; details in ") + log_path() + u'\n'),
             qPrintable(automatic.err));
    // The CPU's answer, not the wrong one.
    QCOMPARE(automatic.out, run_cli(logits(QStringLiteral("cpu"))).out);
    QFile log(log_path());
    QVERIFY(log.open(QIODevice::ReadOnly));
    const QString details = QString::fromUtf8(log.readAll());
    QVERIFY2(details.contains(QStringLiteral("result: failed: device 0 (Fake GPU 0, sm_86)")),
             qPrintable(details));
    QVERIFY2(details.contains(QStringLiteral("backend version: fake runtime 1.0, driver 1.0")),
             qPrintable(details));

    const Run explicit_cuda = run_cli(logits(QStringLiteral("cuda")));
    QVERIFY2(explicit_cuda.exit_code == 2, qPrintable(message(explicit_cuda)));
    QVERIFY(explicit_cuda.out.isEmpty());
    QCOMPARE(explicit_cuda.err.count(u'\n'), 1);
    QVERIFY2(explicit_cuda.err.startsWith(QStringLiteral(
                 "quire-cli: --devices cuda: the CUDA backend failed its self-check against the "
                 "CPU on ")),
             qPrintable(explicit_cuda.err));
    QVERIFY2(explicit_cuda.err.contains(QStringLiteral("details in ") + log_path()),
             qPrintable(explicit_cuda.err));
    QVERIFY2(explicit_cuda.err.endsWith(
                 QStringLiteral("use --devices cpu to run on the CPU, or set "
                                "QUIRE_SKIP_CUDA_SELF_CHECK=1 to use the CUDA backend anyway\n")),
             qPrintable(explicit_cuda.err));

    qputenv("QUIRE_SKIP_CUDA_SELF_CHECK", "1");
    const Run skipped = run_cli(logits(QStringLiteral("cuda")));
    QVERIFY2(skipped.exit_code == 0, qPrintable(message(skipped)));
    QVERIFY(skipped.out != automatic.out);  // the fake's wrong logits, as asked
    qunsetenv("QUIRE_SKIP_CUDA_SELF_CHECK");

    const Run listed = run_cli({QStringLiteral("devices")});
    QVERIFY2(QString::fromUtf8(listed.out)
                 .contains(QStringLiteral("  self-check against the CPU: failed on ")),
             qPrintable(QString::fromUtf8(listed.out)));
  }

  void checkOnDemandRedoesAndUpdatesTheOutcome() {
    qputenv("QUIRE_FAKE_CUDA_SCALE", "1.1");
    const Run failed =
        run_cli({QStringLiteral("devices"), QStringLiteral("--check"), QStringLiteral("--json")});
    QCOMPARE(failed.exit_code, 1);
    QJsonObject check = cuda_entry(failed)[u"self_check"].toObject();
    QCOMPARE(check[u"status"].toString(), QStringLiteral("failed"));
    QVERIFY(check[u"ran_now"].toBool());
    QVERIFY2(check[u"summary"].toString().contains(QStringLiteral("(tolerance 0.01)")),
             qPrintable(check[u"summary"].toString()));

    // The same driver: the failure is remembered, even once the fault is gone.
    qunsetenv("QUIRE_FAKE_CUDA_SCALE");
    QVERIFY(run_cli(logits(QStringLiteral("cuda"))).exit_code == 2);
    // Checked again on demand, it passes, and is used from then on.
    const Run passed = run_cli({QStringLiteral("devices"), QStringLiteral("--check")});
    QVERIFY2(passed.exit_code == 0, qPrintable(message(passed)));
    QVERIFY2(QString::fromUtf8(passed.out)
                 .contains(QStringLiteral("  self-check against the CPU: passed now: agrees with "
                                          "the CPU on 1 device")),
             qPrintable(QString::fromUtf8(passed.out)));
    QVERIFY(run_cli(logits(QStringLiteral("cuda"))).exit_code == 0);

    // A driver update checks again by itself.
    qputenv("QUIRE_FAKE_CUDA_SCALE", "1.1");
    qputenv("QUIRE_FAKE_CUDA_VERSION", "fake runtime 1.0, driver 2.0");
    const Run updated = run_cli(logits(QStringLiteral("cuda")));
    QVERIFY2(updated.exit_code == 2, qPrintable(message(updated)));
    QVERIFY2(updated.err.contains(QStringLiteral("failed its self-check against the CPU: ")),
             qPrintable(updated.err));
  }

  void aDamagedRecordIsCheckedAgain() {
    QVERIFY(QDir(cache_->path()).mkpath(QStringLiteral("Quire")));
    QFile record(cache_->filePath(QStringLiteral("Quire/cuda-self-check.json")));
    QVERIFY(record.open(QIODevice::WriteOnly));
    record.write("{\"format\": 1, \"checks\": [{");
    record.close();
    const Run run = run_cli(logits(QStringLiteral("cuda")));
    QVERIFY2(run.exit_code == 0, qPrintable(message(run)));
    QVERIFY(record.open(QIODevice::ReadOnly));
    const QJsonObject written = QJsonDocument::fromJson(record.readAll()).object();
    QCOMPARE(written[u"checks"][0][u"passed"].toBool(), true);
  }
};

QUIRE_TEST(CudaSelfCheckTest)
#include "test_cuda_self_check.moc"
