// The settings panel's memory choices: a reserve per device, how pages are
// reserved, the host-memory tier, and the nearest settings that fit.

#include <QComboBox>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
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
