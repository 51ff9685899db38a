// The rules that keep the panel from applying settings the engine cannot use.

#include <QLocale>
#include <QTemporaryDir>
#include <QTest>

#include "quire/ui/settings_validation.h"
#include "settings_fixtures.h"
#include "test_main.h"

using quire::ui::EngineSettings;
using quire::ui::SettingsIssue;
using quire::ui::validate_settings;
using Field = SettingsIssue::Field;

class TestSettingsValidation : public QObject {
  Q_OBJECT

 private slots:
  void init() {
    QVERIFY(model_.isValid());
    settings_ = quire::ui::test::sample_settings(model_.path());
  }

  void sampleIsValid() { QVERIFY(validate_settings(settings_, names()).isEmpty()); }

  void missingModelFolder() {
    settings_.model_directory = model_.filePath(QStringLiteral("gone"));
    const QList<SettingsIssue> issues = validate_settings(settings_, names());
    QCOMPARE(issues.size(), 1);
    QCOMPARE(issues.at(0).field, Field::ModelDirectory);
    QCOMPARE(issues.at(0).message, QStringLiteral("There is no folder at this path."));
  }

  void noModelYetIsFine() {
    settings_.model_directory.clear();
    QVERIFY(validate_settings(settings_, names()).isEmpty());
  }

  void manualGbMissingForCheckedDevice() {
    settings_.devices = {0, 1};  // device 0 has no GB in the sample
    const QList<SettingsIssue> issues = validate_settings(settings_, names());
    QCOMPARE(issues.size(), 1);
    QCOMPARE(issues.at(0).field, Field::ManualGb);
    QCOMPARE(issues.at(0).device, 0);
    QCOMPARE(issues.at(0).message,
             QStringLiteral("Enter the GB Quire may use on cuda0: NVIDIA GeForce RTX 4090, or "
                            "leave the device out."));
  }

  void theCacheDeviceMustBeAChosenDevice() {
    settings_.cache_device = 1;  // the sample's one device
    QVERIFY(validate_settings(settings_, names()).isEmpty());
    settings_.cache_device = 0;
    const QList<SettingsIssue> issues = validate_settings(settings_, names());
    QCOMPARE(issues.size(), 1);
    QCOMPARE(issues.at(0).field, Field::CacheDevice);
    QCOMPARE(issues.at(0).device, 0);
    QCOMPARE(issues.at(0).message,
             QStringLiteral("The cache device, cuda0: NVIDIA GeForce RTX 4090, is not among the "
                            "chosen devices: choose it too, or keep the cache with its layers."));
  }

  void theCacheDeviceMustBePresentWhenAllAreUsed() {
    settings_.devices.clear();
    settings_.split = EngineSettings::Split::Fill;
    settings_.cache_device = 2;
    const QList<SettingsIssue> issues = validate_settings(settings_, names());
    QCOMPARE(issues.size(), 1);
    QCOMPARE(issues.at(0).field, Field::CacheDevice);
    QCOMPARE(issues.at(0).message,
             QStringLiteral("The cache device, device 2, is not present on this computer."));
    // Devices not known yet: nothing to check against.
    QVERIFY(validate_settings(settings_, QStringList()).isEmpty());
  }

  void manualGbForEveryDeviceWhenAllAreUsed() {
    settings_.devices.clear();
    settings_.manual_gb = {22};
    const QList<SettingsIssue> issues = validate_settings(settings_, names());
    QCOMPARE(issues.size(), 1);
    QCOMPARE(issues.at(0).device, 1);
    settings_.manual_gb = {22, 20};
    QVERIFY(validate_settings(settings_, names()).isEmpty());
  }

  void manualGbWithUnknownDevices() {
    settings_.devices.clear();
    settings_.manual_gb.clear();
    const QList<SettingsIssue> issues = validate_settings(settings_, {});
    QCOMPARE(issues.size(), 1);
    QCOMPARE(issues.at(0).field, Field::ManualGb);
    QCOMPARE(issues.at(0).device, -1);
    settings_.manual_gb = {0, 3};
    QVERIFY(validate_settings(settings_, {}).isEmpty());
  }

  void manualGbIgnoredInOtherModes() {
    settings_.split = EngineSettings::Split::Balanced;
    settings_.manual_gb.clear();
    QVERIFY(validate_settings(settings_, names()).isEmpty());
  }

  void deviceNotPresent() {
    settings_.split = EngineSettings::Split::Fill;
    settings_.devices = {0, 3};
    const QList<SettingsIssue> issues = validate_settings(settings_, names());
    QCOMPARE(issues.size(), 1);
    QCOMPARE(issues.at(0).field, Field::Devices);
    QCOMPARE(issues.at(0).device, 3);
    QCOMPARE(issues.at(0).message, QStringLiteral("Device 3 is not present on this computer."));
    // Until the backend has named its devices, nothing can be said.
    QVERIFY(validate_settings(settings_, {}).isEmpty());
  }

  void cacheSmallerThanOneContext() {
    settings_.cache_tokens = 8192;
    const QList<SettingsIssue> issues = validate_settings(settings_, names());
    QCOMPARE(issues.size(), 1);
    QCOMPARE(issues.at(0).field, Field::CacheTokens);
    QCOMPARE(issues.at(0).message,
             QStringLiteral("The cache holds %1 tokens, fewer than one full context of %2.")
                 .arg(QLocale().toString(8192), QLocale().toString(16384)));
  }

  // A model that reads 4,096 positions caps the 16,384-token setting there:
  // a cache of 8,192 holds the whole capped context, and the panel must not
  // say otherwise (the demo model's 256 positions against its 4,096-token
  // cache were reported as "fewer than one full context of 8192").
  void theModelsLimitCapsTheContextTheCacheMustHold() {
    settings_.cache_tokens = 8192;
    QVERIFY(validate_settings(settings_, names(), 4096).isEmpty());
    QVERIFY(validate_settings(settings_, names(), 8192).isEmpty());
    const QList<SettingsIssue> issues = validate_settings(settings_, names(), 12288);
    QCOMPARE(issues.size(), 1);
    QCOMPARE(issues.at(0).message,
             QStringLiteral("The cache holds %1 tokens, fewer than one full context of %2.")
                 .arg(QLocale().toString(8192), QLocale().toString(12288)));
  }

 private:
  static QStringList names() { return quire::ui::test::two_gpus(); }

  QTemporaryDir model_;
  EngineSettings settings_;
};

QUIRE_TEST(TestSettingsValidation)
#include "test_settings_validation.moc"
