// The desktop application with a real `quire-cli serve` process as its remote
// engine (no mock): the key from the keyring, a two-turn chat that streams, is
// stored with the engine's counts (the second turn's prompt from the engine's
// cache) and goes on after a restart; Stop aborts the request and the engine
// cancels the job; an engine killed mid-reply leaves a clear message and the
// partial reply; a wrong key is refused by name in Settings before anything
// is applied, and the model run here stays.

#include <QComboBox>
#include <QLabel>
#include <QLineEdit>
#include <QProcess>
#include <QPushButton>
#include <QRegularExpression>
#include <QSignalSpy>
#include <QTest>

#include "app_test_support.h"
#include "chat_controller.h"
#include "engine_host.h"
#include "main_window.h"
#include "quire/app/app_settings.h"
#include "quire/remote/api_key_store.h"
#include "quire/ui/chat_view.h"
#include "quire/ui/memory_panel.h"
#include "quire/ui/settings_panel.h"
#include "test_main.h"

using namespace quire;
using namespace quire::test;

// A named namespace, not an anonymous one: the unity build includes this file
// in another, where a lambda of the test class capturing a type with internal
// linkage is refused (-Wsubobject-linkage).
namespace quire::test::remote_app {

// `quire-cli serve MODEL --port 0 --api-key KEY` until destroyed.
class ServeProcess {
 public:
  ServeProcess(const QString& model, const QString& key) {
    process_.setProcessChannelMode(QProcess::MergedChannels);
    process_.start(QStringLiteral(QUIRE_CLI_BINARY),
                   {QStringLiteral("serve"), model, QStringLiteral("--port"), QStringLiteral("0"),
                    QStringLiteral("--api-key"), key});
    const QRegularExpression address(QStringLiteral("on http://127\\.0\\.0\\.1:(\\d+)/v1"));
    QString output;
    for (int waited = 0; waited < 60'000 && port_ == 0; waited += 50) {
      process_.waitForReadyRead(50);
      output += QString::fromUtf8(process_.readAll());
      if (const QRegularExpressionMatch match = address.match(output); match.hasMatch())
        port_ = match.captured(1).toInt();
    }
    if (port_ == 0) qWarning("quire-cli serve did not start: %s", qPrintable(output));
  }
  ~ServeProcess() {
    process_.kill();
    process_.waitForFinished();
  }
  int port() const { return port_; }
  QString url() const { return QStringLiteral("127.0.0.1:%1/v1").arg(port_); }
  QString name() const { return QStringLiteral("127.0.0.1:%1").arg(port_); }
  void kill() {
    process_.kill();
    process_.waitForFinished();
  }

