// The server's answers as OpenAI's clients read them: whole responses,
// stream chunks with their SSE framing, usage, and error objects.

#include <QTest>
#include <nlohmann/json.hpp>

#include "quire/server/api_error.h"
#include "quire/server/openai_response.h"
#include "test_main.h"

using namespace quire::server;
using nlohmann::json;

namespace {

const ResponseHeader kHeader{"chatcmpl-abc", 1700000000, "demo"};
const Usage kUsage{11, 5, 8};

// Qt Test's QCOMPARE cannot take nlohmann::json (its templates meet Qt's
// float types); the dumped texts compare the same.
void same(const json& actual, const json& expected) {
  QCOMPARE(QString::fromStdString(actual.dump()), QString::fromStdString(expected.dump()));
}

}  // namespace

class TestOpenAiResponse : public QObject {
  Q_OBJECT

 private slots:
  void chatCompletion() {
    const std::vector<Choice> one{{"Hello", FinishReason::Stop}};
    const std::string text = chat_completion_json(kHeader, one, kUsage);
    QCOMPARE(
        text,
        std::string(R"({"id":"chatcmpl-abc","object":"chat.completion","created":1700000000,)"
                    R"("model":"demo","choices":[{"index":0,"message":{"role":"assistant",)"
                    R"("content":"Hello","refusal":null},"logprobs":null,"finish_reason":"stop"}],)"
                    R"("usage":{"prompt_tokens":11,"completion_tokens":5,"total_tokens":16,)"
                    R"("prompt_tokens_details":{"cached_tokens":8}}})"));
  }

  void chatStreamChunks() {
    QCOMPARE(chat_role_chunk(kHeader, 0, false),
             std::string(R"({"id":"chatcmpl-abc","object":"chat.completion.chunk",)"
                         R"("created":1700000000,"model":"demo","choices":[{"index":0,)"
                         R"("delta":{"role":"assistant","content":""},"logprobs":null,)"
                         R"("finish_reason":null}]})"));
    const json content = json::parse(chat_content_chunk(kHeader, 0, "Hi \"there\"\n", true));
    same(content["choices"][0]["delta"], json({{"content", "Hi \"there\"\n"}}));
    QVERIFY(content.contains("usage"));
    QVERIFY(content["usage"].is_null());
    const json finish = json::parse(chat_finish_chunk(kHeader, 0, FinishReason::Length, false));
    same(finish["choices"][0]["delta"], json::object());
    same(finish["choices"][0]["finish_reason"], json("length"));
    QVERIFY(!finish.contains("usage"));
    const json usage = json::parse(chat_usage_chunk(kHeader, kUsage));
    same(usage["choices"], json::array());
    same(usage["usage"]["total_tokens"], json(16));
    same(usage["usage"]["prompt_tokens_details"]["cached_tokens"], json(8));
  }

  void completion() {
    const json whole = json::parse(completion_json(
        {"cmpl-x", 5, "m"}, std::vector<Choice>{{"abc", FinishReason::Length}}, {3, 2, 0}));
    same(whole["object"], json("text_completion"));
    same(whole["choices"][0]["text"], json("abc"));
    same(whole["choices"][0]["finish_reason"], json("length"));
    same(whole["usage"]["completion_tokens"], json(2));
    const json chunk =
        json::parse(completion_chunk({"cmpl-x", 5, "m"}, 0, "d", std::nullopt, false));
    same(chunk["choices"][0]["text"], json("d"));
    QVERIFY(chunk["choices"][0]["finish_reason"].is_null());
    same(json::parse(
             completion_usage_chunk({"cmpl-x", 5, "m"}, {3, 2, 1}))["usage"]["prompt_tokens"],
         json(3));
  }

  // n: every choice with its own index and finish_reason, one usage for all.
  void severalChoices() {
    const std::vector<Choice> choices{
        {"One", FinishReason::Stop}, {"Two", FinishReason::Length}, {"", FinishReason::Stop}};
    const Usage usage{11, 3 + 16 + 0, 8};
    const json chat = json::parse(chat_completion_json(kHeader, choices, usage));
    QCOMPARE(chat["choices"].size(), std::size_t(3));
    for (std::size_t i = 0; i < 3; ++i) {
      const json& choice = chat["choices"][i];
      same(choice["index"], json(i));
      same(choice["message"],
           json({{"role", "assistant"}, {"content", choices[i].text}, {"refusal", nullptr}}));
      same(choice["finish_reason"], json(to_string(choices[i].finish)));
    }
    same(chat["usage"], json({{"prompt_tokens", 11},
                              {"completion_tokens", 19},
                              {"total_tokens", 30},
                              {"prompt_tokens_details", {{"cached_tokens", 8}}}}));
    const json text = json::parse(completion_json({"cmpl-x", 5, "m"}, choices, usage));
    QCOMPARE(text["choices"].size(), std::size_t(3));
    same(text["choices"][1],
         json({{"text", "Two"}, {"index", 1}, {"logprobs", nullptr}, {"finish_reason", "length"}}));
    same(text["usage"]["completion_tokens"], json(19));

    // Stream chunks name their choice.
    same(json::parse(chat_role_chunk(kHeader, 2, false))["choices"][0]["index"], json(2));
    const json content = json::parse(chat_content_chunk(kHeader, 1, "x", true));
    QCOMPARE(content["choices"].size(), std::size_t(1));
    same(content["choices"][0]["index"], json(1));
    const json finish = json::parse(chat_finish_chunk(kHeader, 2, FinishReason::Stop, true));
    same(finish["choices"][0]["index"], json(2));
    same(finish["choices"][0]["finish_reason"], json("stop"));
    const json piece =
        json::parse(completion_chunk({"cmpl-x", 5, "m"}, 1, "y", FinishReason::Length, false));
    same(piece["choices"][0]["index"], json(1));
    same(piece["choices"][0]["finish_reason"], json("length"));
  }

  void invalidUtf8IsReplacedNotThrown() {
    const json chunk = json::parse(chat_content_chunk(kHeader, 0,
                                                      "a\xFF"
                                                      "b",
                                                      false));
    same(chunk["choices"][0]["delta"]["content"], json("a\xEF\xBF\xBD"
                                                       "b"));
  }

  void models() {
    QCOMPARE(models_json("demo", 42),
             std::string(R"({"object":"list","data":[{"id":"demo","object":"model",)"
                         R"("created":42,"owned_by":"quire"}]})"));
    QCOMPARE(model_json("demo", 42, 256),
             std::string(R"({"id":"demo","object":"model","created":42,"owned_by":"quire",)"
                         R"("max_model_len":256})"));
  }

  void sseFraming() {
    QCOMPARE(sse_event(R"({"a":1})"), std::string("data: {\"a\":1}\n\n"));
    QCOMPARE(sse_done(), std::string("data: [DONE]\n\n"));
  }

  void errorObjects() {
    QCOMPARE(error_body(invalid_request("temperature must be a number.", "temperature")),
             std::string(R"({"error":{"message":"temperature must be a number.",)"
                         R"("type":"invalid_request_error","param":"temperature","code":null}})"));
    QCOMPARE(error_body({503, "busy", "server_error", "", "server_busy"}),
             std::string(R"({"error":{"message":"busy","type":"server_error","param":null,)"
                         R"("code":"server_busy"}})"));
  }
};

QUIRE_TEST(TestOpenAiResponse)
#include "test_openai_response.moc"
