// The settings panel's fields, edits, validation and Apply/Revert. The plan
// beside the fields is tested in test_settings_panel_plan.cpp.

#include <QCheckBox>
#include <QComboBox>
#include <QDir>
#include <QDoubleSpinBox>
#include <QElapsedTimer>
#include <QLabel>
#include <QLineEdit>
#include <QLocale>
#include <QPushButton>
#include <QSignalSpy>
#include <QSpinBox>
#include <QTemporaryDir>
#include <QTest>
#include <array>

#include "quire/app/cache_format_choices.h"
#include "quire/ui/settings_panel.h"
#include "settings_fixtures.h"
#include "test_main.h"

using quire::ui::DraftDefaults;
using quire::ui::EngineSettings;
using quire::ui::SettingsPanel;
using Split = EngineSettings::Split;

namespace {

struct FieldChange {
  const char* name;
  void (*change)(EngineSettings& settings);
};

// One row per field (and per kind of value a field can hold): each moves one
// field away from the sample, so a field the panel dropped would show.
const std::array<FieldChange, 45> kFieldChanges = {{
    {"model directory", [](EngineSettings& s) { s.model_directory = "/models/Other"; }},
    {"no model directory", [](EngineSettings& s) { s.model_directory.clear(); }},
    {"recent models",
     [](EngineSettings& s) {
       s.recent_models = {"/a", "/b, with comma", "/c"};
     }},
    {"no recent models", [](EngineSettings& s) { s.recent_models.clear(); }},
    {"backend auto", [](EngineSettings& s) { s.backend = "auto"; }},
    {"backend cpu", [](EngineSettings& s) { s.backend = "cpu"; }},
    {"backend unknown", [](EngineSettings& s) { s.backend = "rocm"; }},
    {"every device", [](EngineSettings& s) { s.devices.clear(); }},
    {"both devices",
     [](EngineSettings& s) {
       s.devices = {0, 1};
     }},
    {"split fill", [](EngineSettings& s) { s.split = Split::Fill; }},
    {"split balanced", [](EngineSettings& s) { s.split = Split::Balanced; }},
    {"manual GB",
     [](EngineSettings& s) {
       s.manual_gb = {12.25, 20.5};
     }},
    {"no manual GB", [](EngineSettings& s) { s.manual_gb.clear(); }},
    {"reserve", [](EngineSettings& s) { s.reserve_mib = 0; }},
    {"reserve of one device",
     [](EngineSettings& s) {
       s.device_reserve_mib = {-1, 1024};
     }},
    {"reserves of both devices",
     [](EngineSettings& s) {
       s.device_reserve_mib = {0, 768.5};
     }},
    {"max context", [](EngineSettings& s) { s.max_context = 4096; }},
    {"cache fp16", [](EngineSettings& s) { s.cache_format = "fp16"; }},
    {"cache q8", [](EngineSettings& s) { s.cache_format = "q8"; }},
    {"cache q6", [](EngineSettings& s) { s.cache_format = "q6"; }},
    {"cache fp8", [](EngineSettings& s) { s.cache_format = "fp8"; }},
    {"cache kf8v4", [](EngineSettings& s) { s.cache_format = "kf8v4"; }},
    {"cache k16v8", [](EngineSettings& s) { s.cache_format = "k16v8"; }},
    {"cache tokens", [](EngineSettings& s) { s.cache_tokens = 1 << 20; }},
    {"host cache off", [](EngineSettings& s) { s.host_cache_mib = 0; }},
    {"disk cache off", [](EngineSettings& s) { s.disk_cache = false; }},
    {"disk cache of 512 MiB", [](EngineSettings& s) { s.disk_cache_mib = 512; }},
    {"residual window off", [](EngineSettings& s) { s.residual_window = 0; }},
    {"residual window of 16 chats", [](EngineSettings& s) { s.residual_window = 16; }},
    {"every page reserved", [](EngineSettings& s) { s.reserve_pages = "all"; }},
    {"cache offloaded", [](EngineSettings& s) { s.cache_residence = "offloaded"; }},
    {"global layers offloaded", [](EngineSettings& s) { s.cache_residence = "offload-global"; }},
    {"cache on device 1", [](EngineSettings& s) { s.cache_device = 1; }},
    {"cache on an unknown device", [](EngineSettings& s) { s.cache_device = 5; }},
    {"max batch", [](EngineSettings& s) { s.max_batch = 1; }},
    {"chunk size", [](EngineSettings& s) { s.chunk_size = 4096; }},
    {"temperature", [](EngineSettings& s) { s.sampling.temperature = 0; }},
    {"top-p", [](EngineSettings& s) { s.sampling.top_p = 1; }},
    {"min-p", [](EngineSettings& s) { s.sampling.min_p = 0.25; }},
    {"repetition penalty", [](EngineSettings& s) { s.sampling.repetition_penalty = 1.5; }},
    {"top-k off", [](EngineSettings& s) { s.sampling.top_k = 0; }},
    {"drafts off", [](EngineSettings& s) { s.drafts.method = "off"; }},
    {"longest draft", [](EngineSettings& s) { s.drafts.max_tokens = 64; }},
    {"system prompt", [](EngineSettings& s) { s.system_prompt = "Réponds en français.\n\n—"; }},
    {"prompt format unknown", [](EngineSettings& s) { s.prompt_format = "vicuna-1.1"; }},
}};

template <typename T>
T* child(QWidget& root, const QString& name) {
  return root.findChild<T*>(name);
}

}  // namespace

