// quire-cli's memory choices: reserves per device, the cache's reservation
// policy, and fitting a plan that does not fit.

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

constexpr qint64 kMiB = 1024 * 1024;

QJsonArray plan_devices(const Run& run) {
  return QJsonDocument::fromJson(run.out).object()[u"plan"].toObject()[u"devices"].toArray();
}

}  // namespace

class MemoryOptionsTest : public QObject {
  Q_OBJECT

  QTemporaryDir root_;
  QString model_;
  QString fitting_;  // a context long enough for caches that do not fit

  Run inspect(const QStringList& more) {
    return run_cli(QStringList{QStringLiteral("inspect"), model_, QStringLiteral("--json"),
                               QStringLiteral("--devices"), QStringLiteral("cpu:2x64MiB")} +
                   more);
  }

 private slots:
  void initTestCase() {
    model_ = root_.filePath(QStringLiteral("model"));
    QCOMPARE(run_cli({QStringLiteral("make-model"), model_, QStringLiteral("--arch"),
                      QStringLiteral("llama"), QStringLiteral("--format"), QStringLiteral("fp16")})
                 .exit_code,
             0);
    fitting_ = root_.filePath(QStringLiteral("fitting"));
    QCOMPARE(run_cli({QStringLiteral("make-model"), fitting_,
                      QStringLiteral("--max-position-embeddings"), QStringLiteral("65536")})
                 .exit_code,
             0);
  }

  void oneReserveIsKeptOnEveryDevice() {
    const Run run = inspect({QStringLiteral("--reserve"), QStringLiteral("3")});
    QCOMPARE(run.exit_code, 0);
    const QJsonArray devices = plan_devices(run);
    QCOMPARE(devices.size(), 2);
    QCOMPARE(devices[0].toObject()[u"reserve"].toInteger(), 3 * kMiB);
    QCOMPARE(devices[1].toObject()[u"reserve"].toInteger(), 3 * kMiB);
  }

  void reservesPerDeviceInOrder() {
    const Run run = inspect({QStringLiteral("--reserve"), QStringLiteral("2,5.5")});
    QCOMPARE(run.exit_code, 0);
    const QJsonArray devices = plan_devices(run);
    QCOMPARE(devices.size(), 2);
    QCOMPARE(devices[0].toObject()[u"reserve"].toInteger(), 2 * kMiB);
    QCOMPARE(devices[1].toObject()[u"reserve"].toInteger(), 5 * kMiB + kMiB / 2);
  }

  void aReserveCountThatDisagreesWithTheDevicesIsRefused() {
    const Run run = inspect({QStringLiteral("--reserve"), QStringLiteral("1,2,3")});
    QCOMPARE(run.exit_code, 2);
    QVERIFY2(run.err.contains(QStringLiteral(
                 "--reserve gives 3 values but --devices cpu:2x64MiB selects 2 devices")),
             qPrintable(run.err));
  }

  // The fitting model: 722,176 bytes of weights and 3,153,984 of scratch
  // (the head's buffers for 256 rows of logits among them) leave 3,463,872
  // bytes of cache on a 9 MiB device that keeps 2 MiB free: FP16 (512 bytes
  // a token) holds 26 pages, Q8 (272) 49, Q4 (144) 93. The reserve covers
  // what the run allocates beyond the plan's figures (the backend's own
  // workspaces). Without the residual window, whose FP16 pages a coded cache
  // brings (and --fit prices: with its default 4 slots Q8 no longer fits
  // here and Q6 would be chosen).
  void fitUsesASmallerFormatWhenTheWholeCacheThenFits() {
    const QStringList arguments{QStringLiteral("generate"),          fitting_,
                                QStringLiteral("--prompt"),          QStringLiteral("hi"),
                                QStringLiteral("--max-new"),         QStringLiteral("2"),
                                QStringLiteral("--devices"),         QStringLiteral("cpu:9MiB"),
                                QStringLiteral("--reserve"),         QStringLiteral("2"),
                                QStringLiteral("--context"),         QStringLiteral("12288"),
                                QStringLiteral("--residual-window"), QStringLiteral("0")};
    const Run refused = run_cli(arguments);
    QCOMPARE(refused.exit_code, 2);
    QVERIFY2(refused.err.contains(QStringLiteral(
                 "; --fit would use: cache stored as q8 instead of fp16 (about 1% less exact)\n")),
             qPrintable(refused.err));

    const Run fitted = run_cli(arguments + QStringList{QStringLiteral("--fit")});
    QCOMPARE(fitted.exit_code, 0);
    QVERIFY2(fitted.err.contains(QStringLiteral(
                 "quire-cli: --fit: cache stored as q8 instead of fp16 (about 1% less exact)\n")),
             qPrintable(fitted.err));
  }

  void fitShrinksTheCacheWhenNoFormatHoldsIt() {
    const Run fitted = run_cli(
        {QStringLiteral("generate"), fitting_, QStringLiteral("--prompt"), QStringLiteral("hi"),
         QStringLiteral("--max-new"), QStringLiteral("2"), QStringLiteral("--devices"),
         QStringLiteral("cpu:9MiB"), QStringLiteral("--reserve"), QStringLiteral("2"),
         QStringLiteral("--context"), QStringLiteral("65536"), QStringLiteral("--fit")});
    QCOMPARE(fitted.exit_code, 0);
    QVERIFY2(fitted.err.contains(
                 QStringLiteral("quire-cli: --fit: cache reduced from 65,536 to 6,656 tokens\n")),
             qPrintable(fitted.err));
  }

  void aReserveThatIsNotANumberIsRefused() {
    const Run run = inspect({QStringLiteral("--reserve"), QStringLiteral("1,lots")});
    QCOMPARE(run.exit_code, 2);
    QVERIFY2(run.err.contains(QStringLiteral("--reserve: \"lots\" is not a number of MiB")),
             qPrintable(run.err));
  }
};

QUIRE_TEST(MemoryOptionsTest)
#include "test_memory_options.moc"
