// The remote engine client over real HTTP, against a local server that
// answers as the engines do (fake_engine.h): model lists, every recorded
// engine stream, a whole reply, and each way a request fails — a refused or
// wrong key, nothing listening, a stream cut off, an engine that falls silent,
// a stream Quire cannot read, and a stop — each with the text that arrived.

#include <QEventLoop>
#include <QSignalSpy>
#include <QSslCertificate>
#include <QSslConfiguration>
#include <QSslKey>
#include <QSslServer>
#include <QTcpServer>
#include <QTest>
#include <nlohmann/json.hpp>

#include "fake_engine.h"
#include "quire/remote/chat_request.h"
#include "quire/remote/remote_client.h"
#include "remote_fixtures.h"
#include "test_main.h"

using namespace quire::remote;
using quire::test::endpoint_at;
using quire::test::FakeAnswer;
using quire::test::FakeEngine;

namespace {

QByteArray hello_body() {
  return QByteArray::fromStdString(chat_request_body("m", {{"user", "Hi"}}, ChatSampling{}, 32));
}

// vLLM's stream through its second chunk ("Hello"); then the connection
// closes, or with `hold_open` stays open and silent.
FakeAnswer vllm_stream_through_hello(bool hold_open) {
  FakeAnswer answer;
  answer.body = quire::test::remote_fixture("vllm_chat.sse");
  answer.cut_after =
      static_cast<int>(answer.body.indexOf("\n\n", answer.body.indexOf("Hello"))) + 2;
  answer.hold_open = hold_open;
  return answer;
}

struct Finished {
  QString streamed;
  RemoteChatResult result;
};

// Runs one chat to its end (or until `during` has been called on the first text).
Finished run_chat(RemoteClient& client, const RemoteEndpoint& endpoint,
                  const std::function<void()>& on_first_text = {}) {
  Finished finished;
  bool ended = false;
  QObject context;
  QObject::connect(&client, &RemoteClient::chatText, &context, [&](qint64, const QString& delta) {
    const bool first = finished.streamed.isEmpty();
    finished.streamed += delta;
    if (first && on_first_text) on_first_text();
  });
  QObject::connect(&client, &RemoteClient::chatFinished, &context,
                   [&](qint64, const RemoteChatResult& result) {
                     finished.result = result;
                     ended = true;
                   });
  // An event loop rather than QTest::qWaitFor, which sleeps 10 ms between
  // looks and would pace the stream's pieces.
  QEventLoop loop;
  QObject::connect(&client, &RemoteClient::chatFinished, &loop, &QEventLoop::quit);
  QTimer::singleShot(20000, &loop, &QEventLoop::quit);
  client.startChat(1, endpoint, hello_body());
  if (!ended) loop.exec();
  if (!ended) qFatal("the chat never ended");
  return finished;
}

}  // namespace

class RemoteClientTest : public QObject {
  Q_OBJECT

 private slots:
  void addressesAreReadAsPeopleTypeThem() {
    QString error;
    QCOMPARE(endpoint_base_url(QStringLiteral(" localhost:8000 "), &error).value(),
             QUrl(QStringLiteral("http://localhost:8000")));
    QCOMPARE(endpoint_base_url(QStringLiteral("http://gpu-box:8000/v1/"), &error).value(),
             QUrl(QStringLiteral("http://gpu-box:8000")));
    QCOMPARE(endpoint_base_url(QStringLiteral("https://example.org/api/v1"), &error).value(),
             QUrl(QStringLiteral("https://example.org/api")));
    const RemoteEndpoint under{QUrl(QStringLiteral("https://example.org/api")), {}};
    QCOMPARE(under.url(QStringLiteral("/v1/models")),
             QUrl(QStringLiteral("https://example.org/api/v1/models")));
    QCOMPARE(under.name(), QStringLiteral("example.org"));
    QVERIFY(!endpoint_base_url(QStringLiteral("ftp://host"), &error));
    QCOMPARE(error, QStringLiteral("\"ftp://host\" is not an http or https address."));
    QVERIFY(!endpoint_base_url(QString(), &error));
    QCOMPARE(error, QStringLiteral("No endpoint address is given."));
    QVERIFY(!endpoint_base_url(QStringLiteral("http://"), &error));
    QVERIFY(!endpoint_base_url(QStringLiteral("http://h:1/v1?x=1"), &error));
  }

