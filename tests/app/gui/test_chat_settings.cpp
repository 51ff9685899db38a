// Settings of one chat through the whole program: set in the "Chat
// settings…" dialog, used by every reply of that chat (new message,
// regenerate, edit and resend) and by no other chat, kept across a restart.

#include <QAction>
#include <QApplication>
#include <QCheckBox>
#include <QCryptographicHash>
#include <QDialog>
#include <QDialogButtonBox>
#include <QDoubleSpinBox>
#include <QJsonObject>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QSignalSpy>
#include <QSpinBox>
#include <QTest>
#include <QWheelEvent>

#include "app_test_support.h"
#include "chat_controller.h"
#include "chat_settings_editor.h"
#include "engine_host.h"
#include "main_window.h"
#include "quire/ui/chat_list_widget.h"
#include "quire/ui/chat_settings_panel.h"
#include "test_main.h"

using namespace quire;
using namespace quire::test;

namespace {

constexpr int kGlobalMaxNewTokens = 24;
constexpr int kChatMaxNewTokens = 6;
const QString kChatPrompt = QStringLiteral("You are a pirate. Speak like one.");

QDialog* open_dialog(gui::QuireApplication& app) {
  app.window().chatSettingsAction()->trigger();
  QDialog* dialog = app.chatSettings().dialog();
  return dialog->isVisible() ? dialog : nullptr;
}

template <typename Editor>
Editor* own(gui::QuireApplication& app, const QString& field) {
  ui::ChatSettingsPanel* panel = app.chatSettings().panel();
  panel->findChild<QCheckBox*>(field + QStringLiteral("Override"))->setChecked(true);
  return panel->findChild<Editor*>(field);
}

void save(QDialog* dialog) {
  dialog->findChild<QDialogButtonBox*>(QStringLiteral("chatSettingsButtons"))
      ->button(QDialogButtonBox::Save)
      ->click();
}

// The digest of the system prompt the engine rendered a chat's last turn with
// (ModelInfo::render_key: directory|format|digest).
QString rendered_prompt_digest(gui::QuireApplication& app, store::ChatId chat) {
  return app.store()
      .chat(chat)
      ->model.settings.value(QLatin1String("render_key"))
      .toString()
      .section(u'|', -1);
}

QString digest_of(const QString& system_prompt) {
  return QString::fromLatin1(
      QCryptographicHash::hash(system_prompt.toUtf8(), QCryptographicHash::Sha1).toHex().left(12));
}

std::optional<store::GenerationStats> wait_for_reply(gui::QuireApplication& app,
                                                     const std::function<void()>& action) {
  QSignalSpy finished(&app.chats(), &gui::ChatController::replyFinished);
  action();
  if (finished.isEmpty() && !finished.wait(120'000)) return std::nullopt;
  return finished.first().at(1).value<store::GenerationStats>();
}

gui::ReplyRequest last_request(const QSignalSpy& requests) {
  return requests.constLast().first().value<gui::ReplyRequest>();
}

// `notches` of a mouse wheel rolled away from the user (scrolling up, which
// steps a spin box up) over the middle of `target`.
void roll_wheel_up(QWidget* target, int notches) {
  const QPointF inside(target->width() / 2.0, target->height() / 2.0);
  QWheelEvent event(inside, target->mapToGlobal(inside), QPoint(), QPoint(0, 120 * notches),
                    Qt::NoButton, Qt::NoModifier, Qt::NoScrollPhase, false);
  QApplication::sendEvent(target, &event);
}

store::ChatSettings pirate_settings() {
  store::ChatSettings settings;
  settings.temperature = 0.0;
  settings.max_new_tokens = kChatMaxNewTokens;
  settings.system_prompt = kChatPrompt;
  return settings;
}

}  // namespace

class ChatSettingsTest : public QObject {
  Q_OBJECT

 private slots:
  void aChatsOwnSettingsShapeEveryReplyOfItAndSurviveARestart() {
    AppRun run(demo_model(), kGlobalMaxNewTokens);
    run.start();
    QVERIFY(run.waitForModel());
    gui::QuireApplication* app = run.app.get();
    const ui::EngineSettings global = app->settings().engine;
    QSignalSpy requests(&app->engine(), &gui::EngineHost::replyRequested);

    // A chat with the global settings first.
    const std::optional<store::GenerationStats> first = run.send(QStringLiteral("Hello!"));
    QVERIFY(first);
    const store::ChatId pirate = *app->chats().currentChat();

    // Its own temperature, longest reply and system prompt, through the dialog.
    QDialog* dialog = open_dialog(*app);
    QVERIFY(dialog);
    QCOMPARE(app->chatSettings().panel()->overrides(), ui::ChatOverrides{});
    own<QDoubleSpinBox>(*app, QStringLiteral("chatTemperature"))->setValue(0.0);
    own<QSpinBox>(*app, QStringLiteral("chatMaxNewTokens"))->setValue(kChatMaxNewTokens);
    own<QPlainTextEdit>(*app, QStringLiteral("chatSystemPrompt"))->setPlainText(kChatPrompt);
    save(dialog);
    QVERIFY(!dialog->isVisible());
    QCOMPARE(app->store().chat_settings(pirate), pirate_settings());

    // A new message: rendered with the chat's system prompt, sampled greedily,
    // no longer than the chat allows.
    const std::optional<store::GenerationStats> asked =
        run.send(QStringLiteral("Tell me about the sea."));
    QVERIFY(asked);
    QVERIFY2(asked->generated_tokens <= kChatMaxNewTokens,
             qPrintable(QString::number(asked->generated_tokens)));
    QCOMPARE(last_request(requests).system_prompt, kChatPrompt);
    QCOMPARE(last_request(requests).sampling.temperature, 0.0);
    QCOMPARE(last_request(requests).sampling.top_p, global.sampling.top_p);
    QCOMPARE(last_request(requests).max_new_tokens, kChatMaxNewTokens);
    QCOMPARE(rendered_prompt_digest(*app, pirate), digest_of(kChatPrompt));

    // Regenerate: greedy sampling gives the same reply again.
    const QList<store::Message> path = app->store().current_path(pirate);
    const store::Message reply = path.constLast();
    const std::optional<store::GenerationStats> again =
        wait_for_reply(*app, [&] { app->chats().regenerate(store::raw(reply.id)); });
    QVERIFY(again);
    QCOMPARE(last_request(requests).max_new_tokens, kChatMaxNewTokens);
    QCOMPARE(last_request(requests).system_prompt, kChatPrompt);
    QCOMPARE(app->store().current_path(pirate).constLast().text, reply.text);
    QVERIFY(again->generated_tokens <= kChatMaxNewTokens);

    // Edit and resend: the chat's settings again.
    const store::Message question = path.at(path.size() - 2);
    QVERIFY(wait_for_reply(*app, [&] {
      app->chats().editAndResend(store::raw(question.id), QStringLiteral("And the moon?"));
    }));
    QCOMPARE(last_request(requests).system_prompt, kChatPrompt);
    QCOMPARE(last_request(requests).sampling.temperature, 0.0);
    QCOMPARE(last_request(requests).max_new_tokens, kChatMaxNewTokens);

    // Another chat follows the global settings.
    app->window().chatList()->newChatAction()->trigger();
    const std::optional<store::GenerationStats> other = run.send(QStringLiteral("Hello!"));
    QVERIFY(other);
    const store::ChatId plain = *app->chats().currentChat();
    QVERIFY(plain != pirate);
    QCOMPARE(last_request(requests).system_prompt, global.system_prompt);
    QCOMPARE(last_request(requests).sampling.temperature, global.sampling.temperature);
    QCOMPARE(last_request(requests).max_new_tokens, kGlobalMaxNewTokens);
    QCOMPARE(rendered_prompt_digest(*app, plain), digest_of(global.system_prompt));
    // The same first message with the same settings: the same prompt.
    QCOMPARE(other->prompt_tokens, first->prompt_tokens);
    QVERIFY(app->store().chat_settings(plain)->is_empty());

    // Its dialog shows its own (none), and the pirate chat's shows the pirate's.
    dialog = open_dialog(*app);
    QVERIFY(dialog);
    QCOMPARE(app->chatSettings().panel()->overrides(), ui::ChatOverrides{});
    dialog->reject();
    emit app->window().chatList()->chatSelected(store::raw(pirate));
    dialog = open_dialog(*app);
    QVERIFY(dialog);
    QCOMPARE(app->chatSettings().panel()->overrides().system_prompt, kChatPrompt);
    QCOMPARE(app->chatSettings().panel()->overrides().max_new_tokens, kChatMaxNewTokens);
    dialog->reject();

    // After a restart the chat keeps its settings and its replies use them.
    run.restart(kGlobalMaxNewTokens);
    QVERIFY(run.waitForModel());
    app = run.app.get();
    QCOMPARE(app->store().chat_settings(pirate), pirate_settings());
    emit app->window().chatList()->chatSelected(store::raw(pirate));
    QCOMPARE(app->chats().currentChat(), std::optional<store::ChatId>(pirate));
    QSignalSpy after(&app->engine(), &gui::EngineHost::replyRequested);
    const std::optional<store::GenerationStats> later = run.send(QStringLiteral("Goodbye."));
    QVERIFY(later);
    QVERIFY(later->generated_tokens <= kChatMaxNewTokens);
    QCOMPARE(last_request(after).system_prompt, kChatPrompt);
    QCOMPARE(last_request(after).sampling.temperature, 0.0);
  }

  void settingsChosenForANewChatApplyToItsFirstReply() {
    AppRun run(demo_model(), kGlobalMaxNewTokens);
    run.start();
    QVERIFY(run.waitForModel());
    gui::QuireApplication& app = *run.app;
    QSignalSpy requests(&app.engine(), &gui::EngineHost::replyRequested);
    app.window().chatList()->newChatAction()->trigger();
    QVERIFY(!app.chats().currentChat());

    QDialog* dialog = open_dialog(app);
    QVERIFY(dialog);
    own<QPlainTextEdit>(app, QStringLiteral("chatSystemPrompt"))->setPlainText(kChatPrompt);
    own<QSpinBox>(app, QStringLiteral("chatMaxNewTokens"))->setValue(kChatMaxNewTokens);
    save(dialog);

    const std::optional<store::GenerationStats> stats = run.send(QStringLiteral("Hello!"));
    QVERIFY(stats);
    QVERIFY(stats->generated_tokens <= kChatMaxNewTokens);
    const store::ChatId chat = *app.chats().currentChat();
    store::ChatSettings expected;
    expected.system_prompt = kChatPrompt;
    expected.max_new_tokens = kChatMaxNewTokens;
    QCOMPARE(app.store().chat_settings(chat), expected);
    QCOMPARE(last_request(requests).system_prompt, kChatPrompt);
    QCOMPARE(rendered_prompt_digest(app, chat), digest_of(kChatPrompt));

    // The next new chat starts from the global settings again.
    app.window().chatList()->newChatAction()->trigger();
    const std::optional<store::GenerationStats> plain = run.send(QStringLiteral("Hello!"));
    QVERIFY(plain);
    QCOMPARE(last_request(requests).system_prompt, app.settings().engine.system_prompt);
    // The chat's system prompt made its prompt longer than the same message's
    // without it.
    QVERIFY2(
        stats->prompt_tokens > plain->prompt_tokens,
        qPrintable(QStringLiteral("%1 vs %2").arg(stats->prompt_tokens).arg(plain->prompt_tokens)));
    QVERIFY(app.store().chat_settings(*app.chats().currentChat())->is_empty());
  }

  void chatsWithOtherPromptFormatsGenerateTogether() {
    // Random weights rarely end a reply early, so both run for a while.
    AppRun run(random_model(), 200);
    run.start();
    QVERIFY(run.waitForModel());
    gui::QuireApplication& app = *run.app;
    gui::ChatController& chats = app.chats();
    QSignalSpy finished(&chats, &gui::ChatController::replyFinished);

    const store::ChatId chatml = *app.store().create_chat(QStringLiteral("ChatML"));
    store::ChatSettings own_format;
    own_format.prompt_format = QStringLiteral("chatml");
    QVERIFY(app.store().set_chat_settings(chatml, own_format));
    emit app.window().chatList()->chatSelected(store::raw(chatml));
    run.type(QStringLiteral("First chat"));
    app.window().chatList()->newChatAction()->trigger();
    run.type(QStringLiteral("Second chat"));
    const store::ChatId plain = *chats.currentChat();
    QCOMPARE(chats.runningReplies(), 2);
    QTRY_COMPARE_WITH_TIMEOUT(finished.size(), 2, 120'000);

    // Each reply was rendered in its chat's format and keeps its token ids,
    // so the next turn of either chat continues from the cache.
    for (const store::ChatId chat : {chatml, plain}) {
      const store::Message reply = app.store().current_path(chat).constLast();
      QCOMPARE(reply.role, store::Role::Assistant);
      QVERIFY2(!reply.tokens.empty(), qPrintable(app.store().chat(chat)->title));
    }
    const QString chatml_key =
        app.store().chat(chatml)->model.settings.value(QLatin1String("render_key")).toString();
    const QString plain_key =
        app.store().chat(plain)->model.settings.value(QLatin1String("render_key")).toString();
    QVERIFY2(chatml_key.section(u'|', -2, -2) != plain_key.section(u'|', -2, -2),
             qPrintable(chatml_key + QStringLiteral(" vs ") + plain_key));
  }

  // The wheel rolled over a field on the way down the dialog must not change
  // it (and so the saved settings); a field the user clicked into takes it.
  void theWheelChangesOnlyTheFieldWithFocus() {
    AppRun run(demo_model(), kGlobalMaxNewTokens);
    run.start();
    QVERIFY(run.waitForModel());
    gui::QuireApplication& app = *run.app;
    QVERIFY(run.send(QStringLiteral("Hello!")));
    const store::ChatId chat = *app.chats().currentChat();
    QVERIFY(app.store().set_chat_settings(chat, pirate_settings()));
    app.window().show();

    QDialog* dialog = open_dialog(app);
    QVERIFY(dialog);
    dialog->activateWindow();
    QVERIFY(QTest::qWaitForWindowActive(dialog));
    ui::ChatSettingsPanel* panel = app.chatSettings().panel();
    auto* temperature = panel->findChild<QDoubleSpinBox*>(QStringLiteral("chatTemperature"));
    auto* longest = panel->findChild<QSpinBox*>(QStringLiteral("chatMaxNewTokens"));
    QVERIFY(temperature && longest);
    QCOMPARE(temperature->value(), 0.0);
    QCOMPARE(longest->value(), kChatMaxNewTokens);

    auto* elsewhere = panel->findChild<QPushButton*>(QStringLiteral("resetChatSettings"));
    elsewhere->setFocus(Qt::OtherFocusReason);
    QVERIFY(elsewhere->hasFocus());
    roll_wheel_up(temperature, 3);
    roll_wheel_up(longest, 3);
    QCOMPARE(temperature->value(), 0.0);
    QCOMPARE(longest->value(), kChatMaxNewTokens);
    // Rolling over a field does not give it focus either.
    QVERIFY(elsewhere->hasFocus());
    save(dialog);
    QCOMPARE(app.store().chat_settings(chat)->temperature, std::optional<double>(0.0));
    QCOMPARE(app.store().chat_settings(chat)->max_new_tokens,
             std::optional<int>(kChatMaxNewTokens));

    // Clicked into, the field takes the wheel, and the change is saved.
    dialog = open_dialog(app);
    QVERIFY(dialog);
    dialog->activateWindow();
    QVERIFY(QTest::qWaitForWindowActive(dialog));
    longest->setFocus(Qt::MouseFocusReason);
    QVERIFY(longest->hasFocus());
    roll_wheel_up(longest, 2);
    QCOMPARE(longest->value(), kChatMaxNewTokens + 2 * longest->singleStep());
    save(dialog);
    QCOMPARE(app.store().chat_settings(chat)->max_new_tokens,
             std::optional<int>(kChatMaxNewTokens + 2 * longest->singleStep()));
    QCOMPARE(app.store().chat_settings(chat)->temperature, std::optional<double>(0.0));
  }

  void resetToDefaultsFollowsTheGlobalSettingsAgain() {
    AppRun run(demo_model(), kGlobalMaxNewTokens);
    run.start();
    QVERIFY(run.waitForModel());
    gui::QuireApplication& app = *run.app;
    QVERIFY(run.send(QStringLiteral("Hello!")));
    const store::ChatId chat = *app.chats().currentChat();
    QVERIFY(app.store().set_chat_settings(chat, pirate_settings()));

    QDialog* dialog = open_dialog(app);
    QVERIFY(dialog);
    QTest::mouseClick(
        app.chatSettings().panel()->findChild<QPushButton*>(QStringLiteral("resetChatSettings")),
        Qt::LeftButton);
    save(dialog);
    QVERIFY(app.store().chat_settings(chat)->is_empty());

    QSignalSpy requests(&app.engine(), &gui::EngineHost::replyRequested);
    QVERIFY(run.send(QStringLiteral("Again.")));
    QCOMPARE(last_request(requests).max_new_tokens, kGlobalMaxNewTokens);
    QCOMPARE(last_request(requests).sampling.temperature,
             app.settings().engine.sampling.temperature);
  }
};

QUIRE_TEST(ChatSettingsTest)
#include "test_chat_settings.moc"
