// The settings panel's live plan inside the program: every edit is priced by
// the engine's planner before anything loads.

#include <QComboBox>
#include <QDoubleSpinBox>
#include <QSpinBox>
#include <QTest>

#include "app_test_support.h"
#include "backend_choice.h"
#include "main_window.h"
#include "plan_pricer.h"
#include "quire/engine/planner/planner.h"
#include "quire/engine/runtime/fit_options.h"
#include "quire/engine/runtime/model_description.h"
#include "quire/engine/runtime/model_runtime.h"
#include "quire/engine/runtime/weights_summary.h"
#include "quire/ui/plan_widget.h"
#include "quire/ui/settings_panel.h"
#include "runtime_settings.h"
#include "test_main.h"

using namespace quire;
using namespace quire::test;

namespace {

// Two budgeted logical devices, so the split has something to split.
const QString kDevices = QStringLiteral("cpu:2x64MiB");

// What the planner says for `settings`, computed here from the engine's own
// functions.
ui::PlanView planner_says(const ui::EngineSettings& settings) {
  gui::BackendSelection selection =
      gui::make_backend(settings, gui::DeviceLists{kDevices, QStringLiteral("cuda")});
  const engine::ModelDescription model =
      engine::ModelDescription::open(settings.model_directory.toStdString());
  const engine::RuntimeOptions options = gui::runtime_options(settings, model, selection.indices);
  const std::vector<kernels::DeviceInfo> devices = selection.backend->devices();
  ui::PlanView view =
      gui::to_plan_view(engine::plan_placement(engine::placement_request(model, devices, options)));
  // A plan that does not fit carries the nearest settings that do.
  if (!view.fits) gui::add_fit(view, engine::suggest_fit(model, devices, options));
  // And every plan says how the weights are stored.
  view.weights = QString::fromStdString(engine::summarize_weights(model).text());
  return view;
}

qint64 cache_bytes(const ui::PlanView& plan) {
  qint64 total = 0;
  for (const ui::PlanDeviceView& device : plan.devices)
    total += device.cache;
  return total;
}

}  // namespace

class SettingsPlanTest : public QObject {
  Q_OBJECT

 private slots:
  void everyEditIsPricedByThePlanner() {
    AppRun run(demo_model(), 24, kDevices);
    run.start();
    ui::SettingsPanel& panel = *run.app->window().settingsPanel();
    auto* plan = panel.findChild<ui::PlanWidget*>(QStringLiteral("plan"));
    auto* keys = panel.findChild<QComboBox*>(QStringLiteral("cacheKeys"));
    auto* values = panel.findChild<QComboBox*>(QStringLiteral("cacheValues"));
    const auto choose = [&](const char* key, const char* value) {
      keys->setCurrentIndex(keys->findData(QString::fromLatin1(key)));
      values->setCurrentIndex(values->findData(QString::fromLatin1(value)));
    };
    auto* tokens = panel.findChild<QSpinBox*>(QStringLiteral("cacheTokens"));
    auto* split = panel.findChild<QComboBox*>(QStringLiteral("split"));
    auto* reserve = panel.findChild<QDoubleSpinBox*>(QStringLiteral("reserveMib"));
    auto* window = panel.findChild<QSpinBox*>(QStringLiteral("residualWindow"));
    QVERIFY(plan && keys && values && tokens && split && reserve && window);
    reserve->setValue(16);
    // The codings alone first; the residual window (on by default) below.
    window->setValue(0);

    choose("fp16", "fp16");
    tokens->setValue(8192);
    QTRY_VERIFY2(plan->plan().valid && cache_bytes(plan->plan()) > 0 && !plan->isStale(),
                 qPrintable(plan->plan().error + plan->plan().verdict));
    const ui::PlanView fp16 = plan->plan();
    QCOMPARE(fp16, planner_says(panel.settings()));
    QVERIFY(fp16.fits);
    // The whole cache, on the device that holds the layers: 6 layers x 4 KV heads x 32 dims x K and
    // V x 2 bytes, per token.
    QCOMPARE(cache_bytes(fp16), qint64{8192} * 6 * 4 * 32 * 2 * 2);

    choose("q4", "q4");
    QTRY_VERIFY(plan->plan() != fp16 && !plan->isStale());
    QCOMPARE(plan->plan(), planner_says(panel.settings()));
    QVERIFY(cache_bytes(plan->plan()) < cache_bytes(fp16) / 3);

    // Keys and values coded apart, each half priced as its own coding: Q8
    // keys (128 bytes and four FP16 scales per token, layer and head group of
    // 32) with FP16 values (256 bytes).
    choose("q8", "fp16");
    QCOMPARE(panel.settings().cache_format, QStringLiteral("k8v16"));
    QTRY_COMPARE(cache_bytes(plan->plan()), qint64{8192} * 6 * (4 * 32 + 4 * 2 + 4 * 32 * 2));
    QTRY_VERIFY(!plan->isStale());
    QCOMPARE(plan->plan(), planner_says(panel.settings()));
    choose("q4", "q4");
    QTRY_VERIFY(!plan->isStale());

    // The residual window adds an FP16 page (256 tokens) of keys and values
    // per layer for each of its chats, beside the coded cache.
    QTRY_COMPARE(plan->plan(), planner_says(panel.settings()));
    const qint64 coded = cache_bytes(plan->plan());
    // Q4: keys and values each 64 bytes and an FP16 scale per K/V head (a
    // group of 32) per token and layer.
    QCOMPARE(coded, qint64{8192} * 6 * 2 * (4 * 32 / 2 + 4 * 2));
    window->setValue(3);
    QCOMPARE(panel.settings().residual_window, 3);
    QTRY_VERIFY(cache_bytes(plan->plan()) != coded && !plan->isStale());
    QCOMPARE(plan->plan(), planner_says(panel.settings()));
    QCOMPARE(cache_bytes(plan->plan()) - coded, qint64{3} * 6 * 256 * 4 * 32 * 2 * 2);
    window->setValue(0);
    QTRY_VERIFY(cache_bytes(plan->plan()) == coded && !plan->isStale());

    // Balanced puts layers on both devices; filling in order keeps them on one.
    split->setCurrentIndex(split->findData(QStringLiteral("balanced")));
    QTRY_COMPARE(plan->plan(), planner_says(panel.settings()));
    QVERIFY(plan->plan().devices.value(0).weights > 0);
    QVERIFY(plan->plan().devices.value(1).weights > 0);

    // A cache larger than both devices does not fit, and the plan says so.
    choose("fp16", "fp16");
    tokens->setValue(65536);
    QTRY_VERIFY(!plan->plan().fits && !plan->isStale());
    QCOMPARE(plan->plan(), planner_says(panel.settings()));
    QVERIFY2(plan->plan().verdict.contains(QStringLiteral("does not fit")),
             qPrintable(plan->plan().verdict));
  }
};

QUIRE_TEST(SettingsPlanTest)
#include "test_settings_plan.moc"
