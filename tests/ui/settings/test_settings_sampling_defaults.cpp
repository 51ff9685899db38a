// Settings' own DRY, XTC, top-nσ and mirostat fields (what chats follow
// unless they set their own) and "Default preset for new chats": shown from
// the settings, read back by settings(), each edit announced, and the new
// fields ignore a wheel they have no focus for.

#include <QApplication>
#include <QCheckBox>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QLineEdit>
#include <QSignalSpy>
#include <QSpinBox>
#include <QTest>
#include <QWheelEvent>

#include "quire/app/cache_format_choices.h"
#include "quire/ui/settings_panel.h"
#include "test_main.h"

using quire::ui::EngineSettings;
using quire::ui::SettingsPanel;

namespace {

template <typename T>
T* field(SettingsPanel& panel, const char* name) {
  T* found = panel.findChild<T*>(QLatin1String(name));
  if (found == nullptr) qFatal("no field named %s", name);
  return found;
}

void roll_wheel_up(QWidget* target) {
  const QPointF inside(target->width() / 2.0, target->height() / 2.0);
  QWheelEvent event(inside, target->mapToGlobal(inside), QPoint(), QPoint(0, 120), Qt::NoButton,
                    Qt::NoModifier, Qt::NoScrollPhase, false);
  QApplication::sendEvent(target, &event);
}

}  // namespace

class TestSettingsSamplingDefaults : public QObject {
  Q_OBJECT

 private slots:
  void theAdvancedSamplersAreShownAndReadBack() {
    SettingsPanel panel(quire::app::cache_format_choices());
    EngineSettings settings;
    settings.sampling.tuned.dry_multiplier = 0.8;
    settings.sampling.tuned.dry_allowed_length = 3;
    settings.sampling.tuned.dry_sequence_breakers = {QStringLiteral("\n"), QStringLiteral("###")};
    settings.sampling.tuned.xtc_probability = 0.5;
    settings.sampling.tuned.top_n_sigma = 1.5;
    settings.sampling.tuned.mirostat = true;
    settings.sampling.tuned.mirostat_tau = 4;
    panel.setSettings(settings);
    QCOMPARE(field<QDoubleSpinBox>(panel, "defaultDryMultiplier")->value(), 0.8);
    QCOMPARE(field<QSpinBox>(panel, "defaultDryAllowedLength")->value(), 3);
    QCOMPARE(field<QLineEdit>(panel, "defaultDryBreakers")->text(),
             QStringLiteral("\"\\n\", \"###\""));
    QCOMPARE(field<QDoubleSpinBox>(panel, "defaultXtcProbability")->value(), 0.5);
    QCOMPARE(field<QDoubleSpinBox>(panel, "defaultTopNSigma")->value(), 1.5);
    QVERIFY(field<QCheckBox>(panel, "defaultMirostat")->isChecked());
    QCOMPARE(panel.settings().sampling.tuned, settings.sampling.tuned);
    QVERIFY(!panel.hasUnappliedChanges());

    QSignalSpy edited(&panel, &SettingsPanel::settingsEdited);
    field<QDoubleSpinBox>(panel, "defaultTopNSigma")->setValue(2);
    field<QCheckBox>(panel, "defaultMirostat")->setChecked(false);
    QVERIFY(panel.hasUnappliedChanges());
    QCOMPARE(panel.settings().sampling.tuned.top_n_sigma, 2.0);
    QVERIFY(!panel.settings().sampling.tuned.mirostat);
    QVERIFY(edited.wait(2000));
    QCOMPARE(edited.constLast().first().value<EngineSettings>().sampling.tuned.top_n_sigma, 2.0);
  }

  void theDefaultPresetOffersTheLibrary() {
    SettingsPanel panel(quire::app::cache_format_choices());
    panel.setPresetNames({QStringLiteral("Precise"), QStringLiteral("Code")});
    auto* box = field<QComboBox>(panel, "defaultPreset");
    QCOMPARE(box->count(), 3);
    QCOMPARE(box->itemText(0), QStringLiteral("None"));
    QCOMPARE(panel.settings().default_preset, QString());
    EngineSettings settings;
    settings.default_preset = QStringLiteral("Code");
    panel.setSettings(settings);
    QCOMPARE(box->currentText(), QStringLiteral("Code"));
    QCOMPARE(panel.settings().default_preset, QStringLiteral("Code"));
    box->setCurrentIndex(0);
    QCOMPARE(panel.settings().default_preset, QString());
    QVERIFY(panel.hasUnappliedChanges());
    // A preset the library no longer has stays chosen, by name, until changed.
    settings.default_preset = QStringLiteral("Gone");
    panel.setSettings(settings);
    QCOMPARE(box->currentText(), QStringLiteral("Gone"));
    QCOMPARE(panel.settings().default_preset, QStringLiteral("Gone"));
    // A new list keeps the choice.
    panel.setPresetNames({QStringLiteral("Code"), QStringLiteral("Gone")});
    QCOMPARE(panel.settings().default_preset, QStringLiteral("Gone"));
  }

  void theNewFieldsIgnoreAWheelWithoutFocus() {
    SettingsPanel panel(quire::app::cache_format_choices());
    panel.setPresetNames({QStringLiteral("Precise"), QStringLiteral("Code")});
    panel.setSettings(EngineSettings{});
    auto* dry = field<QDoubleSpinBox>(panel, "defaultDryMultiplier");
    auto* preset = field<QComboBox>(panel, "defaultPreset");
    roll_wheel_up(dry);
    roll_wheel_up(preset);
    QCOMPARE(dry->value(), 0.0);
    QCOMPARE(preset->currentIndex(), 0);
    QVERIFY(!panel.hasUnappliedChanges());
  }
};

QUIRE_TEST(TestSettingsSamplingDefaults)
#include "test_settings_sampling_defaults.moc"
