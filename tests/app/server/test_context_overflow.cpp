// The server's "context_overflow" field: parsed in every spelling it takes,
// refused by name otherwise; a chat that outgrows the context answered 400
// context_length_exceeded under stop (the default), and shortened by whole
// turns under drop_oldest and truncate_middle, with what went in usage.

#include <QTest>
#include <nlohmann/json.hpp>
#include <string>

#include "quire/server/api_error.h"
#include "quire/server/completion_job.h"
#include "quire/server/openai_request.h"
#include "quire/server/openai_response.h"
#include "served_model.h"
#include "test_main.h"

using namespace quire;
using namespace quire::engine;
using quire::server::ApiException;
using quire::server::ChatCompletionRequest;

namespace {

// Eight exchanges and a question: with the small model's tokenizer and
// ChatML, a preamble of 33 tokens, eight turns of 84 and a question of 52,
// 757 in all: more than the 700-token context the tests serve it with. With
// 16 kept for the reply the room is 684 and the target half of it, 342.
ChatCompletionRequest long_chat_request() {
  ChatCompletionRequest request;
  request.turns.system = "You are brief.";
  for (int turn = 0; turn < 8; ++turn) {
    request.turns.history.push_back(
        {"question " + std::to_string(turn) + " about the sea and the ships on it",
         "answer " + std::to_string(turn) + " about the harbour and its lights"});
  }
  request.turns.user = "the newest question about the tide";
  request.sampling.max_tokens = 16;
  return request;
}

server::ServedModel served(const quire::test::Model& model, std::int64_t context) {
  return {"small", context, static_cast<int>(model.description->config.vocab_size)};
}

std::string body_with(const std::string& field) {
  return R"({"messages": [{"role": "user", "content": "hi"}], "context_overflow": )" + field + "}";
}

}  // namespace

class ContextOverflowRequestTest : public QObject {
  Q_OBJECT

 private slots:
  void theFieldParsesInEverySpelling_data() {
    QTest::addColumn<QString>("spelling");
    QTest::addColumn<int>("policy");
    const int stop = static_cast<int>(ContextPolicy::Stop);
    const int oldest = static_cast<int>(ContextPolicy::DropOldest);
    const int middle = static_cast<int>(ContextPolicy::TruncateMiddle);
    QTest::newRow("stop") << "stop" << stop;
    QTest::newRow("drop_oldest") << "drop_oldest" << oldest;
    QTest::newRow("truncate_middle") << "truncate_middle" << middle;
    QTest::newRow("drop-oldest") << "drop-oldest" << oldest;
    QTest::newRow("truncate-middle") << "truncate-middle" << middle;
    QTest::newRow("stopAtLimit") << "stopAtLimit" << stop;
    QTest::newRow("rollingWindow") << "rollingWindow" << oldest;
    QTest::newRow("truncateMiddle") << "truncateMiddle" << middle;
  }

  void theFieldParsesInEverySpelling() {
    QFETCH(QString, spelling);
    QFETCH(int, policy);
    const ChatCompletionRequest request =
        server::parse_chat_completion_request(body_with("\"" + spelling.toStdString() + "\""));
    QCOMPARE(request.context_overflow, std::optional(static_cast<ContextPolicy>(policy)));
    QCOMPARE(server::parse_chat_completion_request(body_with("null")).context_overflow,
             std::optional<ContextPolicy>());
  }

  void otherValuesAreRefusedByName() {
    for (const std::string field : {"\"rolling\"", "3", "true"}) {
      try {
        server::parse_chat_completion_request(body_with(field));
        QFAIL(field.c_str());
      } catch (const ApiException& error) {
        QCOMPARE(error.error().status, 400);
        QCOMPARE(error.error().param, std::string("context_overflow"));
        QVERIFY2(error.error().message.find("must be \"stop\", \"drop_oldest\" or "
                                            "\"truncate_middle\"") != std::string::npos,
                 error.error().message.c_str());
      }
    }
  }

  // Stop, asked for or by default: 400 context_length_exceeded, saying how
  // to make it fit and which policies drop turns instead.
  void stopAnswers400() {
    const quire::test::Model model(7);
    for (const std::optional<ContextPolicy> policy :
         {std::optional<ContextPolicy>(), std::optional(ContextPolicy::Stop)}) {
      ChatCompletionRequest request = long_chat_request();
      request.context_overflow = policy;
      try {
        server::prepare_chat_job(request, PromptFormatId::ChatML, *model.tokenizer,
                                 served(model, 700));
        QFAIL("no error");
      } catch (const ApiException& error) {
        QCOMPARE(error.error().status, 400);
        QCOMPARE(error.error().code, std::string("context_length_exceeded"));
        QCOMPARE(error.error().param, std::string("messages"));
        const std::string& message = error.error().message;
        QVERIFY2(message.find("maximum context length is 700 tokens") != std::string::npos,
                 message.c_str());
        QVERIFY2(message.find("\"context_overflow\": \"drop_oldest\" or \"truncate_middle\"") !=
                     std::string::npos,
                 message.c_str());
      }
    }
  }

