// A chat's banned strings and logit biases by text through the whole
// program: saved with the chat, sent with its next reply into the engine's
// job, which keeps a banned string out of the reply; and a chat whose reply
// is held to a tool's grammar gets a message saying why banned strings
// cannot apply, instead of a reply that silently fails.

#include <QSignalSpy>
#include <QTest>

#include "app_test_support.h"
#include "chat_controller.h"
#include "engine_host.h"
#include "main_window.h"
#include "quire/ui/chat_view.h"
#include "test_main.h"

using namespace quire;
using namespace quire::test;

namespace {

// Greedy replies, so that a reply generated again is the same unless a
// banned string changes it.
void sample_greedily(AppRun& run) {
  run.adjust_request = [](gui::ReplyRequest& request) { request.sampling.temperature = 0; };
}

}  // namespace

class TextRulesAppTest : public QObject {
  Q_OBJECT

 private slots:
  void aBannedStringReachesTheJobAndNeverTheReply() {
    AppRun run(random_model(), 16);
    sample_greedily(run);
    run.start();
    QVERIFY(run.waitForModel());
    QVERIFY(run.send(QStringLiteral("Tell me something.")));
    gui::QuireApplication& app = *run.app;
    const store::ChatId chat = *app.chats().currentChat();
    const store::Message free = app.store().current_path(chat).constLast();
    QCOMPARE(free.role, store::Role::Assistant);
    // A piece from the middle of what the model says when free to.
    const QString banned = free.text.mid(free.text.size() / 2, 3);
    QVERIFY2(banned.size() == 3, qPrintable(free.text));

    store::ChatSettings settings = *app.store().chat_settings(chat);
    settings.banned_strings = {banned};
    settings.logit_bias_text = {{QStringLiteral("Hello"), -3}};
    QVERIFY(app.store().set_chat_settings(chat, settings));

    QSignalSpy requests(&app.engine(), &gui::EngineHost::replyRequested);
    QSignalSpy finished(&app.engine(), &gui::EngineHost::replyFinished);
    app.chats().regenerate(store::raw(free.id));
    QVERIFY(finished.wait(120'000));
    const auto request = requests.constLast().first().value<gui::ReplyRequest>();
    QCOMPARE(request.banned_strings, QStringList{banned});
    QCOMPARE(request.logit_bias_text, settings.logit_bias_text);
    const auto outcome = finished.constLast().first().value<gui::ReplyOutcome>();
    QVERIFY2(outcome.error.isEmpty(), qPrintable(outcome.error));

    const store::Message reply = app.store().current_path(chat).constLast();
    QVERIFY(reply.id != free.id);
    QVERIFY(!reply.text.isEmpty());
    QVERIFY2(!reply.text.contains(banned, Qt::CaseInsensitive),
             qPrintable(QStringLiteral("\"%1\" in \"%2\"").arg(banned, reply.text)));
    // The free reply held it; the greedy one differs only by the ban.
    QVERIFY(free.text.contains(banned));
    QVERIFY(reply.text != free.text);
  }

  void bannedStringsWithAToolGrammarGiveAClearMessage() {
    // A model whose template calls tools: a reply offered tools is held to
    // their grammar once it begins a call.
    AppRun run(published_family_model(QStringLiteral("Qwen3-8B-tools"), "qwen3-8b.json",
                                      "tokenizer-qwen3"),
               8);
    run.adjust_request = [](gui::ReplyRequest& request) {
      request.tools = R"([{"type": "function", "function": {"name": "stats",
                           "parameters": {"type": "object", "properties": {}}}}])";
    };
    run.start();
    QVERIFY(run.waitForModel());
    QVERIFY(run.send(QStringLiteral("Hello!")));
    gui::QuireApplication& app = *run.app;
    const store::ChatId chat = *app.chats().currentChat();
    store::ChatSettings settings = *app.store().chat_settings(chat);
    settings.banned_strings = {QStringLiteral("never")};
    QVERIFY(app.store().set_chat_settings(chat, settings));

    QSignalSpy finished(&app.engine(), &gui::EngineHost::replyFinished);
    run.type(QStringLiteral("And again."));
    QVERIFY(finished.wait(120'000));
    const auto outcome = finished.constLast().first().value<gui::ReplyOutcome>();
    const QString expected = QStringLiteral(
        "The reply could not start: This chat's banned strings cannot be combined with tool "
        "calls, whose text follows each tool's schema. Remove the banned strings in Chat "
        "settings, or turn tools off for this chat there.");
    QCOMPARE(outcome.error, expected);
    // The chat shows it on the reply, with Retry.
    const std::optional<ui::ChatMessageView> shown =
        app.window().chatView()->message(outcome.reply_id);
    QVERIFY(shown);
    QCOMPARE(shown->error, expected);
    QVERIFY(shown->canRetry);
  }
};

QUIRE_TEST(TextRulesAppTest)
#include "test_text_rules_app.moc"
