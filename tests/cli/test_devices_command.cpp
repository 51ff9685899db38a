// quire-cli devices: the CPU backend's devices always, and the CUDA backend's
// devices or the reason it cannot run; exit status 0 either way.

#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTest>

#include "cli_run.h"
#include "test_main.h"

namespace {

using cli_test::Run;
using cli_test::run_cli;

// The kernel module publishes this file once the NVIDIA driver is loaded.
bool nvidia_driver_loaded() {
  return QFileInfo::exists(QStringLiteral("/proc/driver/nvidia/version"));
}

}  // namespace

class DevicesCommandTest : public QObject {
  Q_OBJECT

 private slots:
  void listsTheCpuAndTheCudaBackendOrWhyNot() {
    const Run run = run_cli({QStringLiteral("devices"), QStringLiteral("--json")});
    QVERIFY2(run.exit_code == 0, qPrintable(run.err));
    const QJsonArray backends = QJsonDocument::fromJson(run.out)[u"backends"].toArray();
    QCOMPARE(backends.size(), 2);

    const QJsonObject cpu = backends[0].toObject();
    QCOMPARE(cpu[u"name"].toString(), QStringLiteral("cpu"));
    QVERIFY(cpu[u"available"].toBool());
    const QJsonArray cpu_devices = cpu[u"devices"].toArray();
    QVERIFY(!cpu_devices.isEmpty());
    QVERIFY(cpu_devices[0][u"total_bytes"].toInteger() > 0);

    const QJsonObject cuda = backends[1].toObject();
    QCOMPARE(cuda[u"name"].toString(), QStringLiteral("cuda"));
    if (QUIRE_TEST_HAVE_CUDA && nvidia_driver_loaded()) {
      QVERIFY2(cuda[u"available"].toBool(), qPrintable(cuda[u"reason"].toString()));
      const QJsonArray gpus = cuda[u"devices"].toArray();
      QVERIFY(!gpus.isEmpty());
      QVERIFY(!gpus[0][u"name"].toString().isEmpty());
      QVERIFY(gpus[0][u"total_bytes"].toInteger() > 0);
    } else {
      QVERIFY(!cuda[u"available"].toBool());
      QVERIFY(!cuda[u"reason"].toString().isEmpty());
      QVERIFY(!cuda.contains(u"devices"));
    }
  }

  void textNamesEachBackend() {
    const Run run = run_cli({QStringLiteral("devices")});
    QVERIFY2(run.exit_code == 0, qPrintable(run.err));
    const QString text = QString::fromUtf8(run.out);
    QVERIFY2(text.startsWith(QStringLiteral("cpu\n  0  ")), qPrintable(text));
    QVERIFY2(text.contains(QStringLiteral("\ncuda\n  ")), qPrintable(text));
    if (!QUIRE_TEST_HAVE_CUDA || !nvidia_driver_loaded()) {
      QVERIFY2(text.contains(QStringLiteral("  not available: ")), qPrintable(text));
    }
  }
};

QUIRE_TEST(DevicesCommandTest)
#include "test_devices_command.moc"
