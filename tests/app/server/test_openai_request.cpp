// The request parser of the OpenAI-compatible server: what a valid body
// becomes, and the exact error (status, message, param) for each bad one.

#include <QTest>

#include "quire/server/api_error.h"
#include "quire/server/openai_request.h"
#include "test_main.h"

using quire::server::ApiException;
using quire::server::ChatCompletionRequest;
using quire::server::CompletionRequest;
using quire::server::parse_chat_completion_request;
using quire::server::parse_completion_request;

Q_DECLARE_METATYPE(std::string)

namespace {

const std::string kUser = R"({"role": "user", "content": "Hi"})";

std::string chat_with(const std::string& fields) {
  return R"({"model": "m", "messages": [)" + kUser + "]" + (fields.empty() ? "" : ", ") + fields +
         "}";
}

}  // namespace

class TestOpenAiRequest : public QObject {
  Q_OBJECT

 private slots:
  void chatRequestBecomesTypedValue() {
    const ChatCompletionRequest request = parse_chat_completion_request(R"({
      "model": "demo",
      "messages": [
        {"role": "system", "content": "Be brief."},
        {"role": "developer", "content": [{"type": "text", "text": "Use English."}]},
        {"role": "user", "content": "Hello"},
        {"role": "assistant", "content": "Hi there."},
        {"role": "user", "content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]}
      ],
      "stream": true, "stream_options": {"include_usage": true},
      "max_tokens": 10, "max_completion_tokens": 12, "temperature": 0, "top_p": 0.5,
      "top_k": 40, "min_p": 0.1, "seed": -3, "stop": "END",
      "frequency_penalty": 1.5, "presence_penalty": -2, "logit_bias": {"17": -100, "4": 2.5},
      "n": 1, "user": "someone", "tools": []
    })");
    QCOMPARE(request.model, std::string("demo"));
    QCOMPARE(request.turns.system, std::string("Be brief.\n\nUse English."));
    QCOMPARE(request.turns.history.size(), std::size_t{1});
    QCOMPARE(request.turns.history[0].user, std::string("Hello"));
    QCOMPARE(request.turns.history[0].assistant, std::string("Hi there."));
    QCOMPARE(request.turns.user, std::string("a\nb"));
    QVERIFY(request.stream);
    QVERIFY(request.include_usage);
    QCOMPARE(request.sampling.max_tokens, std::optional<std::int64_t>(12));
    QCOMPARE(request.sampling.temperature, std::optional<double>(0));
    QCOMPARE(request.sampling.top_p, std::optional<double>(0.5));
    QCOMPARE(request.sampling.top_k, std::optional<std::int64_t>(40));
    QCOMPARE(request.sampling.min_p, std::optional<double>(0.1));
    QCOMPARE(request.sampling.seed, std::optional<std::int64_t>(-3));
    QCOMPARE(request.sampling.stop, std::vector<std::string>{"END"});
    QCOMPARE(request.sampling.frequency_penalty, std::optional<double>(1.5));
    QCOMPARE(request.sampling.presence_penalty, std::optional<double>(-2));
    const std::map<std::int64_t, double> bias{{4, 2.5}, {17, -100}};
    QCOMPARE(request.sampling.logit_bias, bias);
  }

