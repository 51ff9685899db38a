// The settings a user edits as the engine's options: what the memory
// choices become.

#include <QTest>

#include "app_test_support.h"
#include "backend_choice.h"
#include "plan_pricer.h"
#include "quire/app/app_settings.h"
#include "quire/engine/runtime/fit_options.h"
#include "quire/engine/runtime/model_description.h"
#include "runtime_settings.h"
#include "test_main.h"

using namespace quire;

namespace {

constexpr std::int64_t kMiB = 1024 * 1024;

ui::EngineSettings defaults() {
  return app::AppSettings().engine;
}

}  // namespace

class RuntimeSettingsTest : public QObject {
  Q_OBJECT

  std::unique_ptr<engine::ModelDescription> model_;

 private slots:
  void initTestCase() {
    model_ = std::make_unique<engine::ModelDescription>(
        engine::ModelDescription::open(test::demo_model().toStdString()));
  }

  void theCommonReserveIsKeptOnEveryDevice() {
    ui::EngineSettings settings = defaults();
    settings.reserve_mib = 300;
    const engine::RuntimeOptions options = gui::runtime_options(settings, *model_, {0, 1});
    QCOMPARE(options.reserve_bytes.bytes, (std::vector<std::int64_t>{300 * kMiB}));
  }

  void reservesGoByTheSelectedDevicesPositions() {
    // Settings keep reserves by device index; devices 1 and 3 are chosen.
    ui::EngineSettings settings = defaults();
    settings.reserve_mib = 300;
    settings.device_reserve_mib = {100, -1, 200, 2048};
    const engine::RuntimeOptions options = gui::runtime_options(settings, *model_, {1, 3});
    QCOMPARE(options.reserve_bytes.bytes, (std::vector<std::int64_t>{300 * kMiB, 2048 * kMiB}));
  }

  void thePageReservationIsPassedOn() {
    ui::EngineSettings settings = defaults();
    settings.reserve_pages = QStringLiteral("all");
    QCOMPARE(gui::runtime_options(settings, *model_, {0}).reservation,
             cache::ReservationPolicy::ReserveOnAdmission);
    settings.reserve_pages = QStringLiteral("on-demand");
    QCOMPARE(gui::runtime_options(settings, *model_, {0}).reservation,
             cache::ReservationPolicy::OnDemand);
  }

  void aPlanThatDoesNotFitCarriesTheNearestThatDoes() {
    const gui::DeviceLists lists{QStringLiteral("cpu:2x16MiB"), QStringLiteral("cuda")};
    ui::EngineSettings settings = defaults();
    settings.model_directory = test::demo_model();
    settings.backend = QStringLiteral("cpu");
    settings.reserve_mib = 0;
    settings.cache_format = QStringLiteral("fp16");
    settings.cache_tokens = 1 << 16;  // 192 MiB of FP16 cache: no format fits it
    gui::PlanPricer pricer(lists);
    const ui::PlanView view = pricer.price(settings);
    QVERIFY(view.valid && !view.fits);

    gui::BackendSelection selection = gui::make_backend(settings, lists);
    const std::optional<engine::FitSuggestion> expected =
        engine::suggest_fit(*model_, selection.backend->devices(),
                            gui::runtime_options(settings, *model_, selection.indices));
    QVERIFY(expected);
    QCOMPARE(expected->kind, engine::FitSuggestion::Kind::SmallerCache);
    QCOMPARE(view.fit_label, QString::fromStdString(expected->label));
    QVERIFY(view.fit_change.startsWith(QString::fromStdString(expected->change)));
    QCOMPARE(view.fit_cache_format, QString());
    QCOMPARE(view.fit_cache_tokens, expected->context_tokens);
    QVERIFY(view.fit_cache_tokens % gui::kPageSize == 0 && view.fit_cache_tokens < (1 << 16));

    // The suggested cache fits.
    settings.cache_tokens = static_cast<int>(view.fit_cache_tokens);
    const ui::PlanView fitted = pricer.price(settings);
    QVERIFY2(fitted.fits, qPrintable(fitted.verdict));
    QCOMPARE(fitted.fit_label, QString());
  }
};

QUIRE_TEST(RuntimeSettingsTest)
#include "test_runtime_settings.moc"
