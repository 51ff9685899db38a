// The settings a user edits as the engine's options: what the memory
// choices become, and how the plan prices them.

#include <QDir>
#include <QTest>
#include <optional>
#include <stdexcept>

#include "app_test_support.h"
#include "backend_choice.h"
#include "plan_pricer.h"
#include "quire/app/app_settings.h"
#include "quire/engine/runtime/fit_options.h"
#include "quire/engine/runtime/model_description.h"
#include "runtime_settings.h"
#include "test_main.h"

using namespace quire;

Q_DECLARE_METATYPE(quire::engine::CacheResidence)

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

  // Settings → Speculative decoding as the engine's drafting of a job.
  void draftSettingsBecomeTheJobsDrafting() {
    const engine::DraftSettings off = gui::draft_settings(defaults().drafts, false);
    QCOMPARE(off.method, engine::DraftSettings::Method::Off);
    QCOMPARE(off.max_tokens, 4);
    const engine::DraftSettings ngram =
        gui::draft_settings({QStringLiteral("ngram"), 12, {}}, false);
    QCOMPARE(ngram.method, engine::DraftSettings::Method::Ngram);
    QCOMPARE(ngram.max_tokens, 12);
    // A draft model drafts where one loaded, and nothing where none did.
    const ui::DraftDefaults model{QStringLiteral("model"), 6, QStringLiteral("/models/draft")};
    QCOMPARE(gui::draft_settings(model, true).method, engine::DraftSettings::Method::Model);
    QCOMPARE(gui::draft_settings(model, false).method, engine::DraftSettings::Method::Off);
    // Values set in code, past the table's checks, stay within the engine's bounds.
    QCOMPARE(gui::draft_settings({QStringLiteral("ngram"), 0, {}}, false).max_tokens, 1);
    QCOMPARE(gui::draft_settings({QStringLiteral("ngram"), 500, {}}, false).max_tokens, 64);
    QCOMPARE(gui::draft_settings({QStringLiteral("eagle"), 4, {}}, true).method,
             engine::DraftSettings::Method::Off);
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

  void whereTheCacheLivesIsPassedOn_data() {
    QTest::addColumn<QString>("id");
    QTest::addColumn<engine::CacheResidence>("residence");
    QTest::newRow("device") << QStringLiteral("device") << engine::CacheResidence::Device;
    QTest::newRow("offloaded") << QStringLiteral("offloaded") << engine::CacheResidence::Offloaded;
    QTest::newRow("offload-global")
        << QStringLiteral("offload-global") << engine::CacheResidence::OffloadGlobalLayers;
  }

  void whereTheCacheLivesIsPassedOn() {
    QFETCH(QString, id);
    QFETCH(engine::CacheResidence, residence);
    ui::EngineSettings settings = defaults();
    settings.cache_residence = id;
    QCOMPARE(gui::runtime_options(settings, *model_, {0}).cache_residence, residence);
  }

  void anUnknownResidenceIsRefusedByName() {
    ui::EngineSettings settings = defaults();
    settings.cache_residence = QStringLiteral("swap");
    try {
      gui::runtime_options(settings, *model_, {0});
      QFAIL("no exception");
    } catch (const std::invalid_argument& error) {
      QCOMPARE(QString::fromUtf8(error.what()),
               QStringLiteral("the cache residence \"swap\" is not device, offloaded or "
                              "offload-global"));
    }
  }

  void theCacheDeviceGoesByItsPositionAmongTheSelected() {
    ui::EngineSettings settings = defaults();
    QCOMPARE(gui::runtime_options(settings, *model_, {1, 3}).cache_device, std::nullopt);
    // Devices 1 and 3 are chosen; device 3 is the second of them.
    settings.cache_device = 3;
    QCOMPARE(gui::runtime_options(settings, *model_, {1, 3}).cache_device, std::optional<int>(1));
    settings.cache_device = 2;
    try {
      gui::runtime_options(settings, *model_, {1, 3});
      QFAIL("no exception");
    } catch (const std::invalid_argument& error) {
      QCOMPARE(QString::fromUtf8(error.what()),
               QStringLiteral("the cache device 2 is not among the chosen devices; choose it "
                              "too, or keep the cache with its layers"));
    }
  }

  void thePlanPricesTheCacheWhereItLives() {
    // Two logical devices of 64 MiB: the demo model's layers all fit on the first.
    const gui::DeviceLists lists{QStringLiteral("cpu:2x64MiB"), QStringLiteral("cuda")};
    ui::EngineSettings settings = defaults();
    settings.model_directory = test::demo_model();
    settings.backend = QStringLiteral("cpu");
    settings.reserve_mib = 0;
    settings.cache_tokens = 4096;
    gui::PlanPricer pricer(lists);
    const ui::PlanView on_devices = pricer.price(settings);
    QVERIFY2(on_devices.fits, qPrintable(on_devices.verdict + on_devices.error));
    QCOMPARE(on_devices.host_cache, 0);
    QVERIFY(on_devices.devices.at(0).cache > 0);
    QCOMPARE(on_devices.devices.at(1).cache, 0);
    QVERIFY(!on_devices.devices.at(1).used);

    // The whole cache on the second device, the layers where they were.
    settings.cache_device = 1;
    const ui::PlanView moved = pricer.price(settings);
    QVERIFY2(moved.fits, qPrintable(moved.verdict + moved.error));
    QCOMPARE(moved.devices.at(0).cache, 0);
    QCOMPARE(moved.devices.at(1).cache, on_devices.devices.at(0).cache);
    QVERIFY(moved.devices.at(1).used);

    // Offloaded, the pages are priced in host memory and the device keeps
    // only the staging ring the layers stream through.
    settings.cache_device = -1;
    settings.cache_residence = QStringLiteral("offloaded");
    const ui::PlanView offloaded = pricer.price(settings);
    QVERIFY2(offloaded.fits, qPrintable(offloaded.verdict + offloaded.error));
    QCOMPARE(offloaded.host_cache, on_devices.devices.at(0).cache);
    QVERIFY(offloaded.host_usable > 0);
    QVERIFY(offloaded.devices.at(0).cache > 0);
    QVERIFY(offloaded.devices.at(0).cache < on_devices.devices.at(0).cache);
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

  // The draft model is priced beside the model: what it takes where it fits,
  // the planner's reason where the model leaves too little.
  void theDraftModelIsPricedBesideTheModel() {
    ui::EngineSettings settings = defaults();
    settings.model_directory = test::demo_model();
    settings.backend = QStringLiteral("cpu");
    settings.reserve_mib = 0;
    settings.cache_tokens = 4096;
    settings.drafts = {QStringLiteral("model"), 4, test::demo_model()};
    gui::PlanPricer pricer(gui::DeviceLists{QStringLiteral("cpu:1x64MiB"), QStringLiteral("cuda")});
    const ui::PlanView roomy = pricer.price(settings);
    QVERIFY2(roomy.fits, qPrintable(roomy.verdict + roomy.error));
    QVERIFY(roomy.draft_fits);
    const QString name = QDir(test::demo_model()).dirName();
    QVERIFY2(roomy.draft_verdict.startsWith(QStringLiteral("Draft model %1: ").arg(name)) &&
                 roomy.draft_verdict.endsWith(QStringLiteral(" beside the model")),
             qPrintable(roomy.draft_verdict));
    // Room for the model alone: the draft is refused in the planner's words.
    gui::PlanPricer tight(gui::DeviceLists{QStringLiteral("cpu:1x32MiB"), QStringLiteral("cuda")});
    const ui::PlanView alone = tight.price(settings);
    QVERIFY2(alone.fits, qPrintable(alone.verdict + alone.error));
    QVERIFY(!alone.draft_fits);
    QVERIFY2(
        alone.draft_verdict.startsWith(QStringLiteral("Draft model %1: does not fit").arg(name)),
        qPrintable(alone.draft_verdict));
    // n-gram drafts load nothing.
    settings.drafts.method = QStringLiteral("ngram");
    QCOMPARE(pricer.price(settings).draft_verdict, QString());
  }
};

QUIRE_TEST(RuntimeSettingsTest)
#include "test_runtime_settings.moc"
