// The event-stream decoder and the readers of what OpenAI-compatible engines
// send: every recorded engine stream (fixtures/SOURCES.md) reads as the reply
// it carries whatever sizes its bytes arrive in, and error bodies, model lists
// and request bodies read and write as the engines expect.

#include <QTest>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "quire/remote/chat_request.h"
#include "quire/remote/openai_stream.h"
#include "quire/remote/sse_decoder.h"
#include "remote_fixtures.h"
#include "test_main.h"

using namespace quire::remote;

namespace {

// What a whole stream adds up to.
struct StreamRead {
  std::string content;
  std::string reasoning;
  std::string finish_reason;
  std::optional<StreamUsage> usage;
  std::optional<std::string> error;
  bool done = false;
  std::size_t events = 0;
};

// Feeds `bytes` in pieces of `piece` bytes (0: all at once).
StreamRead read_stream(const QByteArray& bytes, std::size_t piece = 0) {
  SseDecoder decoder;
  StreamRead read;
  const std::string text = bytes.toStdString();
  const std::size_t step = piece == 0 ? text.size() : piece;
  for (std::size_t at = 0; at < text.size(); at += step) {
    for (const SseEvent& event : decoder.feed(std::string_view(text).substr(at, step))) {
      ++read.events;
      const ChatChunk chunk = parse_chat_chunk(event.data);
      read.done = read.done || chunk.done;
      read.content += chunk.content;
      read.reasoning += chunk.reasoning;
      if (chunk.finish_reason) read.finish_reason = *chunk.finish_reason;
      if (chunk.usage) read.usage = chunk.usage;
      if (chunk.error) read.error = chunk.error;
    }
  }
  decoder.finish();
  return read;
}

std::vector<std::string> data_of(const std::vector<SseEvent>& events) {
  std::vector<std::string> data;
  for (const SseEvent& event : events)
    data.push_back(event.data);
  return data;
}

}  // namespace

class OpenAiStreamTest : public QObject {
  Q_OBJECT

 private slots:
  void linesEndWithLfCrlfOrCrAndBlankLinesDispatch() {
    SseDecoder decoder;
    const auto events = decoder.feed("data: one\n\ndata: two\r\n\r\ndata: three\r\rdata:four\n\n");
    QCOMPARE(data_of(events), (std::vector<std::string>{"one", "two", "three", "four"}));
  }

  void dataLinesJoinAndFieldsAreRead() {
    SseDecoder decoder;
    const auto events = decoder.feed(
        ": a comment\nevent: error\nid: 7\ndata: first\ndata:  second\nretry: 10\nunknown: x\n\n"
        "data\n\n");
    QCOMPARE(events.size(), std::size_t{2});
    QCOMPARE(events[0].type, std::string("error"));
    QCOMPARE(events[0].id, std::string("7"));
    // One space after the colon is the separator; a second one is data.
    QCOMPARE(events[0].data, std::string("first\n second"));
    // A field name alone is that field with an empty value.
    QCOMPARE(events[1].type, std::string("message"));
    QCOMPARE(events[1].data, std::string(""));
    QCOMPARE(events[1].id, std::string("7"));
    QCOMPARE(decoder.comments(), std::size_t{1});
  }

  void anEventWithoutItsBlankLineIsDropped() {
    SseDecoder decoder;
    QCOMPARE(decoder.feed("data: whole\n\ndata: cut off").size(), std::size_t{1});
    QVERIFY(decoder.finish());
    SseDecoder clean;
    QCOMPARE(clean.feed("data: whole\n\n").size(), std::size_t{1});
    QVERIFY(!clean.finish());
  }

  void theByteOrderMarkIsDroppedEvenWhenSplit() {
    SseDecoder decoder;
    QVERIFY(decoder.feed("\xEF").empty());
    QVERIFY(decoder.feed("\xBB").empty());
    QCOMPARE(data_of(decoder.feed("\xBF"
                                  "data: x\n\n")),
             (std::vector<std::string>{"x"}));
    // Only at the start: later it is data.
    QCOMPARE(data_of(decoder.feed("data: \xEF\xBB\xBFy\n\n")),
             (std::vector<std::string>{"\xEF\xBB\xBFy"}));
    // Bytes that begin like the mark and are not it stay text.
    SseDecoder other;
    QCOMPARE(data_of(other.feed("\xEF\xBB")), (std::vector<std::string>{}));
    QVERIFY(other.finish());
  }

