// The settings panel's memory choices: a reserve per device, how pages are
// reserved, where the cache lives and on which device, the host-memory tier,
// and the nearest settings that fit.

#include <QComboBox>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QSignalSpy>
#include <QSpinBox>
#include <QTemporaryDir>
#include <QTest>

#include "quire/app/cache_format_choices.h"
#include "quire/ui/settings_panel.h"
#include "settings_fixtures.h"
#include "test_main.h"

using quire::ui::EngineSettings;
using quire::ui::SettingsPanel;

class MemoryFieldsTest : public QObject {
  Q_OBJECT

  QTemporaryDir model_;
  std::unique_ptr<SettingsPanel> panel_;
  EngineSettings sample_;

  QLineEdit* reserve_of(int device) {
    return panel_->findChild<QLineEdit*>(QStringLiteral("deviceReserveMib_%1").arg(device));
  }

 private slots:
  void init() {
    panel_ = std::make_unique<SettingsPanel>(quire::app::cache_format_choices());
    panel_->setAvailableDevices(quire::ui::test::two_gpus());
    sample_ = quire::ui::test::sample_settings(model_.path());
    sample_.reserve_mib = 320;
    sample_.device_reserve_mib = {-1, 1024};
    panel_->setSettings(sample_);
  }

  void cleanup() { panel_.reset(); }

  void everyDeviceHasAReserveField() {
    QVERIFY(reserve_of(0) && reserve_of(1));
    QCOMPARE(reserve_of(0)->text(), QString());
    // An empty field keeps the common reserve, which it shows.
    QCOMPARE(reserve_of(0)->placeholderText(), QStringLiteral("320"));
    QCOMPARE(reserve_of(1)->text(), QStringLiteral("1024"));
  }

  void aDevicesOwnReserveReachesTheSettings() {
    reserve_of(0)->setText(QStringLiteral("64"));
    QCOMPARE(panel_->settings().device_reserve_mib, (QList<double>{64, 1024}));
    reserve_of(1)->clear();
    reserve_of(0)->clear();
    QCOMPARE(panel_->settings().device_reserve_mib, QList<double>());
    QCOMPARE(quire::ui::reload_reasons(sample_, panel_->settings()),
             QStringList{QStringLiteral("reserve")});
  }

  void thePageReservationIsAChoiceWithItsExplanation() {
    auto* choice = panel_->findChild<QComboBox*>(QStringLiteral("reservePages"));
    auto* hint = panel_->findChild<QLabel*>(QStringLiteral("reservePagesHint"));
    QVERIFY(choice && hint);
    choice->setCurrentIndex(choice->findData(QStringLiteral("all")));
    QCOMPARE(panel_->settings().reserve_pages, QStringLiteral("all"));
    QCOMPARE(hint->text(), QStringLiteral("Reserve every page a reply may need when it starts "
                                          "(no reply is ever paused)"));
    choice->setCurrentIndex(choice->findData(QStringLiteral("on-demand")));
    QCOMPARE(panel_->settings().reserve_pages, QStringLiteral("on-demand"));
    QCOMPARE(hint->text(), QStringLiteral("Allocate pages as replies grow (more chats at once; a "
                                          "reply may pause while others finish)"));
    // The sample reserves on demand; reserving every page takes a reload.
    choice->setCurrentIndex(choice->findData(QStringLiteral("all")));
    QCOMPARE(quire::ui::reload_reasons(sample_, panel_->settings()),
             QStringList{QStringLiteral("page reservation")});
  }