  void modelsAreListedWithTheKey() {
    FakeEngine engine;
    engine.enqueue({200, "application/json",
                    R"({"object": "list", "data": [{"id": "a", "max_model_len": 4096},
                        {"id": "b"}]})"});
    RemoteClient client;
    QSignalSpy listed(&client, &RemoteClient::modelsListed);
    client.listModels(5, endpoint_at(engine.url() + QStringLiteral("/v1/"), QStringLiteral("k")));
    QVERIFY(listed.wait(10000));
    QCOMPARE(listed.at(0).at(0).toULongLong(), quint64{5});
    const auto models = listed.at(0).at(1).value<QList<RemoteModel>>();
    QCOMPARE(models.size(), 2);
    QCOMPARE(models[0].id, std::string("a"));
    QCOMPARE(models[0].context_tokens, std::int64_t{4096});
    QCOMPARE(engine.requests().at(0).method, QByteArray("GET"));
    QCOMPARE(engine.requests().at(0).path, QByteArray("/v1/models"));
    QCOMPARE(engine.requests().at(0).authorization, QByteArray("Bearer k"));
  }

  void aRefusedKeyAndAnAnswerThatIsNoListAreSaidSo() {
    FakeEngine engine;
    engine.enqueue({401, "application/json", R"({"detail": "Invalid API key"})"});
    engine.enqueue({401, "application/json", R"({"error": {"message": "Missing key"}})"});
    engine.enqueue({200, "text/html", "<html>a router's page</html>"});
    RemoteClient client;
    QSignalSpy failed(&client, &RemoteClient::listFailed);
    const QString name = engine.url().mid(7);
    client.listModels(1, endpoint_at(engine.url(), QStringLiteral("wrong")));
    QVERIFY(failed.wait(10000));
    QCOMPARE(failed.at(0).at(1).toString(),
             name + QStringLiteral(" refused the API key for listing its models (HTTP 401: "
                                   "Invalid API key). Check the key in Settings."));
    client.listModels(2, endpoint_at(engine.url()));
    QVERIFY(failed.wait(10000));
    QCOMPARE(failed.at(1).at(1).toString(),
             name + QStringLiteral(" needs an API key for listing its models (HTTP 401: Missing "
                                   "key). Enter the key the engine was started with in "
                                   "Settings."));
    client.listModels(3, endpoint_at(engine.url()));
    QVERIFY(failed.wait(10000));
    QVERIFY2(failed.at(2).at(1).toString().startsWith(
                 name + QStringLiteral(" did not answer /v1/models as an OpenAI-compatible "
                                       "engine does: the list of models is not JSON")),
             qPrintable(failed.at(2).at(1).toString()));
  }

  void nothingListeningIsSaidSo() {
    QTcpServer probe;
    QVERIFY(probe.listen(QHostAddress::LocalHost, 0));
    const quint16 port = probe.serverPort();
    probe.close();
    RemoteClient client;
    const Finished finished =
        run_chat(client, endpoint_at(QStringLiteral("127.0.0.1:%1").arg(port)));
    QCOMPARE(finished.result.finish_reason, QStringLiteral("error"));
    QCOMPARE(finished.result.error,
             QStringLiteral("Nothing answers at 127.0.0.1:%1 (connection refused). Start the "
                            "engine there, or check the address and port in Settings.")
                 .arg(port));
  }

  // https:// typed for an engine that serves plain HTTP.
  void aTlsFailureIsSaidSo() {
    FakeEngine engine;
    RemoteClient client;
    const QString name = engine.url().mid(7);
    const Finished finished = run_chat(client, endpoint_at(QStringLiteral("https://") + name));
    QCOMPARE(finished.result.finish_reason, QStringLiteral("error"));
    QVERIFY2(finished.result.error.startsWith(
                 QStringLiteral("The TLS connection to %1 failed: ").arg(name)),
             qPrintable(finished.result.error));
    QVERIFY(finished.result.error.endsWith(
        QStringLiteral("Check that the address uses the scheme the engine serves (http or "
                       "https) and that its certificate is trusted.")));
  }

  // An engine behind a self-signed certificate (fixtures/SOURCES.md): the
  // handshake is refused, and the message says why and what to check.
  void anUntrustedCertificateIsSaidSo() {
    QSslServer server;
    QSslConfiguration tls = QSslConfiguration::defaultConfiguration();
    const QList<QSslCertificate> certificates = QSslCertificate::fromData(
        quire::test::remote_fixture("untrusted_localhost.crt"), QSsl::Pem);
    QCOMPARE(certificates.size(), 1);
    tls.setLocalCertificate(certificates.first());
    tls.setPrivateKey(
        QSslKey(quire::test::remote_fixture("untrusted_localhost.key"), QSsl::Rsa, QSsl::Pem));
    tls.setPeerVerifyMode(QSslSocket::VerifyNone);
    server.setSslConfiguration(tls);
    QVERIFY(server.listen(QHostAddress::LocalHost, 0));
    RemoteClient client;
    const QString name = QStringLiteral("127.0.0.1:%1").arg(server.serverPort());
    const Finished finished = run_chat(client, endpoint_at(QStringLiteral("https://") + name));
    QCOMPARE(finished.result.finish_reason, QStringLiteral("error"));
    QVERIFY2(finished.result.error.startsWith(
                 QStringLiteral("The TLS connection to %1 failed: ").arg(name)),
             qPrintable(finished.result.error));
    QVERIFY2(finished.result.error.contains(QStringLiteral("self-signed")),
             qPrintable(finished.result.error));
    QVERIFY(finished.result.error.endsWith(QStringLiteral("that its certificate is trusted.")));
  }

  // A name no resolver knows (.invalid never resolves, RFC 6761).
  void anUnknownHostIsSaidSo() {
    RemoteClient client;
    const Finished finished =
        run_chat(client, endpoint_at(QStringLiteral("http://no-such-engine.invalid:8000/v1")));
    QCOMPARE(finished.result.finish_reason, QStringLiteral("error"));
    QCOMPARE(finished.result.error,
             QStringLiteral("The host of no-such-engine.invalid:8000 was not found. Check the "
                            "address in Settings."));
  }

  void everyEngineStreamArrivesWhole_data() {
    QTest::addColumn<QString>("fixture");
    QTest::addColumn<QString>("text");
    QTest::addColumn<QString>("finish");
    QTest::addColumn<int>("cached");  // -1: not reported
    QTest::addColumn<QString>("error");
    QTest::newRow("vllm") << "vllm_chat.sse"
                          << "Hello, wörld!"
                          << "stop" << 16 << "";
    QTest::newRow("vllm reasoning") << "vllm_reasoning.sse"
                                    << "<think>\nThe user greets me.\n</think>\n\nHi there."
                                    << "length" << -1 << "";
    QTest::newRow("sglang") << "sglang_chat.sse"
                            << "<think>\nShort answer.\n</think>\n\nYes."
                            << "stop" << -1 << "";
    QTest::newRow("llama.cpp") << "llamacpp_chat.sse"
                               << "Hello there"
                               << "stop" << 12 << "";
    QTest::newRow("ollama") << "ollama_chat.sse"
                            << "<think>\nThink\n</think>\n\nHello"
                            << "stop" << -1 << "";
    QTest::newRow("keep-alive") << "keepalive_comments.sse"
                                << "Kept alive"
                                << "stop" << -1 << "";
    QTest::newRow("vllm error")
        << "vllm_error.sse"
        << "Partial"
        << "error" << -1
        << "%1 sent a reply Quire cannot read (the engine reported an error: The engine is "
           "dead: CUDA error: an illegal memory access was encountered). What arrived is kept.";
    QTest::newRow("tabbyapi error")
        << "tabbyapi_error.sse"
        << "Once upon"
        << "error" << -1
        << "%1 sent a reply Quire cannot read (the engine reported an error: Chat completion "
           "aborted. Please check the server console.). What arrived is kept.";
  }

  void everyEngineStreamArrivesWhole() {
    QFETCH(QString, fixture);
    QFETCH(QString, text);
    QFETCH(QString, finish);
    QFETCH(int, cached);
    QFETCH(QString, error);
    FakeEngine engine;
    FakeAnswer answer;
    answer.body = quire::test::remote_fixture(fixture.toUtf8().constData());
    answer.piece = 5;
    engine.enqueue(answer);
    RemoteClient client;
    const Finished finished = run_chat(client, endpoint_at(engine.url()));
    QCOMPARE(finished.streamed, text);
    QCOMPARE(finished.result.text, text);
    QCOMPARE(finished.result.finish_reason, finish);
    QCOMPARE(finished.result.error, error.isEmpty() ? QString() : error.arg(engine.url().mid(7)));
    QCOMPARE(finished.result.usage && finished.result.usage->cached_tokens
                 ? static_cast<int>(*finished.result.usage->cached_tokens)
                 : -1,
             cached);
    if (finish != QStringLiteral("error")) QVERIFY(finished.result.time_to_first_token_ms > 0);
    const nlohmann::json sent = nlohmann::json::parse(engine.requests().at(0).body.toStdString());
    QCOMPARE(engine.requests().at(0).path, QByteArray("/v1/chat/completions"));
    QVERIFY(sent["stream"] == nlohmann::json(true));
  }

  void aWholeReplyInsteadOfAStreamIsRead() {
    FakeEngine engine;
    engine.enqueue({200, "application/json",
                    R"({"choices": [{"index": 0, "message": {"role": "assistant", "content":
                        "At once"}, "finish_reason": "stop"}], "usage": {"prompt_tokens": 5,
                        "completion_tokens": 2}})"});
    RemoteClient client;
    const Finished finished = run_chat(client, endpoint_at(engine.url()));
    QCOMPARE(finished.streamed, QStringLiteral("At once"));
    QCOMPARE(finished.result.finish_reason, QStringLiteral("stop"));
    QCOMPARE(finished.result.usage->completion_tokens, std::int64_t{2});
  }

  void aModelThatIsGoneIsSaidSo() {
    FakeEngine engine;
    engine.enqueue({404, "application/json",
                    R"({"object": "error", "message": "The model `m` does not exist."})"});
    RemoteClient client;
    const Finished finished = run_chat(client, endpoint_at(engine.url()));
    QCOMPARE(finished.result.finish_reason, QStringLiteral("error"));
    QCOMPARE(finished.result.error,
             engine.url().mid(7) +
                 QStringLiteral(" has no such model or path for the reply (HTTP 404: The model "
                                "`m` does not exist.). Choose a model from the endpoint's list "
                                "again, and check that the address is the engine's OpenAI API "
                                "(often ending in /v1)."));
  }

  void aStreamCutOffKeepsWhatArrived() {
    FakeEngine engine;
    engine.enqueue(vllm_stream_through_hello(false));
    RemoteClient client;
    const Finished finished = run_chat(client, endpoint_at(engine.url()));
    QCOMPARE(finished.result.text, QStringLiteral("Hello"));
    QCOMPARE(finished.result.finish_reason, QStringLiteral("error"));
    QCOMPARE(finished.result.error,
             QStringLiteral("The connection to %1 ended before the reply was finished. What "
                            "arrived is kept.")
                 .arg(engine.url().mid(7)));
  }

  void anEngineThatFallsSilentTimesOut() {
    FakeEngine engine;
    engine.enqueue(vllm_stream_through_hello(true));
    RemoteClient client;
    client.setTransferTimeout(400);
    const Finished finished = run_chat(client, endpoint_at(engine.url()));
    QCOMPARE(finished.result.text, QStringLiteral("Hello"));
    QCOMPARE(finished.result.finish_reason, QStringLiteral("error"));
    QCOMPARE(finished.result.error,
             QStringLiteral("%1 stopped answering during the reply (timed out). Check that the "
                            "engine is running and reachable.")
                 .arg(engine.url().mid(7)));
  }

  void aStopAbortsTheRequestAndKeepsTheText() {
    FakeEngine engine;
    engine.enqueue(vllm_stream_through_hello(true));
    RemoteClient client;
    const Finished finished =
        run_chat(client, endpoint_at(engine.url()), [&client] { client.stop(1); });
    QCOMPARE(finished.result.finish_reason, QStringLiteral("cancelled"));
    QCOMPARE(finished.result.text, QStringLiteral("Hello"));
    QVERIFY(finished.result.error.isEmpty());
    QVERIFY(!client.isRunning(1));
    // The engine sees the connection go, which is how it cancels the job.
    QTRY_COMPARE(engine.clientClosed(), 1);
  }

  void aStreamQuireCannotReadIsSaidSo() {
    FakeEngine engine;
    FakeAnswer answer;
    answer.body = "data: {\"choices\": [{\"delta\": {\"content\": \"ok\"}}]}\n\ndata: {oops\n\n";
    engine.enqueue(answer);
    RemoteClient client;
    const Finished finished = run_chat(client, endpoint_at(engine.url()));
    QCOMPARE(finished.result.text, QStringLiteral("ok"));
    QCOMPARE(finished.result.error,
             QStringLiteral("%1 sent a reply Quire cannot read (an event of the stream is not "
                            "JSON: \"{oops\"). What arrived is kept.")
                 .arg(engine.url().mid(7)));
  }
};

QUIRE_TEST(RemoteClientTest)
#include "test_remote_client.moc"
