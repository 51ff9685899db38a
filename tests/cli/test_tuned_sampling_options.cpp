#include <CLI/CLI.hpp>
#include <QTest>
#include <string>
#include <vector>

#include "test_main.h"
#include "tuned_sampling_options.h"

using quire::cli::TunedSamplingOptions;
using quire::engine::SamplingSettings;

namespace {

// Parses `arguments` as a command with the tuned sampling options and
// returns the settings they give; `error` receives CLI11's refusal, if any.
SamplingSettings parsed(std::vector<std::string> arguments, std::string* error = nullptr) {
  CLI::App app("test");
  TunedSamplingOptions options;
  options.add_to(app);
  std::vector<std::string> reversed(arguments.rbegin(), arguments.rend());
  SamplingSettings settings;
  try {
    app.parse(reversed);
  } catch (const CLI::ParseError& failure) {
    if (error) *error = failure.what();
    return settings;
  }
  options.apply(settings);
  return settings;
}

}  // namespace

class TunedSamplingOptionsTest : public QObject {
  Q_OBJECT

 private slots:
  void withoutOptionsTheDefaultsStay() {
    const SamplingSettings settings = parsed({});
    const SamplingSettings defaults;
    QCOMPARE(settings.dry_multiplier, defaults.dry_multiplier);
    QCOMPARE(settings.dry_sequence_breakers, defaults.dry_sequence_breakers);
    QCOMPARE(settings.xtc_probability, defaults.xtc_probability);
    QCOMPARE(settings.mirostat, 0);
  }

  void everyOptionReachesTheSettings() {
    const SamplingSettings s = parsed({"--dry-multiplier",
                                       "0.8",
                                       "--dry-base",
                                       "2",
                                       "--dry-allowed-length",
                                       "3",
                                       "--dry-range",
                                       "512",
                                       "--dry-sequence-breaker",
                                       "\\n",
                                       "--dry-sequence-breaker",
                                       "###",
                                       "--xtc-threshold",
                                       "0.2",
                                       "--xtc-probability",
                                       "0.5",
                                       "--top-n-sigma",
                                       "1.5",
                                       "--mirostat",
                                       "2",
                                       "--mirostat-tau",
                                       "4",
                                       "--mirostat-eta",
                                       "0.2"});
    QCOMPARE(s.dry_multiplier, 0.8f);
    QCOMPARE(s.dry_base, 2.0f);
    QCOMPARE(s.dry_allowed_length, 3);
    QCOMPARE(s.dry_range, 512);
    QCOMPARE(s.dry_sequence_breakers, (std::vector<std::string>{"\n", "###"}));
    QCOMPARE(s.xtc_threshold, 0.2f);
    QCOMPARE(s.xtc_probability, 0.5f);
    QCOMPARE(s.top_n_sigma, 1.5f);
    QCOMPARE(s.mirostat, 2);
    QCOMPARE(s.mirostat_tau, 4.0f);
    QCOMPARE(s.mirostat_eta, 0.2f);
  }

  void noneClearsTheBreakers() {
    QVERIFY(parsed({"--dry-sequence-breaker", "none"}).dry_sequence_breakers.empty());
  }

  void escapesAreDecoded() {
    QCOMPARE(quire::cli::decode_escapes("a\\tb\\\\c\\\"d\\x"), std::string("a\tb\\c\"d\\x"));
  }

  void outOfRangeValuesAreRefusedByOption_data() {
    QTest::addColumn<QString>("option");
    QTest::addColumn<QString>("value");
    QTest::newRow("negative multiplier") << "--dry-multiplier"
                                         << "-1";
    QTest::newRow("base below 1") << "--dry-base"
                                  << "0.5";
    QTest::newRow("allowed length 0") << "--dry-allowed-length"
                                      << "0";
    QTest::newRow("negative range") << "--dry-range"
                                    << "-2";
    QTest::newRow("threshold above 1") << "--xtc-threshold"
                                       << "1.5";
    QTest::newRow("probability above 1") << "--xtc-probability"
                                         << "2";
    QTest::newRow("mirostat 1") << "--mirostat"
                                << "1";
    QTest::newRow("tau 0") << "--mirostat-tau"
                           << "0";
    QTest::newRow("eta above 1") << "--mirostat-eta"
                                 << "3";
  }

  void outOfRangeValuesAreRefusedByOption() {
    QFETCH(QString, option);
    QFETCH(QString, value);
    std::string error;
    parsed({option.toStdString(), value.toStdString()}, &error);
    QVERIFY2(error.find(option.toStdString()) != std::string::npos, error.c_str());
  }
};

QUIRE_TEST(TunedSamplingOptionsTest)
#include "test_tuned_sampling_options.moc"
