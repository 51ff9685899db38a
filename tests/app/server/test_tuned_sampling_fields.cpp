// DRY, XTC, top-nσ and mirostat in a request body: the names llama.cpp's
// server and TabbyAPI use, what they become in the sampler's settings, and
// the exact 400 for each bad value.

#include <QTest>

#include "quire/server/api_error.h"
#include "quire/server/completion_job.h"
#include "quire/server/openai_request.h"
#include "quire/server/openai_server.h"
#include "test_main.h"

using quire::server::ApiException;
using quire::server::parse_chat_completion_request;
using quire::server::parse_completion_request;
using quire::server::SamplingFields;

Q_DECLARE_METATYPE(std::string)

namespace {

SamplingFields tuned_fields(const std::string& fields) {
  return parse_chat_completion_request(
             "{\"messages\": [{\"role\": \"user\", \"content\": \"Hi\"}], " + fields + "}")
      .sampling;
}

}  // namespace

class TunedSamplingFieldsTest : public QObject {
  Q_OBJECT

 private slots:
  void llamaCppNamesReachTheSettings() {
    const SamplingFields fields = tuned_fields(
        "\n      \"dry_multiplier\": 0.8, \"dry_base\": 1.75, \"dry_allowed_length\": 3,\n      "
        "\"dry_penalty_last_n\": 256, \"dry_sequence_breakers\": [\"\\n\", \"###\"],\n      "
        "\"xtc_threshold\": 0.1, \"xtc_probability\": 0.5, \"top_n_sigma\": 1.5,\n      "
        "\"mirostat\": 2, \"mirostat_tau\": 4, \"mirostat_eta\": 0.2");
    const quire::engine::SamplingSettings s =
        quire::server::openai_sampling(fields, {"demo", 256, 512});
    QCOMPARE(s.dry_multiplier, 0.8f);
    QCOMPARE(s.dry_base, 1.75f);
    QCOMPARE(s.dry_allowed_length, 3);
    QCOMPARE(s.dry_range, 256);
    QCOMPARE(s.dry_sequence_breakers, (std::vector<std::string>{"\n", "###"}));
    QCOMPARE(s.xtc_threshold, 0.1f);
    QCOMPARE(s.xtc_probability, 0.5f);
    QCOMPARE(s.top_n_sigma, 1.5f);
    QCOMPARE(s.mirostat, 2);
    QCOMPARE(s.mirostat_tau, 4.0f);
    QCOMPARE(s.mirostat_eta, 0.2f);
  }

  void tabbyApiNamesToo() {
    const SamplingFields fields =
        tuned_fields("\"dry_range\": 0, \"nsigma\": 2, \"mirostat_mode\": 2");
    QCOMPARE(fields.dry_range, std::optional<std::int64_t>(0));
    QCOMPARE(fields.top_n_sigma, std::optional<double>(2));
    QCOMPARE(fields.mirostat, std::optional<std::int64_t>(2));
    const SamplingFields completion =
        parse_completion_request("{\"prompt\": \"a\", \"xtc_probability\": 1, \"dry_range\": 64}")
            .sampling;
    QCOMPARE(completion.xtc_probability, std::optional<double>(1));
    QCOMPARE(completion.dry_range, std::optional<std::int64_t>(64));
  }

  void dryPenaltyLastNKeepsLlamaCppsMeaning() {
    // -1: the whole context; 0: DRY off.
    QCOMPARE(tuned_fields("\"dry_penalty_last_n\": -1").dry_range, std::optional<std::int64_t>(0));
    const SamplingFields off = tuned_fields("\"dry_multiplier\": 1, \"dry_penalty_last_n\": 0");
    QCOMPARE(off.dry_multiplier, std::optional<double>(0));
    QVERIFY(!off.dry_range);
  }

  void silentRequestsKeepEverythingOff() {
    const quire::engine::SamplingSettings s =
        quire::server::openai_sampling(tuned_fields("\"seed\": 1"), {"demo", 256, 512});
    QVERIFY(!s.dry_on() && !s.xtc_on() && !s.top_n_sigma_on() && !s.mirostat_on());
  }

  void badValuesAre400s_data() {
    QTest::addColumn<std::string>("fields");
    QTest::addColumn<QString>("message");
    QTest::addColumn<QString>("param");
    QTest::newRow("multiplier") << std::string("\"dry_multiplier\": -1")
                                << "dry_multiplier must be between 0 and 100; it is -1."
                                << "dry_multiplier";
    QTest::newRow("base") << std::string("\"dry_base\": 0.5")
                          << "dry_base must be between 1 and 100; it is 0.5."
                          << "dry_base";
    QTest::newRow("allowed length")
        << std::string("\"dry_allowed_length\": 0")
        << "dry_allowed_length must be an integer from 1 to 2147483647; "
           "it is 0."
        << "dry_allowed_length";
    QTest::newRow("range") << std::string("\"dry_range\": -1")
                           << "dry_range must be an integer from 0 to 2147483647; it is -1."
                           << "dry_range";
    QTest::newRow("both range names")
        << std::string("\"dry_range\": 5, \"dry_penalty_last_n\": 5")
        << "dry_range and dry_penalty_last_n are two names for one setting; send one of them."
        << "dry_range";
    QTest::newRow("breakers not a list")
        << std::string("\"dry_sequence_breakers\": \"\\n\"")
        << "dry_sequence_breakers must be an array of strings, not a string."
        << "dry_sequence_breakers";
    QTest::newRow("empty breaker") << std::string("\"dry_sequence_breakers\": [\"a\", \"\"]")
                                   << "dry_sequence_breakers[1] must hold 1 to 64 bytes."
                                   << "dry_sequence_breakers";
    QTest::newRow("threshold") << std::string("\"xtc_threshold\": 1.5")
                               << "xtc_threshold must be between 0 and 1; it is 1.5."
                               << "xtc_threshold";
    QTest::newRow("probability") << std::string("\"xtc_probability\": \"0.5\"")
                                 << "xtc_probability must be a number, not a string."
                                 << "xtc_probability";
    QTest::newRow("nsigma") << std::string("\"nsigma\": 1000")
                            << "nsigma must be between -100 and 100; it is 1000."
                            << "nsigma";
    QTest::newRow("mirostat 1") << std::string("\"mirostat\": 1")
                                << "mirostat 1 (the first mirostat) is not supported; use 2 for "
                                   "mirostat v2, or 0."
                                << "mirostat";
    QTest::newRow("mirostat_mode 3") << std::string("\"mirostat_mode\": 3")
                                     << "mirostat_mode must be an integer from 0 to 2; it is 3."
                                     << "mirostat_mode";
    QTest::newRow("tau") << std::string("\"mirostat_tau\": 0")
                         << "mirostat_tau must be between 0.01 and 100; it is 0."
                         << "mirostat_tau";
    QTest::newRow("eta") << std::string("\"mirostat_eta\": 2")
                         << "mirostat_eta must be between 0.001 and 1; it is 2."
                         << "mirostat_eta";
  }

  void badValuesAre400s() {
    QFETCH(std::string, fields);
    QFETCH(QString, message);
    QFETCH(QString, param);
    try {
      tuned_fields(fields);
      QFAIL("the request was accepted");
    } catch (const ApiException& error) {
      QCOMPARE(error.error().status, 400);
      QCOMPARE(QString::fromStdString(error.error().message), message);
      QCOMPARE(QString::fromStdString(error.error().param), param);
    }
  }
};

QUIRE_TEST(TunedSamplingFieldsTest)
#include "test_tuned_sampling_fields.moc"
