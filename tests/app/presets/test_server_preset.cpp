// What the server (and quire-cli, which reads presets through it) takes from
// a preset: every value a chat's settings hold that a request can carry.

#include <QTest>

#include "quire/app/presets/server_catalog.h"
#include "test_main.h"

using quire::presets::Preset;
using quire::presets::request_preset_of;

class TestServerPreset : public QObject {
  Q_OBJECT

 private slots:
  void every_request_value_of_a_preset_reaches_the_request() {
    Preset preset;
    preset.name = QStringLiteral("Roleplay");
    preset.settings.system_prompt = QStringLiteral("Stay in character.");
    preset.settings.temperature = 0.9;
    preset.settings.max_new_tokens = 300;
    quire::store::TunedSampling tuned;
    tuned.dry_multiplier = 0.8;
    tuned.dry_sequence_breakers = {QStringLiteral("|")};
    tuned.xtc_probability = 0.5;
    tuned.xtc_threshold = 0.2;
    tuned.mirostat = true;
    tuned.mirostat_tau = 3;
    preset.settings.tuned_sampling = tuned;
    preset.settings.context_overflow = QStringLiteral("truncate-middle");
    preset.settings.banned_strings = {QStringLiteral("As an AI"), QStringLiteral("delve")};
    preset.settings.logit_bias_text.insert(QStringLiteral(" Sure"), -5);

    const quire::server::RequestPreset values = request_preset_of(preset);
    QCOMPARE(values.name, std::string("Roleplay"));
    QCOMPARE(values.system_prompt.value_or(""), std::string("Stay in character."));
    const quire::server::SamplingFields& sampling = values.sampling;
    QCOMPARE(sampling.temperature.value_or(-1), 0.9);
    QCOMPARE(sampling.max_tokens.value_or(-1), std::int64_t{300});
    QCOMPARE(sampling.dry_multiplier.value_or(-1), 0.8);
    QCOMPARE(sampling.dry_sequence_breakers.value_or(std::vector<std::string>{}),
             std::vector<std::string>{"|"});
    QCOMPARE(sampling.xtc_probability.value_or(-1), 0.5);
    QCOMPARE(sampling.xtc_threshold.value_or(-1), 0.2);
    QCOMPARE(sampling.mirostat.value_or(-1), std::int64_t{2});
    QCOMPARE(sampling.mirostat_tau.value_or(-1), 3.0);
    QVERIFY(values.context_overflow.has_value());
    QCOMPARE(sampling.banned_strings, (std::vector<std::string>{"As an AI", "delve"}));
    QCOMPARE(sampling.logit_bias_text, (std::map<std::string, double>{{" Sure", -5.0}}));
  }
};

QUIRE_TEST(TestServerPreset)
#include "test_server_preset.moc"