  void aLineWithoutEndIsRefusedPastItsLimit() {
    SseDecoder decoder;
    const std::string piece(1024 * 1024, 'a');
    bool refused = false;
    try {
      for (int i = 0; i < 9; ++i)
        decoder.feed(piece);
    } catch (const std::length_error&) {
      refused = true;
    }
    QVERIFY(refused);
  }

  void everyEngineStreamReadsAsItsReplyInPiecesOfAnySize_data() {
    QTest::addColumn<QString>("fixture");
    QTest::addColumn<QString>("content");
    QTest::addColumn<QString>("reasoning");
    QTest::addColumn<QString>("finish");
    QTest::addColumn<int>("prompt");      // -1: no usage
    QTest::addColumn<int>("completion");  // with usage
    QTest::addColumn<int>("cached");      // -1: not reported
    QTest::addColumn<QString>("error");
    QTest::addColumn<bool>("done");
    QTest::newRow("vllm") << "vllm_chat.sse"
                          << "Hello, wörld!"
                          << ""
                          << "stop" << 25 << 4 << 16 << "" << true;
    QTest::newRow("vllm reasoning") << "vllm_reasoning.sse"
                                    << "Hi there."
                                    << "The user greets me."
                                    << "length" << -1 << 0 << -1 << "" << true;
    QTest::newRow("vllm error") << "vllm_error.sse"
                                << "Partial"
                                << ""
                                << "" << -1 << 0 << -1
                                << "The engine is dead: CUDA error: an illegal memory access "
                                   "was encountered"
                                << true;
    QTest::newRow("sglang") << "sglang_chat.sse"
                            << "Yes."
                            << "Short answer."
                            << "stop" << 31 << 9 << -1 << "" << true;
    QTest::newRow("llama.cpp") << "llamacpp_chat.sse"
                               << "Hello there"
                               << ""
                               << "stop" << 20 << 2 << 12 << "" << true;
    QTest::newRow("ollama") << "ollama_chat.sse"
                            << "Hello"
                            << "Think"
                            << "stop" << 26 << 2 << -1 << "" << true;
    QTest::newRow("tabbyapi error")
        << "tabbyapi_error.sse"
        << "Once upon"
        << ""
        << "" << -1 << 0 << -1 << "Chat completion aborted. Please check the server console."
        << false;
    QTest::newRow("keep-alive comments") << "keepalive_comments.sse"
                                         << "Kept alive"
                                         << ""
                                         << "stop" << -1 << 0 << -1 << "" << true;
  }

  void everyEngineStreamReadsAsItsReplyInPiecesOfAnySize() {
    QFETCH(QString, fixture);
    QFETCH(QString, content);
    QFETCH(QString, reasoning);
    QFETCH(QString, finish);
    QFETCH(int, prompt);
    QFETCH(int, completion);
    QFETCH(int, cached);
    QFETCH(QString, error);
    QFETCH(bool, done);
    const QByteArray bytes = quire::test::remote_fixture(fixture.toUtf8().constData());
    for (const std::size_t piece :
         {std::size_t{0}, std::size_t{1}, std::size_t{2}, std::size_t{7}, std::size_t{64}}) {
      const StreamRead read = read_stream(bytes, piece);
      const QString where = QStringLiteral("%1 in pieces of %2").arg(fixture).arg(piece);
      QVERIFY2(QString::fromStdString(read.content) == content, qPrintable(where));
      QCOMPARE(QString::fromStdString(read.reasoning), reasoning);
      QCOMPARE(QString::fromStdString(read.finish_reason), finish);
      QCOMPARE(read.done, done);
      QCOMPARE(QString::fromStdString(read.error.value_or("")), error);
      QCOMPARE(read.usage.has_value(), prompt >= 0);
      if (read.usage) {
        QCOMPARE(read.usage->prompt_tokens, std::int64_t{prompt});
        QCOMPARE(read.usage->completion_tokens, std::int64_t{completion});
        QCOMPARE(read.usage->cached_tokens.has_value(), cached >= 0);
        if (cached >= 0) QCOMPARE(*read.usage->cached_tokens, std::int64_t{cached});
      }
    }
  }

