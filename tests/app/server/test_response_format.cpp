// response_format on its way to a job: prepare_chat_job compiles the schema
// into the job's grammar, refuses what the grammar cannot enforce with a 400
// that names the keyword, and a constrained job served by the engine thread
// replies with a whole text of the grammar, ended by the grammar itself.

#include <QTest>
#include <nlohmann/json.hpp>

#include "quire/engine/grammar/grammar.h"
#include "quire/server/api_error.h"
#include "quire/server/completion_job.h"
#include "served_model.h"
#include "test_main.h"

using namespace quire;
using quire::server::ChatCompletionRequest;
using quire::server::ResponseFormat;

namespace {

ChatCompletionRequest structured_request(ResponseFormat::Type type, const std::string& schema) {
  ChatCompletionRequest request;
  request.turns.user = "Describe a point as JSON.";
  request.sampling.temperature = 0.0;
  request.sampling.max_tokens = 200;
  request.response_format.type = type;
  request.response_format.name = "point";
  request.response_format.schema = schema;
  return request;
}

server::PreparedJob prepared(const ChatCompletionRequest& request, const test::Model& model) {
  const server::ServedModel served{"small", 4096,
                                   static_cast<int>(model.description->config.vocab_size)};
  return server::prepare_chat_job(request, engine::PromptFormatId::ChatML, *model.tokenizer,
                                  served);
}

const char* const kPointSchema = R"({"type": "object",
  "properties": {"x": {"type": "integer", "minimum": -9, "maximum": 9},
                 "label": {"type": "string", "maxLength": 6, "nullable": true}},
  "required": ["x", "label"]})";

}  // namespace

class ResponseFormatTest : public QObject {
  Q_OBJECT

 private slots:
  void formatsBecomeGrammars() {
    const test::Model model(71);
    QVERIFY(!prepared(structured_request(ResponseFormat::Type::Text, {}), model).request.grammar);
    QVERIFY(
        prepared(structured_request(ResponseFormat::Type::JsonObject, {}), model).request.grammar);
    QVERIFY(prepared(structured_request(ResponseFormat::Type::JsonSchema, kPointSchema), model)
                .request.grammar);
  }

  void unenforceableKeywordsAreRefusedByName() {
    const test::Model model(71);
    try {
      prepared(structured_request(ResponseFormat::Type::JsonSchema,
                                  R"({"type": "object", "properties": {"n": {"type": "integer",
                                      "multipleOf": 3}}})"),
               model);
      QFAIL("the schema was accepted");
    } catch (const server::ApiException& error) {
      QCOMPARE(error.error().status, 400);
      QCOMPARE(error.error().param, std::string("response_format"));
      const QString message = QString::fromStdString(error.error().message);
      QVERIFY2(message.contains(QStringLiteral("\"multipleOf\" at #/properties/n")),
               qPrintable(message));
    }
  }

  void servedRepliesKeepToTheSchema() {
    const test::Model model(72);
    test::Served served(model, 4);
    const auto grammar = engine::grammar::compile_json_schema_text(kPointSchema);
    for (const double temperature : {0.0, 1.0}) {
      ChatCompletionRequest request =
          structured_request(ResponseFormat::Type::JsonSchema, kPointSchema);
      request.sampling.temperature = temperature;
      request.sampling.seed = 3;
      server::PreparedJob job = prepared(request, model);
      const std::shared_ptr<server::ReplyChannel> channel =
          served.host.submit(std::move(job.request));
      QVERIFY(channel);
      const std::vector<engine::JobResult> results = channel->wait_results();
      QCOMPARE(results.size(), std::size_t(1));
      QCOMPARE(results.front().stop_reason, engine::StopReason::Eos);
      QVERIFY2(engine::grammar::grammar_matches(*grammar, results.front().text),
               results.front().text.c_str());
      QVERIFY(nlohmann::json::parse(results.front().text).is_object());
    }
  }
};

QUIRE_TEST(ResponseFormatTest)
#include "test_response_format.moc"