class TestSettingsPanel : public QObject {
  Q_OBJECT

 private slots:
  void init() {
    QVERIFY(model_.isValid());
    panel_ = std::make_unique<SettingsPanel>(quire::app::cache_format_choices());
    panel_->setAvailableDevices(quire::ui::test::two_gpus());
    panel_->setPromptFormats({QStringLiteral("chatml"), QStringLiteral("llama3")});
    sample_ = quire::ui::test::sample_settings(model_.path());
    panel_->setSettings(sample_);
  }

  void cleanup() { panel_.reset(); }

  void sampleRoundTrips() {
    QCOMPARE(panel_->settings(), sample_);
    QCOMPARE(panel_->appliedSettings(), sample_);
    QVERIFY(!panel_->hasUnappliedChanges());
    QVERIFY(panel_->issues().isEmpty());
  }

  void everyFieldRoundTrips_data() {
    QTest::addColumn<int>("index");
    for (std::size_t i = 0; i < kFieldChanges.size(); ++i) {
      QTest::newRow(kFieldChanges[i].name) << static_cast<int>(i);
    }
  }

  void everyFieldRoundTrips() {
    QFETCH(int, index);
    EngineSettings changed = sample_;
    kFieldChanges.at(static_cast<std::size_t>(index)).change(changed);
    QVERIFY(changed != sample_);
    panel_->setSettings(changed);
    QCOMPARE(panel_->settings(), changed);
    QVERIFY(!panel_->hasUnappliedChanges());
  }

  void editsReachTheSettings() {
    auto* keys = child<QComboBox>(*panel_, "cacheKeys");
    keys->setCurrentIndex(keys->findData(QStringLiteral("q8")));
    child<QSpinBox>(*panel_, "chunkSize")->setValue(1024);
    child<QDoubleSpinBox>(*panel_, "temperature")->setValue(1.25);
    child<QCheckBox>(*panel_, "device_0")->setChecked(true);
    child<QLineEdit>(*panel_, "manualGb_0")->setText(QStringLiteral("10.5"));
    const EngineSettings edited = panel_->settings();
    // Q8 keys with the sample's Q4 values: Q6.
    QCOMPARE(edited.cache_format, QStringLiteral("q6"));
    QCOMPARE(edited.chunk_size, 1024);
    QCOMPARE(edited.sampling.temperature, 1.25);
    QCOMPARE(edited.devices, (QList<int>{0, 1}));
    QCOMPARE(edited.manual_gb, (QList<double>{10.5, 20.5}));
    QVERIFY(panel_->hasUnappliedChanges());
  }

  // The speculative decoding group: off, n-gram drafts or a draft model, the
  // longest draft, which means nothing (and cannot be edited) while drafts
  // are off, and the draft model's folder, only for a draft model.
  void draftFieldsReachTheSettings() {
    auto* method = child<QComboBox>(*panel_, "draftMethod");
    auto* tokens = child<QSpinBox>(*panel_, "draftTokens");
    auto* folder = child<QLineEdit>(*panel_, "draftModel");
    QVERIFY(method && tokens && folder);
    QCOMPARE(method->currentData().toString(), QStringLiteral("ngram"));
    QVERIFY(tokens->isEnabled());
    QVERIFY(!folder->isEnabled());
    QCOMPARE(tokens->minimum(), 1);
    QCOMPARE(tokens->maximum(), 64);
    tokens->setValue(12);
    QCOMPARE(panel_->settings().drafts, (DraftDefaults{QStringLiteral("ngram"), 12, {}}));
    method->setCurrentIndex(method->findData(QStringLiteral("off")));
    QVERIFY(!tokens->isEnabled());
    QCOMPARE(panel_->settings().drafts, (DraftDefaults{QStringLiteral("off"), 12, {}}));
    QVERIFY(panel_->hasUnappliedChanges());
    // Read per reply: applied live, without a reload.
    QSignalSpy spy(panel_.get(), &SettingsPanel::applyRequested);
    child<QPushButton>(*panel_, "applyButton")->click();
    QCOMPARE(spy.count(), 1);
    QCOMPARE(spy.at(0).at(0).value<EngineSettings>().drafts.method, QStringLiteral("off"));
    QCOMPARE(spy.at(0).at(1).toBool(), false);
  }

