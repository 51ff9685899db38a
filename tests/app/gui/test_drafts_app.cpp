// Settings → Speculative decoding in the running application: chat replies
// and the built-in server's requests draft as the settings say, a change
// applies to the replies after it, the reply's statistics carry the drafts
// to the status line, and a draft model loads with the model (or says why
// it did not).

#include <httplib.h>

#include <QComboBox>
#include <QPushButton>
#include <QTest>
#include <future>
#include <nlohmann/json.hpp>

#include "app_test_support.h"
#include "engine_host.h"
#include "main_window.h"
#include "quire/ui/memory_panel.h"
#include "quire/ui/settings_panel.h"
#include "reply_stats.h"
#include "test_main.h"

using namespace quire;
using namespace quire::test;
using nlohmann::json;

namespace {

// A message that repeats itself: a greedy reply that goes on with it gives
// the n-gram drafter runs to find.
const QString kRepeatingMessage =
    QStringLiteral("red green blue red green blue red green blue red green blue red green");

// The settings file of `run` before the application starts: greedy replies
// drafts as `method` says (with the draft model in `draft_model`), the
// server on `port` when it is not 0.
void write_draft_settings(AppRun& run, const QString& method, int server_port = 0,
                          const QString& draft_model = {}) {
  app::AppSettings settings(run.data.filePath(QStringLiteral("quire.conf")));
  settings.load();
  settings.engine.sampling.temperature = 0;
  settings.engine.drafts = {method, 5, draft_model};
  if (server_port > 0) settings.server = {true, server_port};
  QVERIFY(settings.save());
}

// One request on a thread of its own while this thread's event loop runs.
std::string drafts_http(int port, const std::string& method, const std::string& path,
                        const json& body = {}) {
  std::future<std::string> reply = std::async(std::launch::async, [=] {
    httplib::Client client("127.0.0.1", port);
    client.set_read_timeout(120);
    const httplib::Result result = method == "GET"
                                       ? client.Get(path.c_str())
                                       : client.Post(path.c_str(), body.dump(), "application/json");
    return result && result->status == 200 ? result->body : std::string();
  });
  (void)QTest::qWaitFor(
      [&] { return reply.wait_for(std::chrono::seconds(0)) == std::future_status::ready; },
      180'000);
  return reply.get();
}

// Settings → Speculative decoding: n-gram drafts off, applied.
bool turn_drafts_off(AppRun& run) {
  ui::SettingsPanel& panel = *run.app->window().settingsPanel();
  auto* method = panel.findChild<QComboBox*>(QStringLiteral("draftMethod"));
  auto* apply = panel.findChild<QPushButton*>(QStringLiteral("applyButton"));
  if (!method || !apply || method->currentData().toString() == QLatin1String("off")) return false;
  method->setCurrentIndex(method->findData(QStringLiteral("off")));
  if (!apply->isEnabled()) return false;
  apply->click();
  return run.app->settings().engine.drafts.method == QLatin1String("off");
}

std::int64_t drafted_so_far(int port) {
  const std::string body = drafts_http(port, "GET", "/v1/quire/stats");
  return body.empty() ? -1 : json::parse(body).at("drafted_tokens").get<std::int64_t>();
}

}  // namespace

class AppDraftsTest : public QObject {
  Q_OBJECT

 private slots:
  void chatRepliesDraftAsTheSettingsSay() {
    AppRun run(random_model(), 40);
    write_draft_settings(run, QStringLiteral("ngram"));
    run.start();
    QVERIFY(run.waitForModel());
    const std::optional<store::GenerationStats> drafted = run.send(kRepeatingMessage);
    QVERIFY(drafted);
    QCOMPARE(drafted->generated_tokens, 40);
    QVERIFY(drafted->drafted_tokens > 0);
    QVERIFY(drafted->accepted_tokens <= drafted->drafted_tokens);
    // The line under the reply says how the drafts went.
    QVERIFY(gui::stats_text(*drafted).contains(gui::drafts_text(*drafted)));
    QVERIFY(!gui::drafts_text(*drafted).isEmpty());

    // Off again, applied live: the next reply decodes a token a step.
    QVERIFY(turn_drafts_off(run));
    const std::optional<store::GenerationStats> plain = run.send(kRepeatingMessage);
    QVERIFY(plain);
    QCOMPARE(plain->drafted_tokens, 0);
    QCOMPARE(gui::drafts_text(*plain), QString());
  }

