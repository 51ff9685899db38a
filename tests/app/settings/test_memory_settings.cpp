// The memory choices among the stored settings: reserves per device, where
// the cache lives, and how a file written before them reads.

#include <QFile>
#include <QSettings>
#include <QTemporaryDir>
#include <QTest>

#include "quire/app/app_settings.h"
#include "test_main.h"

using quire::app::AppSettings;
using quire::app::SettingsProblem;

class MemorySettingsTest : public QObject {
  Q_OBJECT

  QTemporaryDir dir_;
  int files_ = 0;
  QString path_;

  void write(const QString& key, const QVariant& value) {
    QSettings file(path_, QSettings::IniFormat);
    file.setValue(key, value);
  }

 private slots:
  void init() { path_ = dir_.filePath(QStringLiteral("memory-%1.conf").arg(++files_)); }

  void theSingleReserveOfAnOlderFileKeepsEveryDevice() {
    write(QStringLiteral("engine/reserve_mib"), QStringLiteral("512"));
    AppSettings read(path_);
    QCOMPARE(read.load(), QList<SettingsProblem>());
    QCOMPARE(read.engine.reserve_mib, 512.0);
    QCOMPARE(read.engine.device_reserve_mib, QList<double>());
  }

  void reservesPerDeviceRoundTrip() {
    AppSettings written(path_);
    written.engine.reserve_mib = 300;
    written.engine.device_reserve_mib = {-1, 1536, 0};
    QVERIFY(written.save());
    AppSettings read(path_);
    QCOMPARE(read.load(), QList<SettingsProblem>());
    QCOMPARE(read.engine.reserve_mib, 300.0);
    QCOMPARE(read.engine.device_reserve_mib, (QList<double>{-1, 1536, 0}));
    QVERIFY(read == written);
  }

  void aDeviceWithoutItsOwnReserveIsAnEmptyPlace() {
    AppSettings written(path_);
    written.engine.device_reserve_mib = {-1, 1024};
    QVERIFY(written.save());
    QFile file(path_);
    QVERIFY(file.open(QIODevice::ReadOnly));
    const QByteArray text = file.readAll();
    QVERIFY2(text.contains("device_reserve_mib=\", 1024\""), text.constData());
  }

  void aFreshStoreSharesAnEighthOfTheFreeMemory() {
    AppSettings fresh(path_);
    // 24 GiB free: an eighth is 3072 MiB.
    fresh.setFreeMemorySource([] { return qint64{24} << 30; });
    QCOMPARE(fresh.load(), QList<SettingsProblem>());
    QCOMPARE(fresh.engine.host_cache_mib, 3072);
    // Saved, it is the user's figure from then on, whatever is free later.
    QVERIFY(fresh.save());
    AppSettings later(path_);
    later.setFreeMemorySource([] { return qint64{8} << 30; });
    QVERIFY(later.load().isEmpty());
    QCOMPARE(later.engine.host_cache_mib, 3072);
  }

  void theShareIsCappedAndInWholeMebibytes() {
    QCOMPARE(quire::app::host_cache_default_mib(qint64{256} << 30), 4096);
    QCOMPARE(quire::app::host_cache_default_mib((qint64{1} << 30) + 12345), 128);
    QCOMPARE(quire::app::host_cache_default_mib(0), 0);
  }

  void anExplicitZeroStaysZero() {
    write(QStringLiteral("engine/host_cache_mib"), QStringLiteral("0"));
    AppSettings read(path_);
    read.setFreeMemorySource([] { return qint64{24} << 30; });
    QVERIFY(read.load().isEmpty());
    QCOMPARE(read.engine.host_cache_mib, 0);
  }

  void aReserveOutOfRangeIsReported() {
    write(QStringLiteral("engine/device_reserve_mib"), QStringLiteral("100, -3"));
    AppSettings read(path_);
    const QList<SettingsProblem> problems = read.load();
    QCOMPARE(problems.size(), 1);
    QCOMPARE(problems.at(0).key, QStringLiteral("engine/device_reserve_mib"));
    QCOMPARE(problems.at(0).reason, QStringLiteral("holds a value that is outside 0 to 65536"));
    QCOMPARE(read.engine.device_reserve_mib, QList<double>());
  }

  void whereTheCacheLivesRoundTrips() {
    AppSettings written(path_);
    written.engine.cache_residence = QStringLiteral("offloaded");
    written.engine.cache_device = 1;
    QVERIFY(written.save());
    QFile file(path_);
    QVERIFY(file.open(QIODevice::ReadOnly));
    const QByteArray text = file.readAll();
    QVERIFY2(text.contains("cache_residence=offloaded\n"), text.constData());
    QVERIFY2(text.contains("cache_device=1\n"), text.constData());
    AppSettings read(path_);
    QCOMPARE(read.load(), QList<SettingsProblem>());
    QCOMPARE(read.engine.cache_residence, QStringLiteral("offloaded"));
    QCOMPARE(read.engine.cache_device, 1);
    QVERIFY(read == written);
  }

  void aFileFromBeforeKeepsTheCacheOnTheLayersDevices() {
    write(QStringLiteral("engine/reserve_pages"), QStringLiteral("all"));
    AppSettings read(path_);
    QCOMPARE(read.load(), QList<SettingsProblem>());
    QCOMPARE(read.engine.cache_residence, QStringLiteral("device"));
    QCOMPARE(read.engine.cache_device, -1);
  }

  void aResidenceThatIsNoneOfTheChoicesIsRefused() {
    write(QStringLiteral("engine/cache_residence"), QStringLiteral("swap"));
    AppSettings read(path_);
    const QList<SettingsProblem> problems = read.load();
    QCOMPARE(problems.size(), 1);
    QCOMPARE(problems.at(0).text(),
             QStringLiteral("engine/cache_residence: \"swap\" is not one of device, offloaded, "
                            "offload-global; using the default"));
    QCOMPARE(read.engine.cache_residence, QStringLiteral("device"));
  }

  void aCacheDeviceThatIsNoDeviceIsRefused_data() {
    QTest::addColumn<QString>("stored");
    QTest::newRow("text") << QStringLiteral("gpu1");
    QTest::newRow("below -1") << QStringLiteral("-2");
    QTest::newRow("past the last index") << QStringLiteral("64");
  }

  void aCacheDeviceThatIsNoDeviceIsRefused() {
    QFETCH(QString, stored);
    write(QStringLiteral("engine/cache_device"), stored);
    AppSettings read(path_);
    const QList<SettingsProblem> problems = read.load();
    QCOMPARE(problems.size(), 1);
    QCOMPARE(problems.at(0).text(),
             QStringLiteral("engine/cache_device: \"%1\" is not a device number from 0 to 63, "
                            "or -1 for the device of each layer; using the default")
                 .arg(stored));
    QCOMPARE(read.engine.cache_device, -1);
  }
};

QUIRE_TEST(MemorySettingsTest)
#include "test_memory_settings.moc"