  // A draft model loads with the model: choosing one (or leaving it) reloads,
  // a folder typed while drafts come from n-grams does not.
  void aDraftModelIsChosenAndReloads() {
    auto* method = child<QComboBox>(*panel_, "draftMethod");
    auto* folder = child<QLineEdit>(*panel_, "draftModel");
    auto* browse = child<QPushButton>(*panel_, "browseDraftModel");
    QVERIFY(method && folder && browse);
    QString asked_from;
    panel_->setDirectoryChooser([&](QWidget*, const QString& start) {
      asked_from = start;
      return QStringLiteral("/models/small-draft");
    });
    method->setCurrentIndex(method->findData(QStringLiteral("model")));
    QVERIFY(folder->isEnabled() && browse->isEnabled());
    browse->click();
    QCOMPARE(asked_from, panel_->settings().model_directory.isEmpty()
                             ? QDir::homePath()
                             : panel_->settings().model_directory);
    QCOMPARE(panel_->settings().drafts.model_directory, QStringLiteral("/models/small-draft"));
    QCOMPARE(loaded_draft_model(panel_->settings()), QStringLiteral("/models/small-draft"));
    QSignalSpy spy(panel_.get(), &SettingsPanel::applyRequested);
    child<QPushButton>(*panel_, "applyButton")->click();
    QCOMPARE(spy.count(), 1);
    QCOMPARE(spy.at(0).at(1).toBool(), true);
    QVERIFY(reload_reasons(panel_->settings(),
                           [&] {
                             EngineSettings other = panel_->settings();
                             other.drafts.method = QStringLiteral("ngram");
                             return other;
                           }())
                .contains(QStringLiteral("draft model")));
    // The folder alone, drafting from n-grams: nothing to load.
    EngineSettings ngram = panel_->settings();
    ngram.drafts.method = QStringLiteral("ngram");
    EngineSettings retyped = ngram;
    retyped.drafts.model_directory = QStringLiteral("/models/other");
    QVERIFY(!needs_reload(ngram, retyped));
  }

  void settingsEditedIsDebounced() {
    QSignalSpy spy(panel_.get(), &SettingsPanel::settingsEdited);
    auto* context = child<QSpinBox>(*panel_, "maxContext");
    for (int value : {4096, 4097, 4098, 40960})
      context->setValue(value);
    child<QComboBox>(*panel_, "cacheKeys")->setCurrentIndex(0);
    child<QComboBox>(*panel_, "cacheValues")->setCurrentIndex(0);
    // A burst of edits: nothing yet, then one announcement with the last state.
    QCOMPARE(spy.count(), 0);
    QTRY_COMPARE(spy.count(), 1);
    QTest::qWait(3 * SettingsPanel::kEditDebounceMs);
    QCOMPARE(spy.count(), 1);
    const auto announced = spy.at(0).at(0).value<EngineSettings>();
    QCOMPARE(announced, panel_->settings());
    QCOMPARE(announced.max_context, 40960);
    QCOMPARE(announced.cache_format, QStringLiteral("fp16"));
  }

  void settingsEditedWaitsForQuiet() {
    QElapsedTimer clock;
    qint64 announced_after = -1;
    connect(panel_.get(), &SettingsPanel::settingsEdited, this,
            [&] { announced_after = clock.elapsed(); });
    clock.start();
    child<QDoubleSpinBox>(*panel_, "temperature")->setValue(0.3);
    QTRY_VERIFY(announced_after >= 0);
    // Coarse timers may fire up to 5% early.
    QVERIFY2(announced_after >= SettingsPanel::kEditDebounceMs * 95 / 100,
             qPrintable(QString::number(announced_after)));
  }

