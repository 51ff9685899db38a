// The request fields that need the tokenizer or the job's grammar:
// logit_bias given as text (llama.cpp's form) biases every token of the text,
// banned_strings (TabbyAPI's field) reach the job and keep the served reply
// free of them, and banned strings with a grammar are refused with a 400
// naming the field.

#include <QTest>

#include "quire/engine/tokenizer/text_case.h"
#include "quire/server/api_error.h"
#include "quire/server/completion_job.h"
#include "served_model.h"
#include "test_main.h"

using namespace quire;
using quire::server::ChatCompletionRequest;
using quire::server::CompletionRequest;
using quire::server::ResponseFormat;

namespace {

server::ServedModel served_model(const test::Model& model) {
  return {"small", 4096, static_cast<int>(model.description->config.vocab_size)};
}

CompletionRequest completion(const std::string& prompt) {
  CompletionRequest request;
  request.prompt = prompt;
  request.sampling.temperature = 0.0;
  request.sampling.max_tokens = 40;
  return request;
}

std::string served_text(test::Served& served, server::PreparedJob job) {
  job.request.stop_at_eos = false;
  const std::shared_ptr<server::ReplyChannel> channel = served.host.submit(std::move(job.request));
  if (!channel) return {};
  const std::vector<engine::JobResult> results = channel->wait_results();
  return results.size() == 1 ? results.front().text : std::string();
}

}  // namespace

class TextFieldsTest : public QObject {
  Q_OBJECT

 private slots:
  void textBiasCoversEveryTokenOfTheText() {
    const test::Model model(73);
    CompletionRequest request = completion("Once upon a time");
    request.sampling.logit_bias = {{5, 2.0}};
    request.sampling.logit_bias_text = {{"hello world", -7.0}};
    const server::PreparedJob job =
        server::prepare_completion_job(request, *model.tokenizer, served_model(model));
    const std::vector<std::int32_t> ids = model.tokenizer->encode("hello world", false);
    QVERIFY(ids.size() >= 2);
    std::map<std::int32_t, float> expected{{5, 2.0f}};
    for (const std::int32_t id : ids)
      expected[id] = -7.0f;
    QCOMPARE(job.request.sampling.token_bias, expected);
  }

  void bannedStringsReachTheJobAndTheReplyAvoidsThem() {
    const test::Model model(74);
    test::Served served(model, 2);
    const std::string plain =
        served_text(served, server::prepare_completion_job(completion("The story"),
                                                           *model.tokenizer, served_model(model)));
    QVERIFY(plain.size() > 12);
    const std::string banned = plain.substr(4, 6);
    CompletionRequest request = completion("The story");
    request.sampling.banned_strings = {banned};
    server::PreparedJob job =
        server::prepare_completion_job(request, *model.tokenizer, served_model(model));
    QCOMPARE(job.request.banned_strings, std::vector<std::string>{banned});
    const std::string guarded = served_text(served, std::move(job));
    QVERIFY(!guarded.empty());
    QVERIFY2(
        engine::lowercase_text(guarded).find(engine::lowercase_text(banned)) == std::string::npos,
        guarded.c_str());
    QVERIFY(guarded != plain);
  }

  void bannedStringsAndAGrammarAreRefused() {
    const test::Model model(73);
    ChatCompletionRequest request;
    request.turns.user = "Answer in JSON.";
    request.response_format.type = ResponseFormat::Type::JsonObject;
    request.sampling.banned_strings = {"null"};
    try {
      server::prepare_chat_job(request, engine::PromptFormatId::ChatML, *model.tokenizer,
                               served_model(model));
      QFAIL("banned strings were accepted with a grammar");
    } catch (const server::ApiException& error) {
      QCOMPARE(error.error().status, 400);
      QCOMPARE(error.error().param, std::string("banned_strings"));
    }
    request.response_format.type = ResponseFormat::Type::Text;
    const server::PreparedJob job = server::prepare_chat_job(
        request, engine::PromptFormatId::ChatML, *model.tokenizer, served_model(model));
    QCOMPARE(job.request.banned_strings, std::vector<std::string>{"null"});
  }
};

QUIRE_TEST(TextFieldsTest)
#include "test_text_fields.moc"