  // Truncate-middle keeps the first question and the newest turns; usage
  // says which turns went and what the cache reads again.
  void truncateMiddleShortensTheChat() {
    const quire::test::Model model(7);
    ChatCompletionRequest request = long_chat_request();
    request.context_overflow = ContextPolicy::TruncateMiddle;
    const server::PreparedJob job = server::prepare_chat_job(request, PromptFormatId::ChatML,
                                                             *model.tokenizer, served(model, 700));
    QVERIFY(job.context_drop);
    QCOMPARE(job.context_drop->policy, std::string("truncate_middle"));
    // 757 - 5 × 84 = 337 <= 342: turns 2-6 go, the first and the last two stay.
    QCOMPARE(job.context_drop->first_dropped_turn, 2);
    QCOMPARE(job.context_drop->dropped_turns, 5);
    QCOMPARE(job.context_drop->dropped_tokens, std::int64_t{420});
    QCOMPARE(job.prompt_tokens, std::int64_t{337});
    QCOMPARE(job.request.max_new_tokens, 16);
    const std::string prompt = model.tokenizer->decode(job.request.prompt, false);
    QVERIFY2(prompt.find("question 0 ") != std::string::npos, prompt.c_str());
    QVERIFY2(prompt.find("question 1 ") == std::string::npos, prompt.c_str());
    QVERIFY2(prompt.find("question 5 ") == std::string::npos, prompt.c_str());
    QVERIFY2(prompt.find("question 6 ") != std::string::npos, prompt.c_str());
    QVERIFY2(prompt.find("the newest question") != std::string::npos, prompt.c_str());
    // The unchanged start (33 + 84 tokens) is less than one 256-token page:
    // the cache serves none of it, and all 337 tokens are read again.
    QCOMPARE(job.context_drop->recomputed_tokens, job.prompt_tokens);

    server::Usage usage;
    usage.prompt_tokens = job.prompt_tokens;
    usage.context_drop = job.context_drop;
    const server::Choice choice;
    const nlohmann::json response = nlohmann::json::parse(
        server::chat_completion_json({"chatcmpl-1", 1, "small"}, std::span(&choice, 1), usage));
    const nlohmann::json& drop = response.at("usage").at("context_overflow");
    QCOMPARE(drop.at("policy").get<std::string>(), std::string("truncate_middle"));
    QCOMPARE(drop.at("first_dropped_turn").get<int>(), 2);
    QCOMPARE(drop.at("dropped_turns").get<int>(), job.context_drop->dropped_turns);
    QCOMPARE(drop.at("dropped_tokens").get<std::int64_t>(), job.context_drop->dropped_tokens);
  }

  void dropOldestLetsTheFirstQuestionGo() {
    const quire::test::Model model(7);
    ChatCompletionRequest request = long_chat_request();
    request.context_overflow = ContextPolicy::DropOldest;
    const server::PreparedJob job = server::prepare_chat_job(request, PromptFormatId::ChatML,
                                                             *model.tokenizer, served(model, 700));
    QVERIFY(job.context_drop);
    QCOMPARE(job.context_drop->policy, std::string("drop_oldest"));
    QCOMPARE(job.context_drop->first_dropped_turn, 1);
    QCOMPARE(job.context_drop->dropped_turns, 5);
    QCOMPARE(job.prompt_tokens, std::int64_t{337});
    QCOMPARE(job.context_drop->recomputed_tokens, std::int64_t{337});
    const std::string prompt = model.tokenizer->decode(job.request.prompt, false);
    QVERIFY2(prompt.find("question 0 ") == std::string::npos, prompt.c_str());
    QVERIFY2(prompt.find("question 4 ") == std::string::npos, prompt.c_str());
    QVERIFY2(prompt.find("question 5 ") != std::string::npos, prompt.c_str());
    QVERIFY2(prompt.find("You are brief.") != std::string::npos, prompt.c_str());
  }

  // A chat that fits is sent whole, whatever the policy.
  void aChatThatFitsKeepsEveryTurn() {
    const quire::test::Model model(7);
    ChatCompletionRequest request = long_chat_request();
    request.context_overflow = ContextPolicy::TruncateMiddle;
    const server::PreparedJob job = server::prepare_chat_job(request, PromptFormatId::ChatML,
                                                             *model.tokenizer, served(model, 4096));
    QVERIFY(!job.context_drop.has_value());
    const std::string prompt = model.tokenizer->decode(job.request.prompt, false);
    QVERIFY2(prompt.find("question 1 ") != std::string::npos, prompt.c_str());
  }
};

QUIRE_TEST(ContextOverflowRequestTest)

#include "test_context_overflow.moc"