  void setSettingsDoesNotAnnounce() {
    QSignalSpy spy(panel_.get(), &SettingsPanel::settingsEdited);
    EngineSettings other = sample_;
    other.cache_format = QStringLiteral("q8");
    panel_->setSettings(other);
    panel_->setAvailableDevices(quire::ui::test::two_gpus());
    QTest::qWait(3 * SettingsPanel::kEditDebounceMs);
    QCOMPARE(spy.count(), 0);
  }

  void manualFieldsOnlyInManualMode() {
    auto* gb = child<QLineEdit>(*panel_, "manualGb_1");
    QVERIFY(gb != nullptr);
    QVERIFY(!gb->isHidden());
    auto* split = child<QComboBox>(*panel_, "split");
    split->setCurrentIndex(split->findData(QStringLiteral("balanced")));
    QVERIFY(gb->isHidden());
    QVERIFY(child<QLineEdit>(*panel_, "manualGb_0")->isHidden());
    split->setCurrentIndex(split->findData(QStringLiteral("manual")));
    QVERIFY(!gb->isHidden());
    // The GB of a device left out cannot be edited.
    QVERIFY(!child<QLineEdit>(*panel_, "manualGb_0")->isEnabled());
    QVERIFY(gb->isEnabled());
  }

  void manualGbMissingIsShownInline() {
    auto* issue = child<QLabel>(*panel_, "manualGbIssue");
    auto* apply = child<QPushButton>(*panel_, "applyButton");
    QVERIFY(issue->isHidden());
    child<QCheckBox>(*panel_, "device_0")->setChecked(true);
    QVERIFY(!issue->isHidden());
    QCOMPARE(issue->text(), QStringLiteral("Enter the GB Quire may use on cuda0: NVIDIA GeForce "
                                           "RTX 4090, or leave the device out."));
    QVERIFY(!apply->isEnabled());
    QCOMPARE(panel_->issues().size(), 1);
    child<QLineEdit>(*panel_, "manualGb_0")->setText(QStringLiteral("8"));
    QVERIFY(issue->isHidden());
    QVERIFY(apply->isEnabled());
  }

  void noDeviceCheckedIsShownInline() {
    auto* issue = child<QLabel>(*panel_, "devicesIssue");
    child<QCheckBox>(*panel_, "device_1")->setChecked(false);
    QVERIFY(!issue->isHidden());
    QCOMPARE(issue->text(), QStringLiteral("Choose at least one device, or use every device."));
    QVERIFY(!child<QPushButton>(*panel_, "applyButton")->isEnabled());
    child<QCheckBox>(*panel_, "useAllDevices")->setChecked(true);
    QVERIFY(issue->isHidden());
    QVERIFY(panel_->settings().devices.isEmpty());
  }

  void missingDeviceKeepsItsRow() {
    EngineSettings settings = sample_;
    settings.split = Split::Fill;
    settings.devices = {1, 3};
    panel_->setSettings(settings);
    QCOMPARE(panel_->settings(), settings);
    auto* missing = child<QCheckBox>(*panel_, "device_3");
    QVERIFY(missing != nullptr);
    QCOMPARE(missing->text(), QStringLiteral("Device 3 (not found)"));
    QCOMPARE(child<QLabel>(*panel_, "devicesIssue")->text(),
             QStringLiteral("Device 3 is not present on this computer."));
    // The backend finds more devices: the choice stays.
    panel_->setAvailableDevices(quire::ui::test::two_gpus()
                                << QStringLiteral("cuda2: A") << QStringLiteral("cuda3: B"));
    QCOMPARE(panel_->settings().devices, (QList<int>{1, 3}));
    QCOMPARE(child<QCheckBox>(*panel_, "device_3")->text(), QStringLiteral("cuda3: B"));
    QVERIFY(child<QLabel>(*panel_, "devicesIssue")->isHidden());
  }

  void cacheSmallerThanContextIsShownInline() {
    child<QSpinBox>(*panel_, "cacheTokens")->setValue(8192);
    auto* issue = child<QLabel>(*panel_, "cacheTokensIssue");
    QVERIFY(!issue->isHidden());
    QCOMPARE(issue->text(),
             QStringLiteral("The cache holds %1 tokens, fewer than one full context of %2.")
                 .arg(QLocale().toString(8192), QLocale().toString(16384)));
    QVERIFY(!child<QPushButton>(*panel_, "applyButton")->isEnabled());
  }