  void whereTheCacheLivesIsAChoiceWithItsExplanation() {
    auto* choice = panel_->findChild<QComboBox*>(QStringLiteral("cacheResidence"));
    auto* hint = panel_->findChild<QLabel*>(QStringLiteral("cacheResidenceHint"));
    QVERIFY(choice && hint);
    QCOMPARE(choice->count(), 3);
    QCOMPARE(choice->currentData().toString(), QStringLiteral("device"));
    QCOMPARE(hint->text(), QStringLiteral("Pages stay in device memory beside their layers: the "
                                          "fastest decoding, as long as the cache fits there"));
    choice->setCurrentIndex(choice->findData(QStringLiteral("offloaded")));
    QCOMPARE(panel_->settings().cache_residence, QStringLiteral("offloaded"));
    QCOMPARE(hint->text(), QStringLiteral("Pages stay in host memory and stream to the GPU layer "
                                          "by layer: fits long chats in little VRAM, decodes "
                                          "slower"));
    QCOMPARE(quire::ui::reload_reasons(sample_, panel_->settings()),
             QStringList{QStringLiteral("cache residence")});
    choice->setCurrentIndex(choice->findData(QStringLiteral("offload-global")));
    QCOMPARE(panel_->settings().cache_residence, QStringLiteral("offload-global"));
    QCOMPARE(hint->text(),
             QStringLiteral("Only the global-attention layers of sliding-window models keep their "
                            "pages in host memory; windowed layers keep theirs on the device "
                            "(other models offload every layer)"));
  }

  void theCacheDeviceListsTheDevicesTheAppKnows() {
    auto* choice = panel_->findChild<QComboBox*>(QStringLiteral("cacheDevice"));
    QVERIFY(choice);
    QStringList items;
    for (int i = 0; i < choice->count(); ++i)
      items << choice->itemText(i);
    QCOMPARE(items, QStringList({QStringLiteral("With its layers"),
                                 QStringLiteral("cuda0: NVIDIA GeForce RTX 4090"),
                                 QStringLiteral("cuda1: NVIDIA GeForce RTX 3090")}));
    QCOMPARE(choice->currentIndex(), 0);
    QCOMPARE(panel_->settings().cache_device, -1);
    // The sample uses device 1 alone.
    choice->setCurrentIndex(2);
    QCOMPARE(panel_->settings().cache_device, 1);
    QCOMPARE(quire::ui::reload_reasons(sample_, panel_->settings()),
             QStringList{QStringLiteral("cache device")});
    QVERIFY(panel_->issues().isEmpty());
  }

  void aCacheDeviceOutsideTheChosenDevicesIsNotApplied() {
    auto* choice = panel_->findChild<QComboBox*>(QStringLiteral("cacheDevice"));
    auto* issue = panel_->findChild<QLabel*>(QStringLiteral("cacheDeviceIssue"));
    auto* apply = panel_->findChild<QPushButton*>(QStringLiteral("applyButton"));
    QVERIFY(choice && issue && apply);
    choice->setCurrentIndex(1);  // device 0, which the sample leaves out
    QCOMPARE(issue->text(),
             QStringLiteral("The cache device, cuda0: NVIDIA GeForce RTX 4090, is not among the "
                            "chosen devices: choose it too, or keep the cache with its layers."));
    QVERIFY(!issue->isHidden());
    QVERIFY(!apply->isEnabled());
    choice->setCurrentIndex(0);
    QVERIFY(issue->isHidden());
    QVERIFY(!apply->isEnabled());  // nothing changed
  }

  void bothAreAppliedWithAReload() {
    auto* residence = panel_->findChild<QComboBox*>(QStringLiteral("cacheResidence"));
    auto* device = panel_->findChild<QComboBox*>(QStringLiteral("cacheDevice"));
    auto* apply = panel_->findChild<QPushButton*>(QStringLiteral("applyButton"));
    residence->setCurrentIndex(residence->findData(QStringLiteral("offloaded")));
    device->setCurrentIndex(device->findData(1));
    QCOMPARE(apply->text(), QStringLiteral("Apply and reload model"));
    QSignalSpy applied(panel_.get(), &SettingsPanel::applyRequested);
    apply->click();
    QCOMPARE(applied.size(), 1);
    const auto settings = applied.first().at(0).value<EngineSettings>();
    QCOMPARE(settings.cache_residence, QStringLiteral("offloaded"));
    QCOMPARE(settings.cache_device, 1);
    QCOMPARE(applied.first().at(1).toBool(), true);
    QCOMPARE(panel_->appliedSettings(), settings);
  }

