// The server's checks that need no model file: the API key, the address it
// may listen on, the model name, and OpenAI's sampling defaults.

#include <QTest>

#include "quire/server/api_error.h"
#include "quire/server/completion_job.h"
#include "quire/server/openai_server.h"
#include "test_main.h"

using namespace quire::server;

class TestServerChecks : public QObject {
  Q_OBJECT

 private slots:
  void apiKey() {
    QVERIFY(authorized("Bearer sekrit", "sekrit"));
    QVERIFY(!authorized("Bearer sekri", "sekrit"));
    QVERIFY(!authorized("Bearer sekrit2", "sekrit"));
    QVERIFY(!authorized("sekrit", "sekrit"));
    QVERIFY(!authorized("Bearer ", "sekrit"));
    QVERIFY(!authorized("Basic sekrit", "sekrit"));
  }

  void loopbackOnlyWithoutKey() {
    QVERIFY(is_loopback_host("127.0.0.1"));
    QVERIFY(is_loopback_host("127.1.2.3"));
    QVERIFY(is_loopback_host("::1"));
    QVERIFY(is_loopback_host("localhost"));
    QVERIFY(!is_loopback_host("0.0.0.0"));
    QVERIFY(!is_loopback_host("192.168.1.5"));
    QVERIFY(!is_loopback_host("::"));
    ServerOptions options;
    options.host = "0.0.0.0";
    try {
      check_exposure(options);
      QFAIL("0.0.0.0 without a key was accepted");
    } catch (const std::invalid_argument& error) {
      QVERIFY2(std::string(error.what())
                   .starts_with("--host 0.0.0.0 lets other machines reach "
                                "the server, and without --api-key"),
               error.what());
    }
    options.api_key = "k";
    check_exposure(options);
  }

  void modelName() {
    const ServedModel model{"demo", 256, 512};
    check_model("", model);
    check_model("demo", model);
    try {
      check_model("gpt-4o", model);
      QFAIL("an unknown model was accepted");
    } catch (const ApiException& error) {
      QCOMPARE(error.error().status, 404);
      QCOMPARE(error.error().code, std::string("model_not_found"));
      QCOMPARE(error.error().message,
               std::string("The model 'gpt-4o' does not exist here; this server runs 'demo'."));
    }
  }

  void openAiDefaults() {
    const ServedModel model{"demo", 256, 512};
    const quire::engine::SamplingSettings silent = openai_sampling({}, model);
    QCOMPARE(silent.temperature, 1.0f);
    QCOMPARE(silent.top_p, 1.0f);
    QCOMPARE(silent.top_k, 0);
    QCOMPARE(silent.min_p, 0.0f);
    QCOMPARE(silent.repetition_penalty, 1.0f);
    QVERIFY(!silent.seed);
    SamplingFields fields;
    fields.temperature = 0;
    fields.top_k = -1;
    fields.seed = -1;
    fields.logit_bias = {{7, -100}};
    const quire::engine::SamplingSettings greedy = openai_sampling(fields, model);
    QVERIFY(greedy.greedy());
    QCOMPARE(greedy.top_k, 0);
    QCOMPARE(greedy.seed, std::optional<std::uint64_t>(~std::uint64_t{0}));
    QCOMPARE(greedy.token_bias.at(7), -100.0f);
    fields.logit_bias = {{512, 1}};
    try {
      openai_sampling(fields, model);
      QFAIL("a bias outside the vocabulary was accepted");
    } catch (const ApiException& error) {
      QCOMPARE(error.error().message,
               std::string("logit_bias names token 512, outside the vocabulary (0 to 511)."));
    }
  }
};

QUIRE_TEST(TestServerChecks)
#include "test_server_checks.moc"