  // The model drafting for itself: a draft model with its tokenizer, loaded
  // beside it, whose drafts the model keeps.
  void aDraftModelLoadsWithTheModel() {
    AppRun run(random_model(), 32);
    write_draft_settings(run, QStringLiteral("model"), 0, random_model());
    run.start();
    QVERIFY(run.waitForModel());
    QCOMPARE(run.app->window().noticeText(), QString());
    const std::optional<store::GenerationStats> drafted =
        run.send(QStringLiteral("Tell me something"));
    QVERIFY(drafted);
    QCOMPARE(drafted->generated_tokens, 32);
    QVERIFY(drafted->drafted_tokens >= 16);
    QVERIFY(drafted->accepted_tokens * 10 >= drafted->drafted_tokens * 9);
    // The memory panel counts the draft's weights with the model's, not as
    // memory of other processes.
    ui::MemoryPanel& memory = *run.app->window().memoryPanel();
    QTRY_VERIFY(!memory.snapshot().isEmpty());
    const QString detail = memory.snapshot().devices.value(0).weights_detail;
    QVERIFY2(detail.contains(QStringLiteral("; draft model: ")), qPrintable(detail));
  }

  // A folder that holds no model: the model loads and serves, the notice
  // says why the draft did not, and replies decode without drafts.
  void aDraftModelThatCannotLoadIsNamed() {
    AppRun run(random_model(), 16);
    QTemporaryDir empty;
    write_draft_settings(run, QStringLiteral("model"), 0, empty.path());
    run.start();
    QVERIFY(run.waitForModel());
    const QString notice = run.app->window().noticeText();
    QVERIFY2(notice.startsWith(QStringLiteral("The draft model %1 was not loaded: no config.json "
                                              "in %1")
                                   .arg(empty.path())),
             qPrintable(notice));
    QVERIFY(
        notice.endsWith(QStringLiteral("Replies decode without its drafts; choose another in "
                                       "Settings → Speculative decoding.")));
    const std::optional<store::GenerationStats> plain = run.send(QStringLiteral("Hello"));
    QVERIFY(plain);
    QCOMPARE(plain->generated_tokens, 16);
    QCOMPARE(plain->drafted_tokens, 0);
  }

  void serverRequestsDraftWithTheSameReply() {
    AppRun run(random_model(), 24);
    const int port = free_port();
    write_draft_settings(run, QStringLiteral("ngram"), port);
    run.start();
    QVERIFY(run.waitForModel());
    QVERIFY(QTest::qWaitFor(
        [&] {
          return run.app->engine().serverState().state == ui::ServerStatusView::State::Serving;
        },
        120'000));
    const json request{
        {"messages",
         json::array({{{"role", "user"}, {"content", kRepeatingMessage.toStdString()}}})},
        {"temperature", 0},
        {"max_tokens", 32}};
    QCOMPARE(drafted_so_far(port), std::int64_t{0});
    const std::string with_drafts = drafts_http(port, "POST", "/v1/chat/completions", request);
    QVERIFY(!with_drafts.empty());
    const std::int64_t drafted = drafted_so_far(port);
    QVERIFY(drafted > 0);

    QVERIFY(turn_drafts_off(run));
    // The setting reaches the engine thread before the next request.
    QTest::qWait(200);
    const std::string without = drafts_http(port, "POST", "/v1/chat/completions", request);
    QVERIFY(!without.empty());
    QCOMPARE(drafted_so_far(port), drafted);
    // Token for token the same greedy reply.
    const auto content = [](const std::string& body) {
      return json::parse(body)["choices"][0]["message"]["content"].get<std::string>();
    };
    QVERIFY(!content(with_drafts).empty());
    QCOMPARE(content(without), content(with_drafts));
  }
};

QUIRE_TEST(AppDraftsTest)
#include "test_drafts_app.moc"