  void aCacheDeviceShownBeforeTheDevicesAreKnownIsKept() {
    SettingsPanel fresh(quire::app::cache_format_choices());
    EngineSettings stored = sample_;
    stored.cache_device = 3;
    fresh.setSettings(stored);
    QCOMPARE(fresh.settings().cache_device, 3);
    QVERIFY(!fresh.hasUnappliedChanges());
    fresh.setAvailableDevices(quire::ui::test::two_gpus());
    QCOMPARE(fresh.settings().cache_device, 3);
    QVERIFY(!fresh.hasUnappliedChanges());
    stored.cache_device = 1;
    stored.devices = {};
    fresh.setSettings(stored);
    fresh.setAvailableDevices(quire::ui::test::two_gpus());
    auto* choice = fresh.findChild<QComboBox*>(QStringLiteral("cacheDevice"));
    QCOMPARE(choice->currentText(), QStringLiteral("cuda1: NVIDIA GeForce RTX 3090"));
  }

  void thePlanShowsPagesKeptInHostMemory() {
    auto* host = panel_->findChild<QLabel*>(QStringLiteral("planHostCache"));
    QVERIFY(host);
    panel_->setPlan(quire::ui::test::fitting_plan());
    QVERIFY(host->isHidden());
    quire::ui::PlanView offloaded = quire::ui::test::fitting_plan();
    offloaded.host_cache = 96 * quire::ui::test::kMiB;
    offloaded.host_usable = 30 * quire::ui::test::kGiB;
    panel_->setPlan(offloaded);
    QVERIFY(!host->isHidden());
    QCOMPARE(host->text(), QStringLiteral("Host memory: cache 96.0 MiB of 30.0 GiB free"));
  }

  void aSmallerFormatThatFitsIsOneClickAway() {
    auto* button = panel_->findChild<QPushButton*>(QStringLiteral("fitButton"));
    QVERIFY(button);
    QVERIFY(button->isHidden());
    quire::ui::PlanView plan = quire::ui::test::overflowing_plan();
    plan.fit_label = QStringLiteral("q8 cache");
    plan.fit_change = QStringLiteral("cache stored as q8 instead of fp16 (about 1% less exact)");
    plan.fit_cache_format = QStringLiteral("q8");
    plan.fit_cache_tokens = 32768;
    panel_->setPlan(plan);
    QVERIFY(!button->isHidden());
    QCOMPARE(button->text(), QStringLiteral("Use q8 cache"));
    QCOMPARE(button->toolTip(), plan.fit_change);
    const int tokens = panel_->settings().cache_tokens;
    button->click();
    QCOMPARE(panel_->settings().cache_format, QStringLiteral("q8"));
    QCOMPARE(panel_->settings().cache_tokens, tokens);
    // The suggestion belongs to the settings before the click.
    QTRY_VERIFY(button->isHidden());
  }

  void aSmallerCacheThatFitsIsOneClickAway() {
    quire::ui::PlanView plan = quire::ui::test::overflowing_plan();
    plan.fit_label = QStringLiteral("a 12,288-token cache");
    plan.fit_change = QStringLiteral("cache reduced from 32,768 to 12,288 tokens");
    plan.fit_cache_tokens = 12288;
    panel_->setPlan(plan);
    auto* button = panel_->findChild<QPushButton*>(QStringLiteral("fitButton"));
    QCOMPARE(button->text(), QStringLiteral("Use a 12,288-token cache"));
    const QString format = panel_->settings().cache_format;
    button->click();
    QCOMPARE(panel_->settings().cache_tokens, 12288);
    QCOMPARE(panel_->settings().max_context, std::min(sample_.max_context, 12288));
    QCOMPARE(panel_->settings().cache_format, format);
  }

  void noButtonWhenItFitsOrNothingNearDoes() {
    auto* button = panel_->findChild<QPushButton*>(QStringLiteral("fitButton"));
    panel_->setPlan(quire::ui::test::overflowing_plan());
    QVERIFY(button->isHidden());
    quire::ui::PlanView fitting = quire::ui::test::fitting_plan();
    fitting.fit_label = QStringLiteral("q8 cache");
    panel_->setPlan(fitting);
    QVERIFY(button->isHidden());
  }

  void thePlaceholderFollowsTheCommonReserve() {
    EngineSettings other = sample_;
    other.reserve_mib = 512;
    panel_->setSettings(other);
    QCOMPARE(reserve_of(0)->placeholderText(), QStringLiteral("512"));
  }
};

QUIRE_TEST(MemoryFieldsTest)
#include "test_memory_fields.moc"
