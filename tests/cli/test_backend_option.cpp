// --devices cuda, cuda:... and auto on a machine where the CUDA backend cannot
// run (forced here with a QUIRE_CUDA_LIBRARY that does not exist, so that the
// answers are the same on machines with a GPU): a clear error and exit status
// 2 for cuda, and for auto the CPU's output with one line on standard error
// saying why.

#include <QFileInfo>
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

constexpr const char* kMissingLibrary = "/nonexistent/quire/libquire_cuda.so";

// The kernel module publishes this file once the NVIDIA driver is loaded.
bool nvidia_driver_loaded() {
  return QFileInfo::exists(QStringLiteral("/proc/driver/nvidia/version"));
}

QString message(const Run& run) {
  return QStringLiteral("exit %1, stderr: %2").arg(run.exit_code).arg(run.err);
}

}  // namespace

class BackendOptionTest : public QObject {
  Q_OBJECT

  QTemporaryDir root_;
  QString model_;

  QStringList logits(const QString& devices) const {
    return {QStringLiteral("logits"),
            model_,
            QStringLiteral("--tokens"),
            QStringLiteral("1,5,9,200,7"),
            QStringLiteral("--all"),
            QStringLiteral("--devices"),
            devices};
  }
  QStringList generate(const QString& devices) const {
    return {QStringLiteral("generate"),
            model_,
            QStringLiteral("--tokens"),
            QStringLiteral("1,17,42"),
            QStringLiteral("--greedy"),
            QStringLiteral("--ignore-eos"),
            QStringLiteral("--max-new"),
            QStringLiteral("8"),
            QStringLiteral("--json"),
            QStringLiteral("--devices"),
            devices};
  }

 private slots:
  void initTestCase() {
    model_ = root_.filePath(QStringLiteral("fp16"));
    const Run made = run_cli(
        {QStringLiteral("make-model"), model_, QStringLiteral("--seed"), QStringLiteral("11")});
    QVERIFY2(made.exit_code == 0, qPrintable(made.err));
  }
  void init() { qputenv("QUIRE_CUDA_LIBRARY", kMissingLibrary); }
  void cleanup() { qunsetenv("QUIRE_CUDA_LIBRARY"); }

  void cudaThatCannotRunIsAnErrorThatSaysWhy() {
    for (const QString& devices : {QStringLiteral("cuda"), QStringLiteral("cuda:0:2x1GiB")}) {
      const Run run = run_cli(logits(devices));
      QVERIFY2(run.exit_code == 2, qPrintable(message(run)));
      QVERIFY(run.out.isEmpty());
      QCOMPARE(run.err.count(u'\n'), 1);
      QVERIFY2(run.err.contains(QStringLiteral("the CUDA backend cannot run")),
               qPrintable(run.err));
      // The loader's own reason, and what to do instead.
      QVERIFY2(run.err.contains(QString::fromLatin1(kMissingLibrary)), qPrintable(run.err));
      QVERIFY2(run.err.contains(QStringLiteral("use --devices cpu")), qPrintable(run.err));
    }
  }

  void cudaOnThisMachineSaysWhyWhenItCannotRun() {
    qunsetenv("QUIRE_CUDA_LIBRARY");
    if (QUIRE_TEST_HAVE_CUDA && nvidia_driver_loaded()) QSKIP("this machine can run CUDA");
    const Run run = run_cli(logits(QStringLiteral("cuda")));
    QVERIFY2(run.exit_code == 2, qPrintable(message(run)));
    QVERIFY2(run.err.contains(QStringLiteral("the CUDA backend cannot run: ")) &&
                 run.err.contains(QStringLiteral("use --devices cpu")),
             qPrintable(run.err));
  }