  void chunksWithTheWrongShapeAreNamed() {
    const auto refused = [](std::string_view data) -> QString {
      try {
        parse_chat_chunk(data);
      } catch (const ProtocolError& error) {
        return QString::fromUtf8(error.what());
      }
      return QString();
    };
    QVERIFY(refused("{not json").startsWith("an event of the stream is not JSON"));
    QCOMPARE(refused("[1]"), QStringLiteral("an event of the stream is not a JSON object"));
    QCOMPARE(refused(R"({"choices": {}})"), QStringLiteral("choices is not a list"));
    QCOMPARE(refused(R"({"choices": [{"delta": {"content": 5}}]})"),
             QStringLiteral("delta.content is not text"));
    QCOMPARE(refused(R"({"choices": [{"delta": [], "finish_reason": null}]})"),
             QStringLiteral("a choice's delta is not an object"));
    QCOMPARE(refused(R"({"choices": [{"finish_reason": 1}]})"),
             QStringLiteral("finish_reason is not text"));
    QCOMPARE(refused(R"({"usage": {"prompt_tokens": -3}})"),
             QStringLiteral("usage.prompt_tokens is not a count"));
    // Another choice than the one asked for is left alone; null fields are nothing.
    const ChatChunk other = parse_chat_chunk(
        R"({"choices": [{"index": 1, "delta": {"content": "no"}}, {"index": 0, "delta": null}]})");
    QVERIFY(other.content.empty());
    QVERIFY(!other.finish_reason);
  }