  // The reason Apply is off stands beside it, where the field that says so
  // may be scrolled out of sight, and the plan does not call it a fit.
  void theReasonApplyIsOffStandsBesideIt() {
    panel_->setPlan(quire::ui::test::fitting_plan());
    auto* verdict = child<QLabel>(*panel_, "planVerdict");
    QCOMPARE(verdict->text(), QStringLiteral("fits"));
    auto* apply = child<QPushButton>(*panel_, "applyButton");
    auto* reason = child<QLabel>(*panel_, "applyBlockedReason");
    QVERIFY(reason->isHidden());
    child<QSpinBox>(*panel_, "cacheTokens")->setValue(8192);
    QVERIFY(!apply->isEnabled());
    const QString issue =
        QStringLiteral("The cache holds %1 tokens, fewer than one full context of %2.")
            .arg(QLocale().toString(8192), QLocale().toString(16384));
    QVERIFY(!reason->isHidden());
    QCOMPARE(reason->text(), QStringLiteral("Apply is off: ") + issue);
    QCOMPARE(reason->parentWidget(), apply->parentWidget());
    QCOMPARE(verdict->text(), QStringLiteral("cannot be applied as set: ") + issue);
    QVERIFY(!verdict->styleSheet().contains(QStringLiteral("#2e7d32")));
    // Mended, the reason goes and the plan fits again.
    child<QSpinBox>(*panel_, "cacheTokens")->setValue(16384);
    QVERIFY(reason->isHidden());
    QCOMPARE(verdict->text(), QStringLiteral("fits"));
    QVERIFY(apply->isEnabled());
  }

  void applyLiveChange() {
    auto* apply = child<QPushButton>(*panel_, "applyButton");
    auto* revert = child<QPushButton>(*panel_, "revertButton");
    QVERIFY(!apply->isEnabled());
    QVERIFY(!revert->isEnabled());
    QSignalSpy spy(panel_.get(), &SettingsPanel::applyRequested);
    child<QDoubleSpinBox>(*panel_, "temperature")->setValue(1.1);
    QCOMPARE(apply->text(), QStringLiteral("Apply"));
    QVERIFY(child<QLabel>(*panel_, "reloadNote")->isHidden());
    QVERIFY(apply->isEnabled());
    apply->click();
    QCOMPARE(spy.count(), 1);
    QCOMPARE(spy.at(0).at(0).value<EngineSettings>().sampling.temperature, 1.1);
    QCOMPARE(spy.at(0).at(1).toBool(), false);
    QCOMPARE(panel_->appliedSettings(), panel_->settings());
    QVERIFY(!apply->isEnabled());
    QVERIFY(!revert->isEnabled());
  }

  void applyChangeThatReloads() {
    auto* apply = child<QPushButton>(*panel_, "applyButton");
    QSignalSpy spy(panel_.get(), &SettingsPanel::applyRequested);
    for (const char* half : {"cacheKeys", "cacheValues"}) {
      auto* coding = child<QComboBox>(*panel_, half);
      coding->setCurrentIndex(coding->findData(QStringLiteral("fp8")));
    }
    QCOMPARE(apply->text(), QStringLiteral("Apply and reload model"));
    auto* note = child<QLabel>(*panel_, "reloadNote");
    QVERIFY(!note->isHidden());
    QCOMPARE(note->text(), QStringLiteral("Applying reloads the model for: cache format."));
    child<QSpinBox>(*panel_, "hostCacheMib")->setValue(0);
    QCOMPARE(note->text(),
             QStringLiteral("Applying reloads the model for: cache format, host cache."));
    apply->click();
    QCOMPARE(spy.count(), 1);
    QCOMPARE(spy.at(0).at(0).value<EngineSettings>().cache_format, QStringLiteral("fp8"));
    QCOMPARE(spy.at(0).at(1).toBool(), true);
    QCOMPARE(apply->text(), QStringLiteral("Apply"));
    QVERIFY(note->isHidden());
  }

  void revertRestoresAndReprices() {
    QSignalSpy edited(panel_.get(), &SettingsPanel::settingsEdited);
    child<QDoubleSpinBox>(*panel_, "reserveMib")->setValue(2048);
    child<QLineEdit>(*panel_, "modelDirectory")->setText(QStringLiteral("/elsewhere"));
    QVERIFY(panel_->hasUnappliedChanges());
    child<QPushButton>(*panel_, "revertButton")->click();
    QCOMPARE(panel_->settings(), sample_);
    QVERIFY(!panel_->hasUnappliedChanges());
    QVERIFY(!child<QPushButton>(*panel_, "revertButton")->isEnabled());
    // The plan on screen was for the edits: the restored settings are priced.
    QTRY_COMPARE(edited.count(), 1);
    QCOMPARE(edited.at(0).at(0).value<EngineSettings>(), sample_);
  }