 private:
  QProcess process_;
  int port_ = 0;
};

// Settings that chat through `serve`, its key in the run's keyring.
void use_remote(AppRun& run, const ServeProcess& serve, const QString& key,
                int max_new_tokens = 24) {
  app::AppSettings settings(run.data.filePath(QStringLiteral("quire.conf")));
  settings.load();
  settings.engine.remote_url = serve.url();
  settings.save();
  run.keys->write(QStringLiteral("http://127.0.0.1:%1").arg(serve.port()), key,
                  [](const QString&) {});
  run.restart(max_new_tokens);
}

// Sends `text` and, as the reply's first text arrives, calls `during`: at
// once, since a small model's whole reply takes well under a second.
std::optional<store::GenerationStats> send_then(AppRun& run, const QString& text,
                                                const std::function<void()>& during) {
  QSignalSpy finished(&run.app->chats(), &gui::ChatController::replyFinished);
  QObject context;
  bool called = false;
  QObject::connect(&run.app->engine(), &gui::EngineHost::replyText, &context, [&] {
    if (called) return;
    called = true;
    during();
  });
  run.type(text);
  if (!QTest::qWaitFor([&] { return !finished.isEmpty(); }, 60'000)) return std::nullopt;
  if (!called) return std::nullopt;
  return finished.takeFirst().at(1).value<store::GenerationStats>();
}

// Numbered questions, one after another, until a reply's outcome says that
// turns were dropped (or a reply fails, or fourteen were asked): the last
// outcome, or nullopt when one never came.
std::optional<gui::ReplyOutcome> ask_until_a_drop(AppRun& run) {
  QSignalSpy finished(&run.app->engine(), &gui::EngineHost::replyFinished);
  std::optional<gui::ReplyOutcome> last;
  for (int turn = 1; turn < 14; ++turn) {
    run.type(QStringLiteral("Tell me about the number %1, in a few words.").arg(turn));
    if (finished.isEmpty() && !finished.wait(120'000)) return std::nullopt;
    last = finished.takeFirst().first().value<gui::ReplyOutcome>();
    if (last->trimmed_turns > 0 || !last->error.isEmpty()) break;
  }
  return last;
}

}  // namespace quire::test::remote_app

using namespace quire::test::remote_app;

class RemoteEngineTest : public QObject {
  Q_OBJECT

 private slots:
  void aTwoTurnChatStreamsIsStoredAndGoesOnAfterARestart() {
    ServeProcess serve(demo_model(), QStringLiteral("secret"));
    QVERIFY(serve.port() > 0);
    AppRun run{QString()};
    use_remote(run, serve, QStringLiteral("secret"));
    QVERIFY(run.waitForModel());
    const std::optional<gui::ModelInfo>& model = run.app->model();
    QCOMPARE(model->backend, QStringLiteral("remote"));
    QCOMPARE(model->devices, QStringList{serve.name()});
    // quire-cli serve states the demo model's 256 positions (max_model_len).
    QCOMPARE(model->context_tokens, qint64{256});
    QVERIFY(run.app->engine().isRemote());
    gui::MainWindow& window = run.app->window();
    QCOMPARE(window.windowTitle(), model->name + QStringLiteral(" — Quire"));
    // The memory panel says where the memory is.
    auto* title = window.memoryPanel()->findChild<QLabel*>(QStringLiteral("memoryEmptyTitle"));
    QCOMPARE(title->text(), QStringLiteral("The model runs on %1").arg(serve.name()));

    // Settings show the stored key, and List models asks the engine with it.
    ui::SettingsPanel& panel = *window.settingsPanel();
    QCOMPARE(panel.findChild<QLineEdit*>(QStringLiteral("remoteKey"))->text(),
             QStringLiteral("secret"));
    QTest::mouseClick(panel.findChild<QPushButton*>(QStringLiteral("listRemoteModels")),
                      Qt::LeftButton);
    auto* listed = panel.findChild<QLabel*>(QStringLiteral("remoteStatus"));
    QTRY_COMPARE_WITH_TIMEOUT(listed->text(), QStringLiteral("The engine serves 1 model."), 20000);
    QCOMPARE(panel.findChild<QComboBox*>(QStringLiteral("remoteModel"))->currentText(),
             model->name);

    QSignalSpy deltas(&run.app->engine(), &gui::EngineHost::replyText);
    const std::optional<store::GenerationStats> first = run.send(QStringLiteral("Hello!"));
    QVERIFY(first);
    QCOMPARE(first->stop_reason == QLatin1String("eos") ||
                 first->stop_reason == QLatin1String("max_tokens"),
             true);
    QVERIFY(first->prompt_tokens > 0);
    QVERIFY(first->generated_tokens > 0);
    QCOMPARE(first->model, model->name);
    QCOMPARE(first->endpoint, serve.name());
    // Quire's server states its cache: the first prompt found nothing in it.
    QCOMPARE(first->cached_tokens, 0);
    QVERIFY(first->time_to_first_token_ms > 0);
    QString streamed;
    for (const QList<QVariant>& delta : deltas)
      streamed += delta.at(1).toString();
    const std::optional<store::ChatId> chat = run.app->chats().currentChat();
    QVERIFY(chat);
    QList<store::Message> messages = run.app->store().messages(*chat);
    QCOMPARE(messages.size(), 2);
    QCOMPARE(messages[1].text, streamed);
    QVERIFY(!streamed.isEmpty());

    // The engine keeps the first turn in its cache and says so.
    const std::optional<store::GenerationStats> second = run.send(QStringLiteral("And again?"));
    QVERIFY(second);
    QVERIFY2(second->cached_tokens >= first->prompt_tokens,
             qPrintable(QStringLiteral("%1 cached of %2")
                            .arg(second->cached_tokens)
                            .arg(first->prompt_tokens)));
    QCOMPARE(second->computed_tokens, second->prompt_tokens - second->cached_tokens);
    QCOMPARE(run.app->store().messages(*chat).size(), 4);

    // After a restart the chat, the endpoint and its key are still there.
    run.restart();
    QVERIFY(run.waitForModel());
    QVERIFY(run.app->engine().isRemote());
    QCOMPARE(run.app->chats().currentChat(), chat);
    QVERIFY(run.send(QStringLiteral("Third.")));
    messages = run.app->store().messages(*chat);
    QCOMPARE(messages.size(), 6);
    QCOMPARE(messages[0].text, QStringLiteral("Hello!"));
    QCOMPARE(messages[4].text, QStringLiteral("Third."));
  }

  // A chat whose policy is truncate-middle, on `quire-cli serve` of the demo
  // model (256 positions): the server is sent the policy, drops turns after
  // the first, and the reply says what went, as a chat run here does.
  void aQuireServerKeepsTheChatsContextPolicy() {
    ServeProcess serve(demo_model(), QStringLiteral("k"));
    QVERIFY(serve.port() > 0);
    AppRun run{QString()};
    use_remote(run, serve, QStringLiteral("k"));
    QVERIFY(run.waitForModel());
    QVERIFY(run.send(QStringLiteral("Tell me about the number 0, in a few words.")));
    const store::ChatId chat = *run.app->chats().currentChat();
    store::ChatSettings settings;
    settings.context_overflow = QStringLiteral("truncate_middle");
    QVERIFY(run.app->store().set_chat_settings(chat, settings));
    const std::optional<gui::ReplyOutcome> outcome = ask_until_a_drop(run);
    QVERIFY(outcome);
    QVERIFY2(outcome->error.isEmpty(), qPrintable(outcome->error));
    // The server's own report: the first turn stays, later ones went.
    QVERIFY(outcome->trimmed_turns > 0);
    QCOMPARE(outcome->trimmed_first_turn, 1);
    QVERIFY(outcome->trimmed_tokens > 0);
    QCOMPARE(outcome->context_overflow, QStringLiteral("truncate_middle"));
    const QString note = run.app->window().chatView()->message(outcome->reply_id)->notice;
    QVERIFY2(note.contains(QStringLiteral("after the first of this chat no longer")),
             qPrintable(note));
  }

  void stopAbortsTheRequest() {
    ServeProcess serve(random_model(), QStringLiteral("k"));
    QVERIFY(serve.port() > 0);
    AppRun run(QString(), 1500);
    use_remote(run, serve, QStringLiteral("k"), 1500);
    QVERIFY(run.waitForModel());
    const std::optional<store::GenerationStats> stopped =
        send_then(run, QStringLiteral("Go on and on."), [&] { run.app->chats().stop(); });
    QVERIFY(stopped);
    QCOMPARE(stopped->stop_reason, QStringLiteral("cancelled"));
    const store::Message reply = run.app->store().messages(*run.app->chats().currentChat()).last();
    QVERIFY(!reply.text.isEmpty());
    QCOMPARE(reply.stats->stop_reason, QStringLiteral("cancelled"));
    QVERIFY(!run.app->engine().isBusy());
    // The next request goes through at once: the engine's job was cancelled.
    QVERIFY(run.send(QStringLiteral("Short?"), 60'000));
  }

  void anEngineKilledMidReplyKeepsThePartialReply() {
    auto serve = std::make_unique<ServeProcess>(random_model(), QStringLiteral("k"));
    QVERIFY(serve->port() > 0);
    const QString name = serve->name();
    AppRun run(QString(), 1500);
    use_remote(run, *serve, QStringLiteral("k"), 1500);
    QVERIFY(run.waitForModel());
    const std::optional<store::GenerationStats> cut =
        send_then(run, QStringLiteral("Go on and on."), [&] { serve->kill(); });
    QVERIFY(cut);
    QCOMPARE(cut->stop_reason, QStringLiteral("error"));
    const store::Message reply = run.app->store().messages(*run.app->chats().currentChat()).last();
    QVERIFY(!reply.text.isEmpty());
    gui::MainWindow& window = run.app->window();
    const QString shown = window.chatView()->message(store::raw(reply.id))->error;
    QVERIFY2(shown.startsWith(QStringLiteral("The connection to %1 ended before the reply was "
                                             "finished")
                                  .arg(name)) ||
                 shown.startsWith(name + QStringLiteral(" closed the connection")),
             qPrintable(shown));
  }

  void aWrongKeyIsRefusedByNameAndTheModelRunHereStays() {
    ServeProcess serve(demo_model(), QStringLiteral("right"));
    QVERIFY(serve.port() > 0);
    AppRun run(demo_model());
    run.start();
    QVERIFY(run.waitForModel());
    QCOMPARE(run.app->model()->backend, QStringLiteral("cpu"));
    QSignalSpy failed(run.app.get(), &gui::QuireApplication::loadFailed);
    // As a user does it: the address and a key in Settings, then Apply.
    ui::SettingsPanel& panel = *run.app->window().settingsPanel();
    QTest::keyClicks(panel.findChild<QLineEdit*>(QStringLiteral("remoteUrl")), serve.url());
    QTest::keyClicks(panel.findChild<QLineEdit*>(QStringLiteral("remoteKey")),
                     QStringLiteral("wrong"));
    panel.apply();
    // Apply checks the address and key first: the refusal is named in the
    // dialog, next to the fields, and nothing is applied or loaded.
    auto* status = panel.findChild<QLabel*>(QStringLiteral("remoteStatus"));
    QTRY_VERIFY_WITH_TIMEOUT(status->text().contains(QStringLiteral("refused the API key")),
                             30'000);
    QVERIFY2(status->text().contains(serve.name() + QStringLiteral(" refused the API key")),
             qPrintable(status->text()));
    QVERIFY(failed.isEmpty());
    QVERIFY(run.app->settings().engine.remote_url.isEmpty());
    // The model run here was never unloaded.
    QCOMPARE(run.app->model()->backend, QStringLiteral("cpu"));
    QVERIFY(!run.app->engine().isRemote());
    QVERIFY(run.send(QStringLiteral("Still here?")));
  }
};

QUIRE_TEST(RemoteEngineTest)
#include "test_remote_engine.moc"
