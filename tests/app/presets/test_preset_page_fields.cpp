// Every field a preset file holds survives an edit on the presets page: the
// page shows a preset through the same conversion as the chat settings
// dialog, so the advanced samplers, the context policy, the banned strings
// and the biases by text are kept.

#include <QFile>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>
#include <QTest>

#include "quire/app/presets/presets_page.h"
#include "quire/ui/chat_settings_panel.h"
#include "test_main.h"

using quire::presets::PresetLibrary;
using quire::presets::PresetsPage;

class TestPresetPageFields : public QObject {
  Q_OBJECT

 private slots:
  void anEditKeepsTheAdvancedSamplersAndTheContextPolicy() {
    QTemporaryDir dir;
    const QString file = dir.filePath(QStringLiteral("tuned.json"));
    {
      QFile out(file);
      QVERIFY(out.open(QIODevice::WriteOnly));
      out.write(R"({"format": "quire-preset", "version": 1, "name": "Tuned",
                    "settings": {"temperature": 0.9, "context_overflow": "truncate_middle",
                                 "banned_strings": ["As an AI"], "logit_bias": {" Sure": -5},
                                 "tuned_sampling": {"dry_multiplier": 0.8, "dry_allowed_length": 3,
                                                    "xtc_probability": 0.5, "top_n_sigma": 1.5,
                                                    "mirostat": 2, "mirostat_tau": 4}}})");
    }
    PresetLibrary library(dir.filePath(QStringLiteral("presets")));
    PresetsPage page(library);
    QVERIFY(page.importFile(file));
    const quire::store::ChatSettings before = library.find(QStringLiteral("Tuned"))->settings;
    QVERIFY(before.tuned_sampling.has_value());

    // The page shows them ...
    quire::ui::ChatOverrides shown = page.editor()->overrides();
    QVERIFY(shown.tuned_sampling.has_value());
    QCOMPARE(shown.tuned_sampling->dry_multiplier, 0.8);
    QCOMPARE(shown.tuned_sampling->mirostat, true);
    QCOMPARE(shown.context_overflow, std::optional<QString>(QStringLiteral("truncate_middle")));
    QCOMPARE(shown.banned_strings, QStringList{QStringLiteral("As an AI")});

    // ... and an edit of another field saves them unchanged.
    shown.temperature = 0.7;
    page.editor()->setOverrides(shown);
    QVERIFY(page.saveSelected());
    const quire::store::ChatSettings after = library.find(QStringLiteral("Tuned"))->settings;
    QCOMPARE(after.temperature, std::optional<double>(0.7));
    QCOMPARE(after.tuned_sampling, before.tuned_sampling);
    QCOMPARE(after.tuned_sampling->top_n_sigma, 1.5);
    QCOMPARE(after.tuned_sampling->mirostat_tau, 4.0);
    QCOMPARE(after.context_overflow, std::optional<QString>(QStringLiteral("truncate_middle")));
    QCOMPARE(after.banned_strings, before.banned_strings);
    QCOMPARE(after.logit_bias_text, (QMap<QString, double>{{QStringLiteral(" Sure"), -5.0}}));
  }
};

QUIRE_TEST(TestPresetPageFields)
#include "test_preset_page_fields.moc"
