// The plan beside the settings: the verdict, per-device numbers and bars, the
// largest context, and that an edit marks the shown plan as out of date.

#include <QLabel>
#include <QSpinBox>
#include <QTemporaryDir>
#include <QTest>

#include "quire/app/cache_format_choices.h"
#include "quire/ui/plan_widget.h"
#include "quire/ui/settings_panel.h"
#include "settings_fixtures.h"
#include "test_main.h"

using quire::ui::PlanView;
using quire::ui::SettingsPanel;
namespace fixtures = quire::ui::test;

class TestSettingsPanelPlan : public QObject {
  Q_OBJECT

 private slots:
  void init() {
    QVERIFY(model_.isValid());
    panel_ = std::make_unique<SettingsPanel>(quire::app::cache_format_choices());
    panel_->setAvailableDevices(fixtures::two_gpus());
    panel_->setSettings(fixtures::sample_settings(model_.path()));
  }

  void cleanup() { panel_.reset(); }

  void beforeAnyPlan() {
    QCOMPARE(label("planVerdict")->text(),
             QStringLiteral("Choose a model folder to see how it fits."));
    QVERIFY(label("planLargestContext")->isHidden());
    QVERIFY(label("planDeviceNumbers_0") == nullptr);
  }

  void fittingPlan() {
    panel_->setPlan(fixtures::fitting_plan());
    QCOMPARE(label("planVerdict")->text(), QStringLiteral("fits"));
    QVERIFY(label("planVerdict")->styleSheet().contains(QLatin1String("#2e7d32")));
    QCOMPARE(label("planDeviceName_0")->text(), fixtures::two_gpus().at(0));
    QCOMPARE(label("planDeviceName_1")->text(), fixtures::two_gpus().at(1));
    QCOMPARE(label("planDeviceNumbers_0")->text(),
             QStringLiteral("weights 10.5 GiB · cache 2.0 GiB · scratch 300 MiB · reserve 256 MiB "
                            "· free 23.5 GiB, left 10.7 GiB"));
    QCOMPARE(label("planDeviceNumbers_1")->text(),
             QStringLiteral("weights 8.0 GiB · cache 1.5 GiB · scratch 300 MiB · reserve 256 MiB · "
                            "free 23.0 GiB, left 13.2 GiB"));
    QVERIFY(panel_->findChild<QWidget*>(QStringLiteral("planDeviceBar_1")) != nullptr);
    QCOMPARE(label("planLargestContext")->text(),
             QStringLiteral("Largest context that fits: 253,696 tokens"));
    QVERIFY(!label("planLargestContext")->isHidden());
  }

  void overflowingPlan() {
    panel_->setPlan(fixtures::overflowing_plan());
    // The planner's verdict, word for word: it names the device and the remedy.
    QCOMPARE(label("planVerdict")->text(), fixtures::overflow_verdict());
    QVERIFY(label("planVerdict")->styleSheet().contains(QLatin1String("#c62828")));
    QCOMPARE(label("planDeviceNumbers_0")->text(),
             QStringLiteral("weights 12.0 GiB · cache 10.0 GiB · scratch 300 MiB · reserve 256 "
                            "MiB · free 23.5 GiB, left 1.2 GiB"));
    QCOMPARE(label("planDeviceNumbers_1")->text(),
             QStringLiteral("weights 6.5 GiB · cache 20.0 GiB · scratch 300 MiB · reserve 256 MiB "
                            "· free 23.0 GiB, short by 4.0 GiB"));
    QVERIFY(label("planDeviceNumbers_1")->styleSheet().contains(QLatin1String("#c62828")));
    QVERIFY(label("planDeviceNumbers_0")->styleSheet().isEmpty());
    QCOMPARE(label("planLargestContext")->text(),
             QStringLiteral("Largest context that fits: 98,304 tokens"));
  }

  void deviceLeftOut() {
    PlanView plan = fixtures::fitting_plan();
    plan.devices[1].used = false;
    plan.devices[1].weights = plan.devices[1].cache = plan.devices[1].scratch = 0;
    panel_->setPlan(plan);
    QCOMPARE(label("planDeviceNumbers_1")->text(), QStringLiteral("not used · free 23.0 GiB"));
  }

  void weightsAloneDoNotFit() {
    PlanView plan = fixtures::overflowing_plan();
    plan.largest_context_tokens = 0;
    panel_->setPlan(plan);
    QCOMPARE(label("planLargestContext")->text(),
             QStringLiteral("Largest context that fits: none — the weights alone do not fit"));
  }

  void unreadableModel() {
    panel_->setPlan(fixtures::fitting_plan());
    PlanView plan;
    plan.error = QStringLiteral("config.json: missing \"num_hidden_layers\"");
    panel_->setPlan(plan);
    QCOMPARE(label("planVerdict")->text(), plan.error);
    QVERIFY(label("planLargestContext")->isHidden());
    QVERIFY(label("planDeviceNumbers_0") == nullptr);
  }

  void editMarksThePlanStale() {
    panel_->setPlan(fixtures::fitting_plan());
    auto* plan = panel_->findChild<quire::ui::PlanWidget*>(QStringLiteral("plan"));
    QVERIFY(!plan->isStale());
    panel_->findChild<QSpinBox*>(QStringLiteral("cacheTokens"))->setValue(131072);
    QTRY_VERIFY(plan->isStale());
    QVERIFY(!label("planPending")->isHidden());
    panel_->setPlan(fixtures::overflowing_plan());
    QVERIFY(!plan->isStale());
    QVERIFY(label("planPending")->isHidden());
  }

  void screenshots() {
    // Settings that match the plans: every device, balanced.
    quire::ui::EngineSettings shown = fixtures::sample_settings(model_.path());
    shown.devices.clear();
    shown.split = quire::ui::EngineSettings::Split::Balanced;
    panel_->setSettings(shown);
    panel_->resize(1280, 900);
    panel_->show();
    QVERIFY(QTest::qWaitForWindowExposed(panel_.get()));
    panel_->setPlan(fixtures::fitting_plan());
    fixtures::save_screenshot(*panel_, QStringLiteral("settings_panel_fits.png"));
    panel_->setPlan(fixtures::overflowing_plan());
    fixtures::save_screenshot(*panel_, QStringLiteral("settings_panel_does_not_fit.png"));
  }

 private:
  QLabel* label(const char* name) { return panel_->findChild<QLabel*>(QString::fromLatin1(name)); }

  QTemporaryDir model_;
  std::unique_ptr<SettingsPanel> panel_;
};

QUIRE_TEST(TestSettingsPanelPlan)
#include "test_settings_panel_plan.moc"
