// quire-cli --cache-device: the whole KV cache on one of the selected
// devices, named by the plan, refused when no such device is selected, and
// the same logits as the cache spread over the layers' devices.

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

QJsonObject plan_of(const Run& run) {
  return QJsonDocument::fromJson(run.out).object()[u"plan"].toObject();
}

}  // namespace

class CacheDeviceOptionTest : public QObject {
  Q_OBJECT

  QTemporaryDir root_;
  QString model_;

  Run inspect(const QStringList& more) {
    return run_cli(QStringList{QStringLiteral("inspect"), model_, QStringLiteral("--devices"),
                               QStringLiteral("cpu:3x64MiB"), QStringLiteral("--context"),
                               QStringLiteral("512")} +
                   more);
  }

  Run logits(const QStringList& more) {
    return run_cli(QStringList{QStringLiteral("logits"), model_, QStringLiteral("--tokens"),
                               QStringLiteral("1,5,9,200,7,31,64,2"), QStringLiteral("--all"),
                               QStringLiteral("--devices"), QStringLiteral("cpu:3x64MiB"),
                               QStringLiteral("--split"), QStringLiteral("balanced")} +
                   more);
  }

 private slots:
  void initTestCase() {
    model_ = root_.filePath(QStringLiteral("model"));
    QCOMPARE(run_cli({QStringLiteral("make-model"), model_, QStringLiteral("--arch"),
                      QStringLiteral("llama"), QStringLiteral("--format"), QStringLiteral("fp16")})
                 .exit_code,
             0);
  }

  void thePlanPutsTheWholeCacheOnTheChosenDevice() {
    const Run spread =
        inspect({QStringLiteral("--json"), QStringLiteral("--split"), QStringLiteral("balanced")});
    QCOMPARE(spread.exit_code, 0);
    const QJsonObject default_plan = plan_of(spread);
    QVERIFY(default_plan[u"cache_device"].isNull());
    qint64 cache = 0;
    for (const QJsonValue device : default_plan[u"devices"].toArray())
      cache += device.toObject()[u"cache"].toInteger();
    QVERIFY(cache > 0);

    const Run fixed =
        inspect({QStringLiteral("--json"), QStringLiteral("--split"), QStringLiteral("balanced"),
                 QStringLiteral("--cache-device"), QStringLiteral("1")});
    QCOMPARE(fixed.exit_code, 0);
    const QJsonObject plan = plan_of(fixed);
    QCOMPARE(plan[u"cache_device"].toInt(-1), 1);
    const QJsonArray devices = plan[u"devices"].toArray();
    QCOMPARE(devices.size(), 3);
    QCOMPARE(devices[0].toObject()[u"cache"].toInteger(), qint64(0));
    QCOMPARE(devices[1].toObject()[u"cache"].toInteger(), cache);
    QCOMPARE(devices[2].toObject()[u"cache"].toInteger(), qint64(0));

    const Run text = inspect({QStringLiteral("--cache-device"), QStringLiteral("2")});
    QCOMPARE(text.exit_code, 0);
    QVERIFY2(text.out.contains("  KV cache on device 2 (fixed): every attention layer's pages"),
             text.out.constData());
  }

  void aPositionBeyondTheDevicesIsRefused() {
    const Run run = inspect({QStringLiteral("--cache-device"), QStringLiteral("3")});
    QCOMPARE(run.exit_code, 2);
    QVERIFY2(run.err.contains(QStringLiteral("--cache-device 3: --devices cpu:3x64MiB selects 3 "
                                             "devices; give a position from 0 to 2")),
             qPrintable(run.err));
    const Run negative = inspect({QStringLiteral("--cache-device"), QStringLiteral("-1")});
    QCOMPARE(negative.exit_code, 2);
    QVERIFY2(negative.err.contains(QStringLiteral("--cache-device")), qPrintable(negative.err));
  }

  void theLogitsDoNotDependOnWhereTheCacheIs() {
    const Run spread = logits({});
    QCOMPARE(spread.exit_code, 0);
    for (const QString& device : {QStringLiteral("0"), QStringLiteral("2")}) {
      const Run fixed = logits({QStringLiteral("--cache-device"), device});
      QCOMPARE(fixed.exit_code, 0);
      QVERIFY(!fixed.out.isEmpty());
      QCOMPARE(fixed.out, spread.out);
    }
  }
};

QUIRE_TEST(CacheDeviceOptionTest)
#include "test_cache_device_option.moc"