  void aMistakeInTheListIsAUsageError() {
    const Run run = run_cli(logits(QStringLiteral("cuda:0:2x")));
    QVERIFY2(run.exit_code == 2, qPrintable(message(run)));
    QCOMPARE(run.err.count(u'\n'), 1);
    QVERIFY2(run.err.contains(QStringLiteral("needs a budget after the x")), qPrintable(run.err));
    const Run unknown = run_cli(logits(QStringLiteral("gpu")));
    QVERIFY2(unknown.exit_code == 2, qPrintable(message(unknown)));
    QVERIFY2(unknown.err.contains(QStringLiteral("cuda:0:2x20GiB or auto")),
             qPrintable(unknown.err));
  }

  void autoFallsBackToTheCpuAndSaysSo() {
    const QList<QStringList (BackendOptionTest::*)(const QString&) const> commands{
        &BackendOptionTest::logits, &BackendOptionTest::generate};
    for (const auto command : commands) {
      const Run cpu = run_cli((this->*command)(QStringLiteral("cpu")));
      const Run automatic = run_cli((this->*command)(QStringLiteral("auto")));
      QVERIFY2(cpu.exit_code == 0, qPrintable(message(cpu)));
      QVERIFY2(automatic.exit_code == 0, qPrintable(message(automatic)));
      QVERIFY(!cpu.out.isEmpty());
      if (command == &BackendOptionTest::logits) {
        QCOMPARE(automatic.out, cpu.out);
      } else {
        // Generation prints its timing too; the tokens must be the same.
        const QJsonObject a = QJsonDocument::fromJson(automatic.out).object();
        const QJsonObject c = QJsonDocument::fromJson(cpu.out).object();
        QCOMPARE(a[u"tokens"].toArray(), c[u"tokens"].toArray());
        QVERIFY(!c[u"tokens"].toArray().isEmpty());
      }
      QVERIFY2(cpu.err.isEmpty(), qPrintable(cpu.err));
      QCOMPARE(automatic.err.count(u'\n'), 1);
      QVERIFY2(automatic.err.startsWith(
                   QStringLiteral("quire-cli: running on the CPU backend; the CUDA backend "
                                  "cannot run: ")),
               qPrintable(automatic.err));
      QVERIFY2(automatic.err.contains(QString::fromLatin1(kMissingLibrary)),
               qPrintable(automatic.err));
    }
  }

  void devicesListsTheLogicalDevicesOfAList() {
    const Run cpu = run_cli({QStringLiteral("devices"), QStringLiteral("--json"),
                             QStringLiteral("--devices"), QStringLiteral("cpu:2x1GiB")});
    QVERIFY2(cpu.exit_code == 0, qPrintable(message(cpu)));
    const QJsonArray backends = QJsonDocument::fromJson(cpu.out)[u"backends"].toArray();
    QCOMPARE(backends.size(), 1);
    QCOMPARE(backends[0][u"name"].toString(), QStringLiteral("cpu"));
    const QJsonArray devices = backends[0][u"devices"].toArray();
    QCOMPARE(devices.size(), 2);
    QCOMPARE(devices[1][u"total_bytes"].toInteger(), qint64{1} << 30);

    const Run cuda = run_cli({QStringLiteral("devices"), QStringLiteral("--json"),
                              QStringLiteral("--devices"), QStringLiteral("cuda:0:2x1GiB")});
    QVERIFY2(cuda.exit_code == 0, qPrintable(message(cuda)));
    const QJsonArray only = QJsonDocument::fromJson(cuda.out)[u"backends"].toArray();
    QCOMPARE(only.size(), 1);
    QCOMPARE(only[0][u"name"].toString(), QStringLiteral("cuda"));
    QVERIFY(!only[0][u"available"].toBool());
    QVERIFY2(only[0][u"reason"].toString().contains(QString::fromLatin1(kMissingLibrary)),
             qPrintable(only[0][u"reason"].toString()));

    const Run bad =
        run_cli({QStringLiteral("devices"), QStringLiteral("--devices"), QStringLiteral("cuda:x")});
    QVERIFY2(bad.exit_code == 2, qPrintable(message(bad)));
    QVERIFY2(bad.err.contains(QStringLiteral("is not a GPU index")), qPrintable(bad.err));
  }
};

QUIRE_TEST(BackendOptionTest)
#include "test_backend_option.moc"