  void aWholeReplyReadsAsOneChunk() {
    const ChatChunk whole = parse_chat_completion(
        R"({"id": "x", "object": "chat.completion", "choices": [{"index": 0, "message":
            {"role": "assistant", "content": "All at once", "reasoning_content": "hm"},
            "finish_reason": "length"}], "usage": {"prompt_tokens": 3, "completion_tokens": 4,
            "total_tokens": 7, "prompt_tokens_details": {"cached_tokens": 2}}})");
    QCOMPARE(whole.content, std::string("All at once"));
    QCOMPARE(whole.reasoning, std::string("hm"));
    QCOMPARE(whole.finish_reason.value_or(""), std::string("length"));
    QVERIFY(whole.usage);
    QCOMPARE(whole.usage->cached_tokens.value_or(-1), std::int64_t{2});
    bool refused = false;
    try {
      parse_chat_completion(R"({"choices": []})");
    } catch (const ProtocolError&) {
      refused = true;
    }
    QVERIFY(refused);
  }

  void errorBodiesOfEveryEngineGiveTheirMessage() {
    // OpenAI, Quire, llama.cpp, newer vLLM
    QCOMPARE(error_message_of(R"({"error": {"message": "Invalid API Key", "type":
                                 "authentication_error", "code": 401}})"),
             std::string("Invalid API Key"));
    // vLLM before 0.10
    QCOMPARE(error_message_of(R"({"object": "error", "message": "The model `x` does not exist.",
                                 "type": "NotFoundError", "param": null, "code": 404})"),
             std::string("The model `x` does not exist."));
    // FastAPI (TabbyAPI): a string, or validation errors
    QCOMPARE(error_message_of(R"({"detail": "Invalid API key"})"), std::string("Invalid API key"));
    QCOMPARE(error_message_of(R"({"detail": [{"loc": ["body", "messages"], "msg":
                                 "field required", "type": "value_error.missing"},
                                 {"msg": "bad"}]})"),
             std::string("field required; bad"));
    // Ollama's older form
    QCOMPARE(
        error_message_of("{\"error\": \"model \\\"llama9\\\" not found, try pulling it first\"}"),
        std::string("model \"llama9\" not found, try pulling it first"));
    // A proxy's plain text, an HTML page, nothing
    QCOMPARE(error_message_of("Bad Gateway\r\n"), std::string("Bad Gateway"));
    QCOMPARE(error_message_of("<html><body>502</body></html>"), std::string());
    QCOMPARE(error_message_of(""), std::string());
    QCOMPARE(error_message_of(R"({"unrelated": 1})"), std::string());
  }

  void modelListsOfEveryEngineRead() {
    const std::vector<RemoteModel> vllm = parse_model_list(
        R"({"object": "list", "data": [{"id": "meta-llama/Llama-3.1-8B-Instruct", "object":
            "model", "created": 1, "owned_by": "vllm", "root": "/models/llama", "parent": null,
            "max_model_len": 32768, "permission": []}]})");
    QCOMPARE(vllm.size(), std::size_t{1});
    QCOMPARE(vllm[0].id, std::string("meta-llama/Llama-3.1-8B-Instruct"));
    QCOMPARE(vllm[0].context_tokens, std::int64_t{32768});
    // llama.cpp: its trained context is not the one it serves.
    const std::vector<RemoteModel> llama = parse_model_list(
        R"({"object": "list", "data": [{"id": "qwen.gguf", "object": "model", "created": 1,
            "owned_by": "llamacpp", "meta": {"vocab_type": 2, "n_ctx_train": 40960}}]})");
    QCOMPARE(llama[0].context_tokens, std::int64_t{0});
    const std::vector<RemoteModel> ollama = parse_model_list(
        R"({"object": "list", "data": [{"id": "llama3.2:latest", "object": "model", "created":
            1, "owned_by": "library"}, {"id": "qwen3:8b", "object": "model"}]})");
    QCOMPARE(ollama.size(), std::size_t{2});
    QCOMPARE(ollama[1].id, std::string("qwen3:8b"));
    for (const char* bad : {R"({"data": {}})", R"({"models": []})", R"({"data": [{"object":
                            "model"}]})",
                            "[]"}) {
      bool refused = false;
      try {
        parse_model_list(bad);
      } catch (const ProtocolError&) {
        refused = true;
      }
      QVERIFY2(refused, bad);
    }
  }

  // A chat whose replies called tools goes to a remote engine in OpenAI's
  // shape: the calls on the assistant message (content null), the results
  // naming their calls.
  void toolLoopsKeepOpenAisShape() {
    using json = nlohmann::json;
    quire::remote::ChatMessage call("assistant", "");
    call.tool_calls = {{"call_1", "get_weather", "{\"city\":\"Oslo\"}"}};
    quire::remote::ChatMessage result("tool", "12 degrees");
    result.tool_call_id = "call_1";
    const json body = json::parse(
        chat_request_body("m", {{"user", "Weather?"}, call, result}, ChatSampling{}, 0));
    QVERIFY(body["messages"][1] ==
            json::parse("{\"role\": \"assistant\", \"content\": null, \"tool_calls\": [{\"id\": "
                        "\"call_1\", \"type\": \"function\", \"function\": {\"name\": "
                        "\"get_weather\", \"arguments\": \"{\\\"city\\\":\\\"Oslo\\\"}\"}}]}"));
    QVERIFY(body["messages"][2] ==
            (json{{"role", "tool"}, {"content", "12 degrees"}, {"tool_call_id", "call_1"}}));
  }

  void requestBodiesSendOnlyTheSamplingThatIsSet() {
    using json = nlohmann::json;
    ChatSampling plain;
    plain.temperature = 0.7;
    const json body = json::parse(chat_request_body(
        "m", {{"system", "Be brief."}, {"user", "Hi"}, {"assistant", "Hello"}, {"user", "Again"}},
        plain, 256));
    QVERIFY(body["model"] == json("m"));
    QVERIFY(body["stream"] == json(true));
    QVERIFY(body["stream_options"]["include_usage"] == json(true));
    QVERIFY(body["max_tokens"] == json(256));
    QVERIFY(body["temperature"] == json(0.7));
    QCOMPARE(body["messages"].size(), std::size_t{4});
    QVERIFY(body["messages"][3] == (json{{"role", "user"}, {"content", "Again"}}));
    for (const char* absent : {"top_p", "top_k", "min_p", "repetition_penalty", "seed"})
      QVERIFY2(!body.contains(absent), absent);

    ChatSampling all;
    all.temperature = 0;
    all.top_p = 0.9;
    all.top_k = 40;
    all.min_p = 0.05;
    all.repetition_penalty = 1.1;
    all.seed = 7;
    const json full = json::parse(chat_request_body("m", {{"user", "\xff bad"}}, all, 0));
    QVERIFY(full["top_p"] == json(0.9));
    QVERIFY(full["top_k"] == json(40));
    QVERIFY(full["min_p"] == json(0.05));
    QVERIFY(full["repetition_penalty"] == json(1.1));
    QVERIFY(full["seed"] == json(7));
    QVERIFY(!full.contains("max_tokens"));
    // Bytes that are not UTF-8 are replaced, so the body stays JSON.
    QVERIFY(full["messages"][0]["content"] == json("\xEF\xBF\xBD bad"));
  }
};

QUIRE_TEST(OpenAiStreamTest)
#include "test_openai_stream.moc"
