// Settings → Server: the OpenAI-compatible server inside the application,
// over HTTP and through OpenAI's official client. It serves from the
// generator the chats use (their prefix cache and batches), closes its port
// when turned off, follows a model switch, and says so when its port is taken.

#include <arpa/inet.h>
#include <httplib.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <QCheckBox>
#include <QLabel>
#include <QLineEdit>
#include <QProcess>
#include <QSignalSpy>
#include <QSpinBox>
#include <QStatusBar>
#include <QTest>
#include <atomic>
#include <future>
#include <nlohmann/json.hpp>

#include "app_test_support.h"
#include "engine_host.h"
#include "main_window.h"
#include "quire/app/presets/preset_library.h"
#include "quire/ui/input_box.h"
#include "quire/ui/memory_panel.h"
#include "quire/ui/server_panel.h"
#include "test_main.h"

using namespace quire;
using namespace quire::test;
using State = ui::ServerStatusView::State;
using nlohmann::json;

namespace {

// A port that another program listens on, while this lives.
class HeldPort {
 public:
  HeldPort() : fd_(::socket(AF_INET, SOCK_STREAM, 0)) {
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ::bind(fd_, reinterpret_cast<sockaddr*>(&address), sizeof(address));
    ::listen(fd_, 1);
    socklen_t length = sizeof(address);
    ::getsockname(fd_, reinterpret_cast<sockaddr*>(&address), &length);
    port_ = ntohs(address.sin_port);
  }
  ~HeldPort() { ::close(fd_); }
  HeldPort(const HeldPort&) = delete;
  HeldPort& operator=(const HeldPort&) = delete;
  int port() const { return port_; }

 private:
  int fd_;
  int port_ = 0;
};

// The settings file of `run` with the server set, before the application starts.
void set_server(AppRun& run, bool enabled, int port) {
  app::AppSettings settings(run.data.filePath(QStringLiteral("quire.conf")));
  settings.load();
  settings.server = {enabled, port};
  QVERIFY(settings.save());
}

struct HttpReply {
  int status = 0;  // 0: no connection
  std::string body;
};

// One request on a thread of its own, while this thread's event loop runs
// (the application's window and its engine answer through it).
HttpReply http(int port, const std::string& method, const std::string& path,
               const json& body = {}) {
  std::future<HttpReply> reply = std::async(std::launch::async, [=] {
    httplib::Client client("127.0.0.1", port);
    client.set_read_timeout(120);
    const httplib::Result result = method == "GET"
                                       ? client.Get(path.c_str())
                                       : client.Post(path.c_str(), body.dump(), "application/json");
    return result ? HttpReply{result->status, result->body} : HttpReply{};
  });
  // The reply comes, or the client's read timeout ends the wait below.
  (void)QTest::qWaitFor(
      [&] { return reply.wait_for(std::chrono::seconds(0)) == std::future_status::ready; },
      180'000);
  return reply.get();
}

json chat_request(const std::string& user, int max_tokens, bool stream = false) {
  return {{"messages", json::array({{{"role", "user"}, {"content", user}}})},
          {"temperature", 0},
          {"max_tokens", max_tokens},
          {"stream", stream},
          {"stream_options", {{"include_usage", true}}}};
}

std::int64_t cached_tokens(const json& usage) {
  return usage.at("prompt_tokens_details").at("cached_tokens").get<std::int64_t>();
}

// The text of a streamed chat completion, and the usage event that closes it.
struct Streamed {
  std::string text;
  json usage;
  bool done = false;
};

Streamed parse_stream(const std::string& body) {
  Streamed streamed;
  std::size_t at = 0;
  while ((at = body.find("data: ", at)) != std::string::npos) {
    at += 6;
    const std::size_t end = body.find("\n\n", at);
    const std::string data = body.substr(at, end - at);
    if (data == "[DONE]") {
      streamed.done = true;
      break;
    }
    const json event = json::parse(data);
    if (event.contains("usage") && !event.at("usage").is_null()) streamed.usage = event["usage"];
    if (event.at("choices").empty()) continue;
    const json& delta = event.at("choices").at(0).at("delta");
    if (delta.contains("content")) streamed.text += delta.at("content").get<std::string>();
  }
  return streamed;
}

bool wait_for_state(gui::EngineHost& engine, State state, int timeout_ms = 120'000) {
  return QTest::qWaitFor([&] { return engine.serverState().state == state; }, timeout_ms);
}

// Starts the application with its server on `port` and waits until the model
// has loaded and the server answers there.
bool start_serving(AppRun& run, int port) {
  set_server(run, true, port);
  run.start();
  return run.waitForModel() && wait_for_state(run.app->engine(), State::Serving);
}

}  // namespace

class AppServerTest : public QObject {
  Q_OBJECT

