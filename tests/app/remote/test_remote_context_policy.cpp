// The chat's context policy sent to a remote engine: a Quire server (its
// model list says "owned_by": "quire") is sent "context_overflow" and its
// usage says what it dropped; llama.cpp's server and the other engines take
// no policy per request, are sent none, and nothing is read as a drop. Over
// real HTTP against a local server that records the requests (fake_engine.h).

#include <QEventLoop>
#include <QSignalSpy>
#include <QTest>
#include <nlohmann/json.hpp>

#include "fake_engine.h"
#include "quire/remote/chat_request.h"
#include "quire/remote/remote_client.h"
#include "remote_fixtures.h"
#include "test_main.h"

using namespace quire::remote;
using quire::test::FakeAnswer;
using quire::test::FakeEngine;

// A named namespace: the unity build joins this file with the client's tests,
// whose file-local helpers have other shapes.
namespace quire::test::remote_policy {

// The engine's one model, as its list names it.
RemoteModel listed_model(RemoteClient& client, const RemoteEndpoint& at) {
  QSignalSpy listed(&client, &RemoteClient::modelsListed);
  client.listModels(1, at);
  if (!listed.wait(10000)) qFatal("the model list never came");
  return listed.at(0).at(1).value<QList<RemoteModel>>().value(0);
}

// The chat's reply, after `body` was posted.
RemoteChatResult chat_until_done(RemoteClient& client, const RemoteEndpoint& at,
                                 const std::string& body) {
  QSignalSpy finished(&client, &RemoteClient::chatFinished);
  client.startChat(2, at, QByteArray::fromStdString(body));
  if (!finished.wait(20000)) qFatal("the chat never ended");
  return finished.at(0).at(1).value<RemoteChatResult>();
}

const std::vector<ChatMessage> kChat{{"user", "Hi"}, {"assistant", "Hello"}, {"user", "Again"}};

}  // namespace quire::test::remote_policy

using namespace quire::test::remote_policy;

class RemoteContextPolicyTest : public QObject {
  Q_OBJECT

 private slots:
  void aQuireServerTakesThePolicyAndSaysWhatItDropped() {
    FakeEngine engine;
    engine.enqueue({200, "application/json",
                    R"({"object": "list", "data": [{"id": "small", "object": "model",
                        "owned_by": "quire", "max_model_len": 256}]})"});
    FakeAnswer stream;
    stream.body = quire::test::remote_fixture("quire_context_drop.sse");
    engine.enqueue(stream);
    RemoteClient client;
    const RemoteEndpoint at = quire::test::endpoint_at(engine.url());
    const RemoteModel model = listed_model(client, at);
    QCOMPARE(model.owned_by, std::string("quire"));
    QVERIFY(is_quire_server(model));

    const RemoteChatResult result = chat_until_done(
        client, at, chat_request_body(model, kChat, ChatSampling{}, 32, "truncate_middle"));
    const nlohmann::json sent = nlohmann::json::parse(engine.requests().at(1).body.toStdString());
    QVERIFY(sent["context_overflow"] == nlohmann::json("truncate_middle"));
    QCOMPARE(result.text, QStringLiteral("Still here"));
    QVERIFY(result.usage.has_value());
    QVERIFY(result.usage->context_drop.has_value());
    const ContextDrop& drop = *result.usage->context_drop;
    QCOMPARE(drop.policy, std::string("truncate_middle"));
    QCOMPARE(drop.first_dropped_turn, std::int64_t{2});
    QCOMPARE(drop.dropped_turns, std::int64_t{2});
    QCOMPARE(drop.dropped_tokens, std::int64_t{108});
    QCOMPARE(drop.recomputed_tokens, std::int64_t{125});
  }

  void otherEnginesAreSentNoPolicy_data() {
    QTest::addColumn<QByteArray>("list");
    QTest::addColumn<QString>("fixture");
    QTest::newRow("llama.cpp") << QByteArray(R"({"object": "list", "data": [{"id": "m.gguf",
        "object": "model", "owned_by": "llamacpp", "meta": {"n_ctx_train": 4096}}]})")
                               << QStringLiteral("llamacpp_chat.sse");
    QTest::newRow("vLLM") << QByteArray(R"({"object": "list", "data": [{"id": "m",
        "object": "model", "owned_by": "vllm", "max_model_len": 8192}]})")
                          << QStringLiteral("vllm_chat.sse");
    QTest::newRow("no owner") << QByteArray(R"({"data": [{"id": "m"}]})")
                              << QStringLiteral("ollama_chat.sse");
  }

  void otherEnginesAreSentNoPolicy() {
    QFETCH(QByteArray, list);
    QFETCH(QString, fixture);
    FakeEngine engine;
    engine.enqueue({200, "application/json", list});
    FakeAnswer stream;
    stream.body = quire::test::remote_fixture(fixture.toUtf8().constData());
    engine.enqueue(stream);
    RemoteClient client;
    const RemoteEndpoint at = quire::test::endpoint_at(engine.url());
    const RemoteModel model = listed_model(client, at);
    QVERIFY(!is_quire_server(model));
    for (const char* policy : {"stop", "drop_oldest", "truncate_middle"}) {
      const nlohmann::json body =
          nlohmann::json::parse(chat_request_body(model, kChat, ChatSampling{}, 32, policy));
      QVERIFY2(!body.contains("context_overflow"), policy);
    }
    const RemoteChatResult result = chat_until_done(
        client, at, chat_request_body(model, kChat, ChatSampling{}, 32, "truncate_middle"));
    const nlohmann::json sent = nlohmann::json::parse(engine.requests().at(1).body.toStdString());
    QVERIFY(!sent.contains("context_overflow"));
    QVERIFY(result.error.isEmpty());
    // Nothing claims a drop the engine did not report.
    QVERIFY(!result.usage || !result.usage->context_drop);
  }

  void aDropThatIsNoObjectIsRefused() {
    try {
      parse_chat_chunk(R"({"choices": [], "usage": {"prompt_tokens": 1,
          "completion_tokens": 1, "context_overflow": "truncate_middle"}})");
      QFAIL("a context_overflow that is no object was read");
    } catch (const ProtocolError& error) {
      QCOMPARE(std::string(error.what()), std::string("usage.context_overflow is not an object"));
    }
  }
};

QUIRE_TEST(RemoteContextPolicyTest)
#include "test_remote_context_policy.moc"