  void browseUsesTheChooser() {
    QString asked_from;
    panel_->setDirectoryChooser([&](QWidget*, const QString& start) {
      asked_from = start;
      return QStringLiteral("/models/Chosen-exl2");
    });
    child<QPushButton>(*panel_, "browseModel")->click();
    QCOMPARE(asked_from, model_.path());
    QCOMPARE(panel_->settings().model_directory, QStringLiteral("/models/Chosen-exl2"));
    panel_->setDirectoryChooser([](QWidget*, const QString&) { return QString(); });
    child<QPushButton>(*panel_, "browseModel")->click();
    QCOMPARE(panel_->settings().model_directory, QStringLiteral("/models/Chosen-exl2"));
  }

  void recentModelFillsTheFolder() {
    auto* recent = child<QComboBox>(*panel_, "recentModels");
    QCOMPARE(recent->count(), 2);
    emit recent->activated(1);
    QCOMPARE(panel_->settings().model_directory, sample_.recent_models.at(1));
    QCOMPARE(panel_->settings().recent_models, sample_.recent_models);
  }

  void promptFormatsKeepTheChoice() {
    panel_->setPromptFormats({QStringLiteral("mistral"), QStringLiteral("chatml")});
    QCOMPARE(panel_->settings().prompt_format, QStringLiteral("chatml"));
    auto* formats = child<QComboBox>(*panel_, "promptFormat");
    QCOMPARE(formats->count(), 3);
    QCOMPARE(formats->itemData(0).toString(), QStringLiteral("auto"));
    QVERIFY(!panel_->hasUnappliedChanges());
  }

  void unknownValuesDoNotPileUp() {
    EngineSettings odd = sample_;
    odd.backend = QStringLiteral("rocm");
    odd.prompt_format = QStringLiteral("vicuna");
    panel_->setSettings(odd);
    QCOMPARE(child<QComboBox>(*panel_, "backend")->count(), 4);
    panel_->setSettings(sample_);
    QCOMPARE(child<QComboBox>(*panel_, "backend")->count(), 3);
    QCOMPARE(child<QComboBox>(*panel_, "promptFormat")->count(), 3);
    QCOMPARE(panel_->settings(), sample_);
  }

  void cacheCodingsAreChosenApartAndExplained() {
    auto* keys = child<QComboBox>(*panel_, "cacheKeys");
    auto* values = child<QComboBox>(*panel_, "cacheValues");
    auto* summary = child<QLabel>(*panel_, "cacheFormatSummary");
    QCOMPARE(keys->count(), 4);
    QCOMPARE(values->count(), 4);
    QCOMPARE(values->itemText(values->findData(QStringLiteral("q4"))),
             QStringLiteral("Q4 — 4-bit integers, a scale per 32 values, 4.5 bits per value"));
    // The sample's Q4 cache.
    QCOMPARE(summary->text(), QStringLiteral("Q4 — Q4 keys and values, 4.5 bits per value"));
    keys->setCurrentIndex(keys->findData(QStringLiteral("q8")));
    QCOMPARE(summary->text(), QStringLiteral("Q6 — Q8 keys, Q4 values, 6.5 bits per value"));
    keys->setCurrentIndex(keys->findData(QStringLiteral("fp8")));
    QCOMPARE(summary->text(),
             QStringLiteral("K FP8, V Q4 — FP8 keys, Q4 values, 6.25 bits per value"));
    QCOMPARE(panel_->settings().cache_format, QStringLiteral("kf8v4"));
    // A stored pair selects both halves.
    EngineSettings stored = sample_;
    stored.cache_format = QStringLiteral("k16v8");
    panel_->setSettings(stored);
    QCOMPARE(keys->currentData().toString(), QStringLiteral("fp16"));
    QCOMPARE(values->currentData().toString(), QStringLiteral("q8"));
    QCOMPARE(summary->text(),
             QStringLiteral("K FP16, V Q8 — FP16 keys, Q8 values, 12.25 bits per value"));
  }

 private:
  QTemporaryDir model_;
  EngineSettings sample_;
  std::unique_ptr<SettingsPanel> panel_;
};

QUIRE_TEST(TestSettingsPanel)
#include "test_settings_panel.moc"