 private slots:
  void offByDefault() {
    AppRun run(random_model());
    run.start();
    QVERIFY(run.waitForModel());
    QTest::qWait(100);
    QCOMPARE(run.app->engine().serverState().state, State::Off);
    auto* enabled =
        run.app->window().serverPanel()->findChild<QCheckBox*>(QStringLiteral("serverEnabled"));
    QVERIFY(enabled && !enabled->isChecked());
  }

  void servesChatCompletionsFromTheChatsGenerator() {
    AppRun run(random_model(), 24);
    const int port = free_port();
    QVERIFY(start_serving(run, port));
    gui::EngineHost& engine = run.app->engine();
    const QString url = QStringLiteral("http://127.0.0.1:%1/v1").arg(port);
    QCOMPARE(engine.serverState().url, url);
    ui::ServerPanel& panel = *run.app->window().serverPanel();
    QCOMPARE(panel.findChild<QLineEdit*>(QStringLiteral("serverUrl"))->text(), url);

    const HttpReply models = http(port, "GET", "/v1/models");
    QCOMPARE(models.status, 200);
    QCOMPARE(json::parse(models.body)["data"][0]["id"].get<std::string>(),
             std::string("random-llama"));

    // A chat in the window first; then the API sends the same conversation,
    // whose prompt the chat's pages already hold.
    const std::optional<store::GenerationStats> chat = run.send(QStringLiteral("Hello there"));
    QVERIFY(chat);
    ui::MemoryPanel& memory = *run.app->window().memoryPanel();
    QSignalSpy snapshots(&engine, &gui::EngineHost::snapshotReady);
    engine.requestSnapshot();
    QVERIFY(snapshots.wait(10'000));
    const qint64 computed_before = memory.snapshot().cache.computed_tokens;
    const qint64 reused_before = memory.snapshot().cache.reused_tokens;

    const HttpReply whole =
        http(port, "POST", "/v1/chat/completions", chat_request("Hello there", 8));
    QCOMPARE(whole.status, 200);
    const json whole_body = json::parse(whole.body);
    const json& usage = whole_body["usage"];
    QCOMPARE(usage["completion_tokens"].get<int>(), 8);
    const std::int64_t prompt_tokens = usage["prompt_tokens"].get<std::int64_t>();
    const std::int64_t from_chat = cached_tokens(usage);
    QVERIFY2(from_chat > 0, whole.body.c_str());
    QVERIFY(from_chat < prompt_tokens);
    const std::string text = whole_body["choices"][0]["message"]["content"].get<std::string>();

    // The memory panel counts the API's prompt: what it found in the cache
    // and what it computed.
    snapshots.clear();
    engine.requestSnapshot();
    QVERIFY(snapshots.wait(10'000));
    QCOMPARE(memory.snapshot().cache.computed_tokens - computed_before, prompt_tokens - from_chat);
    QCOMPARE(memory.snapshot().cache.reused_tokens - reused_before, from_chat);

    // Again, streamed: the same greedy reply, text by text.
    const HttpReply streamed_reply =
        http(port, "POST", "/v1/chat/completions", chat_request("Hello there", 8, true));
    QCOMPARE(streamed_reply.status, 200);
    const Streamed streamed = parse_stream(streamed_reply.body);
    QVERIFY(streamed.done);
    QCOMPARE(streamed.text, text);
    QCOMPARE(streamed.usage["prompt_tokens"].get<std::int64_t>(), prompt_tokens);
    // Whole pages only are shared, and the same prompt ends in the same
    // partial page: it finds what the first request found.
    QCOMPARE(cached_tokens(streamed.usage), from_chat);
  }

  // The official OpenAI client (Node, pinned in tests/reference) pointed at
  // the app's URL chats two streamed turns, the second finding the first's
  // prompt and reply in the cache the chats use (the memory panel counts
  // them), and gets the same reply whole.
  void theOfficialOpenAiClientChatsWithTheApp() {
    const QString node = QStringLiteral(QUIRE_NODE);
    if (node.isEmpty()) QFAIL("Node.js is missing; scripts/setup-debian.sh installs it");
    AppRun run(random_model());
    const int port = free_port();
    QVERIFY(start_serving(run, port));
    gui::EngineHost& engine = run.app->engine();
    ui::MemoryPanel& memory = *run.app->window().memoryPanel();
    QSignalSpy snapshots(&engine, &gui::EngineHost::snapshotReady);
    engine.requestSnapshot();
    QVERIFY(snapshots.wait(10'000));
    const qint64 reused_before = memory.snapshot().cache.reused_tokens;

    QProcess client;
    client.setProgram(node);
    client.setArguments({QStringLiteral(QUIRE_REFERENCE_DIR "/openai_app_check.mjs"),
                         engine.serverState().url, QStringLiteral("random-llama")});
    client.start();
    QVERIFY(client.waitForStarted(10'000));
    // The app answers through this thread's event loop: wait while it runs.
    QVERIFY(QTest::qWaitFor([&] { return client.state() == QProcess::NotRunning; }, 300'000));
    const QByteArray errors = client.readAllStandardError();
    QVERIFY2(client.exitStatus() == QProcess::NormalExit && client.exitCode() == 0,
             errors.constData());
    const json figures = json::parse(client.readAllStandardOutput().trimmed().toStdString());
    // The reply is found token for token as it was generated: all of turn
    // one but its last token (sampled, never computed into the cache).
    const std::int64_t turn1 = figures["turn1_prompt_tokens"].get<std::int64_t>() +
                               figures["turn1_completion_tokens"].get<std::int64_t>();
    const std::int64_t turn2_cached = figures["turn2_cached_tokens"].get<std::int64_t>();
    QVERIFY2(turn2_cached >= turn1 - 1, figures.dump().c_str());
    const std::int64_t whole_cached = figures["whole_cached_tokens"].get<std::int64_t>();
    QVERIFY2(whole_cached >= turn2_cached, figures.dump().c_str());

    snapshots.clear();
    engine.requestSnapshot();
    QVERIFY(snapshots.wait(10'000));
    QVERIFY(memory.snapshot().cache.reused_tokens - reused_before >= turn2_cached + whole_cached);
    QTRY_COMPARE(engine.serverState().running + engine.serverState().waiting, 0);
  }

  void anApiRequestRunsBesideAChat() {
    AppRun run(random_model(), 1500);
    const int port = free_port();
    QVERIFY(start_serving(run, port));
    gui::EngineHost& engine = run.app->engine();
    QSignalSpy statuses(&engine, &gui::EngineHost::serverStatus);

    run.type(QStringLiteral("A long story, please"));
    QVERIFY(run.app->window().input()->isGenerating());
    // While the chat generates, a streamed request: a few texts in (the
    // statistics are published after each step), the server's statistics
    // show its job running and both sequences in the one cache.
    std::atomic<bool> looked = false;
    int texts = 0;
    json seen;
    std::future<int> request = std::async(std::launch::async, [&] {
      httplib::Client client("127.0.0.1", port);
      client.set_read_timeout(120);
      httplib::Request post;
      post.method = "POST";
      post.path = "/v1/chat/completions";
      post.body = chat_request("Something else", 64, true).dump();
      post.set_header("Content-Type", "application/json");
      post.content_receiver = [&](const char* data, std::size_t size, std::uint64_t,
                                  std::uint64_t) {
        if (std::string_view(data, size).find("\"content\"") != std::string::npos) ++texts;
        if (!looked && texts == 3) {
          httplib::Client stats("127.0.0.1", port);
          if (const httplib::Result result = stats.Get("/v1/quire/stats")) {
            seen = json::parse(result->body);
          }
          looked = true;
        }
        return true;
      };
      httplib::Response response;
      httplib::Error error = httplib::Error::Success;
      return client.send(post, response, error) ? response.status : 0;
    });
    QVERIFY(QTest::qWaitFor(
        [&] { return request.wait_for(std::chrono::seconds(0)) == std::future_status::ready; },
        120'000));
    QCOMPARE(request.get(), 200);
    QVERIFY(looked);
    QVERIFY2(run.app->window().input()->isGenerating(), "the chat ended before the request");
    QCOMPARE(seen["running"].get<int>(), 1);
    QCOMPARE(seen["cache"]["sequences"].get<int>(), 2);
    // The panel saw the request in flight.
    bool saw_running = false;
    for (const QList<QVariant>& status : statuses) {
      if (status.first().value<ui::ServerStatusView>().running == 1) saw_running = true;
    }
    QVERIFY(saw_running);
    QTRY_COMPARE(engine.serverState().running + engine.serverState().waiting, 0);
  }

  void requestsNamePresetsFromTheAppsLibrary() {
    AppRun run(random_model(), 24);
    const int port = free_port();
    QVERIFY(start_serving(run, port));
    presets::Preset tiny;
    tiny.name = QStringLiteral("Tiny");
    tiny.settings.temperature = 0.0;
    tiny.settings.max_new_tokens = 2;
    QString error;
    QVERIFY2(run.app->presets().save(tiny, &error), qPrintable(error));

    json unknown = chat_request("Hello", 4);
    unknown["preset"] = "Nope";
    const HttpReply refused = http(port, "POST", "/v1/chat/completions", unknown);
    QCOMPARE(refused.status, 400);
    QCOMPARE(json::parse(refused.body)["error"]["message"].get<std::string>(),
             std::string("preset \"Nope\" is unknown. Available presets: Precise, Balanced, "
                         "Creative, Code, Tiny."));

    // The preset's longest reply where the request gives none.
    json named = chat_request("Hello", 4);
    named.erase("max_tokens");
    named["preset"] = "Tiny";
    const HttpReply answered = http(port, "POST", "/v1/chat/completions", named);
    QCOMPARE(answered.status, 200);
    const json reply = json::parse(answered.body);
    QVERIFY(reply["usage"]["completion_tokens"].get<int>() <= 2);
    if (reply["choices"][0]["finish_reason"] == "length")
      QCOMPARE(reply["usage"]["completion_tokens"].get<int>(), 2);
  }

  void turningItOffClosesThePort() {
    AppRun run(random_model());
    const int port = free_port();
    QVERIFY(start_serving(run, port));
    QCOMPARE(http(port, "GET", "/health").status, 200);

    auto* enabled =
        run.app->window().serverPanel()->findChild<QCheckBox*>(QStringLiteral("serverEnabled"));
    enabled->click();
    QVERIFY(wait_for_state(run.app->engine(), State::Off));
    QCOMPARE(http(port, "GET", "/health").status, 0);
    // Stored as turned off.
    app::AppSettings stored(run.data.filePath(QStringLiteral("quire.conf")));
    stored.load();
    QCOMPARE(stored.server, (ui::ServerSettings{false, port}));

    enabled->click();
    QVERIFY(wait_for_state(run.app->engine(), State::Serving));
    QCOMPARE(http(port, "GET", "/health").status, 200);
  }

  void aModelSwitchStopsAndRestartsIt() {
    AppRun run(random_model());
    const int port = free_port();
    QVERIFY(start_serving(run, port));
    gui::EngineHost& engine = run.app->engine();
    QSignalSpy statuses(&engine, &gui::EngineHost::serverStatus);
    QSignalSpy loaded(run.app.get(), &gui::QuireApplication::modelLoaded);

    ui::EngineSettings settings = run.app->settings().engine;
    settings.model_directory = demo_model();
    run.app->loadModel(settings);
    QVERIFY(loaded.wait(120'000));
    QVERIFY(wait_for_state(engine, State::Serving));
    QList<State> states;
    for (const QList<QVariant>& status : statuses)
      states << status.first().value<ui::ServerStatusView>().state;
    QCOMPARE(states, (QList<State>{State::WaitingModel, State::Serving}));
    const HttpReply models = http(port, "GET", "/v1/models");
    QCOMPARE(models.status, 200);
    QCOMPARE(json::parse(models.body)["data"][0]["id"].get<std::string>(), std::string("exl2-4.0"));
    const HttpReply reply = http(port, "POST", "/v1/chat/completions", chat_request("Hi", 4));
    QCOMPARE(reply.status, 200);
    QCOMPARE(json::parse(reply.body)["model"].get<std::string>(), std::string("exl2-4.0"));
  }

  void aPortInUseIsSaidAndAnotherOneWorks() {
    const HeldPort held;
    const int taken = held.port();
    QVERIFY(taken > 0);
    AppRun run(random_model());
    set_server(run, true, taken);
    run.start();
    QVERIFY(run.waitForModel());
    gui::EngineHost& engine = run.app->engine();
    QVERIFY(wait_for_state(engine, State::Failed));
    const QString expected =
        QStringLiteral(
            "Quire could not listen on 127.0.0.1:%1: the port is in use (by another program, or "
            "another Quire). Choose another port in Settings → Server.")
            .arg(taken);
    QCOMPARE(engine.serverState().message, expected);
    ui::ServerPanel& panel = *run.app->window().serverPanel();
    QCOMPARE(panel.findChild<QLabel*>(QStringLiteral("serverMessage"))->text(), expected);
    QCOMPARE(run.app->window().statusBar()->currentMessage(), expected);

    const int port = free_port();
    panel.findChild<QSpinBox*>(QStringLiteral("serverPort"))->setValue(port);
    QVERIFY(wait_for_state(engine, State::Serving));
    QCOMPARE(http(port, "GET", "/health").status, 200);
    QCOMPARE(run.app->settings().server.port, port);
  }
};

QUIRE_TEST(AppServerTest)
#include "test_app_server.moc"