  void logitBiasByTextAndBannedStrings() {
    const ChatCompletionRequest object = parse_chat_completion_request(
        R"({"messages": [{"role": "user", "content": "x"}],
            "logit_bias": {"17": 1, "Hello": -5}, "banned_strings": "delve"})");
    QCOMPARE(object.sampling.logit_bias, (std::map<std::int64_t, double>{{17, 1}}));
    QCOMPARE(object.sampling.logit_bias_text, (std::map<std::string, double>{{"Hello", -5}}));
    QCOMPARE(object.sampling.banned_strings, std::vector<std::string>{"delve"});
    const ChatCompletionRequest pairs = parse_chat_completion_request(
        R"({"messages": [{"role": "user", "content": "x"}],
            "logit_bias": [[15, 2], ["42", -1.5]], "banned_strings": ["a", "B c"]})");
    QCOMPARE(pairs.sampling.logit_bias, (std::map<std::int64_t, double>{{15, 2}}));
    QCOMPARE(pairs.sampling.logit_bias_text, (std::map<std::string, double>{{"42", -1.5}}));
    QCOMPARE(pairs.sampling.banned_strings, (std::vector<std::string>{"a", "B c"}));
  }

  void absentAndNullFieldsStayEmpty() {
    const ChatCompletionRequest request = parse_chat_completion_request(
        R"({"messages": [{"role": "user", "content": "x"}], "temperature": null,
            "stop": null, "stream_options": null, "max_tokens": null})");
    QVERIFY(request.model.empty());
    QVERIFY(!request.stream);
    QVERIFY(!request.include_usage);
    QCOMPARE(request.sampling, quire::server::SamplingFields{});
    QVERIFY(request.turns.system.empty());
    QVERIFY(request.turns.history.empty());
  }

  // n: how many replies; absent or null is one.
  void choices() {
    QCOMPARE(parse_chat_completion_request(chat_with("")).n, 1);
    QCOMPARE(parse_chat_completion_request(chat_with("\"n\": null")).n, 1);
    QCOMPARE(parse_chat_completion_request(chat_with("\"n\": 3")).n, 3);
    QCOMPARE(parse_chat_completion_request(chat_with("\"n\": 16")).n, 16);
    QCOMPARE(parse_completion_request(R"({"prompt": "x"})").n, 1);
    QCOMPARE(parse_completion_request(R"({"prompt": "x", "n": 2})").n, 2);
    // best_of equal to n asks for what n alone gives.
    QCOMPARE(parse_completion_request(R"({"prompt": "x", "n": 4, "best_of": 4})").n, 4);
    QCOMPARE(parse_completion_request(R"({"prompt": "x", "n": 4, "best_of": 1})").n, 4);
  }

  void completionPromptForms() {
    QCOMPARE(parse_completion_request(R"({"prompt": "Once"})").prompt, std::string("Once"));
    QCOMPARE(parse_completion_request(R"({"prompt": ["Once"]})").prompt, std::string("Once"));
    const CompletionRequest ids = parse_completion_request(R"({"prompt": [1, 2, 3]})");
    QCOMPARE(ids.prompt_ids, std::optional<std::vector<std::int64_t>>({1, 2, 3}));
    const CompletionRequest nested = parse_completion_request(R"({"prompt": [[5, 6]]})");
    QCOMPARE(nested.prompt_ids, std::optional<std::vector<std::int64_t>>({5, 6}));
    QCOMPARE(parse_completion_request(R"({"prompt": "x", "stop": ["a", "b"]})").sampling.stop,
             (std::vector<std::string>{"a", "b"}));
  }

  void chatErrors_data() {
    QTest::addColumn<std::string>("body");
    QTest::addColumn<QString>("message");
    QTest::addColumn<QString>("param");

    QTest::newRow("not json") << std::string("{\"messages\": ")
                              << "The request body is not valid JSON (parse error at line 1, "
                                 "column 14: syntax error while parsing value - unexpected end "
                                 "of input; expected '[', '{', or a literal)."
                              << "";
    QTest::newRow("number beyond a double")
        << std::string("{\"temperature\": 1e999}")
        << "The request body is not valid JSON (number overflow parsing '1e999')."
        << "";
    QTest::newRow("not an object")
        << std::string("[1]") << "The request body must be a JSON object, not an array."
        << "";
    QTest::newRow("invalid utf-8")
        << std::string("{\"messages\": [{\"role\": \"user\", \"content\": \"\xC3\x28\"}]}")
        << "The request body is not valid UTF-8: byte 43 starts a malformed sequence. Send the "
           "JSON encoded as UTF-8."
        << "";
    QTest::newRow("surrogate in utf-8")
        << std::string("{\"a\": \"\xED\xA0\x80\"}")
        << "The request body is not valid UTF-8: byte 7 starts a malformed sequence. Send the "
           "JSON encoded as UTF-8."
        << "";
    QTest::newRow("too deep") << std::string(100, '[') + std::string(100, ']')
                              << "The request body nests arrays and objects more than 64 levels "
                                 "deep."
                              << "";
    QTest::newRow("no messages") << std::string("{\"model\": \"m\"}")
                                 << "Missing required parameter: 'messages'."
                                 << "messages";
    QTest::newRow("messages not array")
        << std::string("{\"messages\": \"hi\"}")
        << "messages must be an array of message objects, not a string."
        << "messages";
    QTest::newRow("messages empty")
        << std::string("{\"messages\": []}") << "messages must hold at least one message."
        << "messages";
    QTest::newRow("message not object")
        << std::string("{\"messages\": [3]}") << "messages[0] must be an object, not an integer."
        << "messages";
    QTest::newRow("unknown role")
        << std::string(R"({"messages": [{"role": "robot", "content": "x"}]})")
        << "messages[0].role \"robot\" is not system, developer, user, assistant or tool."
        << "messages";
    QTest::newRow("tool role without call id")
        << std::string(R"({"messages": [{"role": "tool", "content": "x"}]})")
        << "messages[0].tool_call_id must be a string."
        << "messages";
    QTest::newRow("missing content")
        << std::string(R"({"messages": [{"role": "user"}]})") << "messages[0].content is missing."
        << "messages";
    QTest::newRow("content number")
        << std::string(R"({"messages": [{"role": "user", "content": 5}]})")
        << "messages[0].content must be a string or an array of content parts, not an integer."
        << "messages";
    QTest::newRow("audio part")
        << std::string(
               R"({"messages": [{"role": "user", "content": [{"type": "input_audio", "input_audio": {}}]}]})")
        << "messages[0].content[0] is of type \"input_audio\": this server takes \"text\" and "
           "\"image_url\" parts only."
        << "messages";
    QTest::newRow("two users")
        << std::string(R"({"messages": [)" + kUser + ", " + kUser + "]}")
        << "messages[1] is a user message after a user message: user and assistant messages must "
           "take turns."
        << "messages";
    QTest::newRow("assistant first")
        << std::string(R"({"messages": [{"role": "assistant", "content": "x"}, )" + kUser + "]}")
        << "messages[0] is an assistant message without a user message before it: user and "
           "assistant messages must take turns, starting with the user."
        << "messages";
    QTest::newRow("ends with assistant")
        << std::string(R"({"messages": [)" + kUser + R"(, {"role": "assistant", "content": "x"}]})")
        << "The last message must be a user message: the reply answers it."
        << "messages";
    QTest::newRow("late system")
        << std::string(R"({"messages": [)" + kUser + R"(, {"role": "system", "content": "x"}]})")
        << "messages[1] is a system message after the conversation began; this server takes "
           "system messages only before the first user message."
        << "messages";
    QTest::newRow("n = 17") << chat_with("\"n\": 17")
                            << "n must be an integer from 1 to 16; it is 17."
                            << "n";
    QTest::newRow("n = 0") << chat_with("\"n\": 0") << "n must be an integer from 1 to 16; it is 0."
                           << "n";
    QTest::newRow("n = -1") << chat_with("\"n\": -1")
                            << "n must be an integer from 1 to 16; it is -1."
                            << "n";
    QTest::newRow("n = 2.5") << chat_with("\"n\": 2.5")
                             << "n must be an integer, not a number with a fraction."
                             << "n";
    QTest::newRow("n = \"2\"") << chat_with("\"n\": \"2\"") << "n must be an integer, not a string."
                               << "n";
    QTest::newRow("n huge") << chat_with("\"n\": 18446744073709551615")
                            << "n must be an integer from 1 to 16; it is 18446744073709551615."
                            << "n";
    QTest::newRow("model number") << chat_with("\"model\": 4")
                                  << "model must be a string, not an integer."
                                  << "model";
    QTest::newRow("stream string")
        << chat_with("\"stream\": \"yes\"") << "stream must be a boolean, not a string."
        << "stream";
    QTest::newRow("temperature string")
        << chat_with("\"temperature\": \"hot\"") << "temperature must be a number, not a string."
        << "temperature";
    QTest::newRow("temperature high")
        << chat_with("\"temperature\": 2.5") << "temperature must be between 0 and 2; it is 2.5."
        << "temperature";
    QTest::newRow("top_p high") << chat_with("\"top_p\": 1.5")
                                << "top_p must be between 0 and 1; it is 1.5."
                                << "top_p";
    QTest::newRow("max_tokens fraction")
        << chat_with("\"max_tokens\": 5.5")
        << "max_tokens must be an integer, not a number with a fraction."
        << "max_tokens";
    QTest::newRow("max_tokens zero") << chat_with("\"max_tokens\": 0")
                                     << "max_tokens must be an integer from 1 to 2147483647; it "
                                        "is 0."
                                     << "max_tokens";
    QTest::newRow("seed too large")
        << chat_with("\"seed\": 18446744073709551615")
        << "seed must be an integer from -9223372036854775808 to 9223372036854775807; it is "
           "18446744073709551615."
        << "seed";
    QTest::newRow("stop number") << chat_with("\"stop\": 3")
                                 << "stop must be a string or an array of strings, not an integer."
                                 << "stop";
    QTest::newRow("stop item") << chat_with("\"stop\": [\"a\", null]")
                               << "stop[1] must be a string, not null."
                               << "stop";
    QTest::newRow("penalty") << chat_with("\"presence_penalty\": -3")
                             << "presence_penalty must be between -2 and 2; it is -3."
                             << "presence_penalty";
    QTest::newRow("bias key") << chat_with("\"logit_bias\": {\"\": 1}")
                              << "logit_bias keys must be token ids or text, not empty."
                              << "logit_bias";
    QTest::newRow("bias pair") << chat_with("\"logit_bias\": [[1]]")
                               << "logit_bias[0] must be a [token id or text, bias] pair."
                               << "logit_bias";
    QTest::newRow("bias text value") << chat_with("\"logit_bias\": [[\"no\", \"x\"]]")
                                     << "logit_bias[0][1] must be a number, not a string."
                                     << "logit_bias";
    QTest::newRow("banned number") << chat_with("\"banned_strings\": 3")
                                   << "banned_strings must be a string or an array of strings, "
                                      "not an integer."
                                   << "banned_strings";
    QTest::newRow("banned item") << chat_with("\"banned_strings\": [\"a\", 1]")
                                 << "banned_strings[1] must be a string, not an integer."
                                 << "banned_strings";
    QTest::newRow("bias value") << chat_with("\"logit_bias\": {\"5\": 101}")
                                << "logit_bias[\"5\"] must be between -100 and 100; it is 101."
                                << "logit_bias";
    QTest::newRow("tools") << chat_with("\"tools\": [{\"type\": \"function\"}]")
                           << "tools[0].function must be an object."
                           << "tools";
    QTest::newRow("logprobs") << chat_with("\"logprobs\": true")
                              << "logprobs are not supported by this server."
                              << "logprobs";
    QTest::newRow("format type")
        << chat_with("\"response_format\": {\"type\": \"xml\"}")
        << "response_format type \"xml\" is not supported by this server; use \"text\", "
           "\"json_object\" or \"json_schema\"."
        << "response_format";
    QTest::newRow("format without type")
        << chat_with("\"response_format\": {\"json_schema\": {}}")
        << "response_format must be an object with a string \"type\"."
        << "response_format";
    QTest::newRow("json_schema missing")
        << chat_with("\"response_format\": {\"type\": \"json_schema\"}")
        << "response_format of type \"json_schema\" needs a \"json_schema\" object."
        << "response_format";
    QTest::newRow("json_schema name")
        << chat_with(R"("response_format": {"type": "json_schema",
                         "json_schema": {"name": "a b", "schema": {}}})")
        << "response_format.json_schema.name must be a string of letters, digits, '_' and '-', "
           "64 at most."
        << "response_format";
    QTest::newRow("json_schema schema")
        << chat_with(R"("response_format": {"type": "json_schema",
                         "json_schema": {"name": "a", "schema": true}})")
        << "response_format.json_schema.schema must be a JSON Schema object."
        << "response_format";
    QTest::newRow("json_schema strict") << chat_with(R"("response_format": {"type": "json_schema",
                         "json_schema": {"name": "a", "schema": {}, "strict": "yes"}})")
                                        << "response_format.json_schema.strict must be a boolean."
                                        << "response_format";
    QTest::newRow("stream_options") << chat_with("\"stream_options\": true")
                                    << "stream_options must be an object, not a boolean."
                                    << "stream_options";
  }

  void chatErrors() {
    QFETCH(std::string, body);
    QFETCH(QString, message);
    QFETCH(QString, param);
    try {
      parse_chat_completion_request(body);
      QFAIL("the request was accepted");
    } catch (const ApiException& error) {
      QCOMPARE(error.error().status, 400);
      QCOMPARE(QString::fromStdString(error.error().message), message);
      QCOMPARE(QString::fromStdString(error.error().param), param);
      QCOMPARE(error.error().type, std::string("invalid_request_error"));
    }
  }

  void completionErrors_data() {
    QTest::addColumn<std::string>("body");
    QTest::addColumn<QString>("message");
    QTest::addColumn<QString>("param");
    QTest::newRow("no prompt") << std::string("{}") << "Missing required parameter: 'prompt'."
                               << "prompt";
    QTest::newRow("two prompts") << std::string(R"({"prompt": ["a", "b"]})")
                                 << "prompt holds more than one prompt; this server completes one "
                                    "prompt per request."
                                 << "prompt";
    QTest::newRow("negative id") << std::string(R"({"prompt": [1, -2]})")
                                 << "prompt[1] must be an integer from 0 to 2147483647; it is -2."
                                 << "prompt";
    QTest::newRow("prompt object") << std::string(R"({"prompt": {}})")
                                   << "prompt must be a string, an array of one string or an "
                                      "array of token ids, not an object."
                                   << "prompt";
    QTest::newRow("echo") << std::string(R"({"prompt": "x", "echo": true})")
                          << "echo is not supported by this server."
                          << "echo";
    QTest::newRow("best_of") << std::string(R"({"prompt": "x", "best_of": 3})")
                             << "best_of must be 1 or equal to n (1): this server returns every "
                                "completion it makes and picks none."
                             << "best_of";
    QTest::newRow("best_of above n")
        << std::string(R"({"prompt": "x", "n": 2, "best_of": 3})")
        << "best_of must be 1 or equal to n (2): this server returns every completion it makes "
           "and picks none."
        << "best_of";
    QTest::newRow("n = 0") << std::string(R"({"prompt": "x", "n": 0})")
                           << "n must be an integer from 1 to 16; it is 0."
                           << "n";
    QTest::newRow("logprobs") << std::string(R"({"prompt": "x", "logprobs": 2})")
                              << "logprobs are not supported by this server."
                              << "logprobs";
    // Structured output is offered on chat completions only.
    QTest::newRow("json mode")
        << std::string(R"({"prompt": "x", "response_format": {"type": "json_object"}})")
        << "response_format type \"json_object\" is not supported by this server; only \"text\" "
           "is."
        << "response_format";
  }

  void responseFormats() {
    using quire::server::ResponseFormat;
    QCOMPARE(parse_chat_completion_request(chat_with("")).response_format, ResponseFormat{});
    QCOMPARE(parse_chat_completion_request(chat_with(R"("response_format": {"type": "text"})"))
                 .response_format.type,
             ResponseFormat::Type::Text);
    QCOMPARE(
        parse_chat_completion_request(chat_with(R"("response_format": {"type": "json_object"})"))
            .response_format.type,
        ResponseFormat::Type::JsonObject);
    const ResponseFormat schema =
        parse_chat_completion_request(chat_with(R"("response_format": {"type": "json_schema",
            "json_schema": {"name": "point-2d", "strict": true,
                            "schema": {"type": "object", "properties": {"x": {"type": "integer"}}}}})"))
            .response_format;
    QCOMPARE(schema.type, ResponseFormat::Type::JsonSchema);
    QCOMPARE(schema.name, std::string("point-2d"));
    QVERIFY(schema.strict);
    // As written: the grammar generates properties in the schema's order.
    QCOMPARE(schema.schema,
             std::string(R"({"type":"object","properties":{"x":{"type":"integer"}}})"));
  }

  void completionErrors() {
    QFETCH(std::string, body);
    QFETCH(QString, message);
    QFETCH(QString, param);
    try {
      parse_completion_request(body);
      QFAIL("the request was accepted");
    } catch (const ApiException& error) {
      QCOMPARE(error.error().status, 400);
      QCOMPARE(QString::fromStdString(error.error().message), message);
      QCOMPARE(QString::fromStdString(error.error().param), param);
    }
  }

  void utf8Validation() {
    using quire::server::first_invalid_utf8;
    QCOMPARE(first_invalid_utf8("plain ascii"), std::nullopt);
    QCOMPARE(first_invalid_utf8("caf\xC3\xA9 \xF0\x9F\x8D\x80"), std::nullopt);
    QCOMPARE(first_invalid_utf8("ab\x80"), std::optional<std::size_t>(2));    // lone continuation
    QCOMPARE(first_invalid_utf8("\xC0\xAF"), std::optional<std::size_t>(0));  // overlong
    QCOMPARE(first_invalid_utf8("x\xE0\x80\xAF"), std::optional<std::size_t>(1));     // overlong
    QCOMPARE(first_invalid_utf8("\xF4\x90\x80\x80"), std::optional<std::size_t>(0));  // > U+10FFFF
    QCOMPARE(first_invalid_utf8("ok\xE2\x82"), std::optional<std::size_t>(2));        // cut short
  }
};

QUIRE_TEST(TestOpenAiRequest)
#include "test_openai_request.moc"
