// One chat through the whole program: typed, streamed, stored, reused from
// the cache, found again after a restart, stopped with Escape.

#include <QAction>
#include <QApplication>
#include <QDialog>
#include <QDockWidget>
#include <QPlainTextEdit>
#include <QSignalSpy>
#include <QTest>

#include "app_test_support.h"
#include "chat_controller.h"
#include "engine_host.h"
#include "main_window.h"
#include "quire/ui/chat_list_widget.h"
#include "quire/ui/chat_view.h"
#include "quire/ui/input_box.h"
#include "quire/ui/memory_panel.h"
#include "quire/ui/status_line.h"
#include "test_main.h"

using namespace quire;
using namespace quire::test;

class ConversationFlowTest : public QObject {
  Q_OBJECT

 private slots:
  void aReplyStreamsIsStoredAndTheNextTurnComesFromTheCache() {
    AppRun run(demo_model());
    run.start();
    QVERIFY(run.waitForModel());
    gui::MainWindow& window = run.app->window();
    QVERIFY(!window.isShowingWelcome());
    QCOMPARE(window.statusLine()->contextMaximum(), 0);

    QSignalSpy deltas(&run.app->engine(), &gui::EngineHost::replyText);
    const std::optional<store::GenerationStats> first = run.send(QStringLiteral("Hello!"));
    QVERIFY(first);
    QCOMPARE(first->cached_tokens, 0);
    QVERIFY(first->prompt_tokens > 0);
    QCOMPARE(first->computed_tokens, first->prompt_tokens);
    QVERIFY(first->generated_tokens > 0);

    // The reply arrived in pieces, and the pieces are the reply.
    QVERIFY(deltas.size() >= 2);
    QString streamed;
    for (const QList<QVariant>& delta : deltas)
      streamed += delta.at(1).toString();
    const std::optional<store::ChatId> chat = run.app->chats().currentChat();
    QVERIFY(chat);
    QList<store::Message> messages = run.app->store().messages(*chat);
    QCOMPARE(messages.size(), 2);
    QCOMPARE(messages[0].text, QStringLiteral("Hello!"));
    QCOMPARE(messages[1].role, store::Role::Assistant);
    QCOMPARE(messages[1].text, streamed);
    QCOMPARE(messages[1].stats->generated_tokens, first->generated_tokens);
    QCOMPARE(window.chatView()->message(store::raw(messages[1].id))->text, streamed);
    QVERIFY(!window.chatView()->message(store::raw(messages[1].id))->streaming);
    // Both messages keep the ids they were rendered to.
    QVERIFY(!messages[0].tokens.empty());
    QVERIFY(!messages[1].tokens.empty());
    QCOMPARE(run.app->store().chat(*chat)->title, QStringLiteral("Hello!"));

    // The status line tells how it went and how full the context is.
    const qint64 used_after_first = window.statusLine()->contextUsed();
    // The conversation holds both messages as stored (and the format's preamble).
    QVERIFY(used_after_first >=
            static_cast<qint64>(messages[0].tokens.size() + messages[1].tokens.size()));
    QVERIFY(used_after_first >= first->prompt_tokens + first->generated_tokens);
    QCOMPARE(window.statusLine()->contextMaximum(), 256);  // the demo model's positions

    // The second turn computes only what is new: everything of the first
    // turn is found in the cache except the reply's closing marker, which was
    // sampled but never run through the model (ChatML: "<|im_end|>" and the
    // line break after it).
    constexpr int kClosingTokens = 2;
    const std::optional<store::GenerationStats> second =
        run.send(QStringLiteral("Tell me a fortune."));
    QVERIFY(second);
    QVERIFY2(second->cached_tokens >= used_after_first - kClosingTokens,
             qPrintable(QStringLiteral("%1 cached of %2 earlier tokens")
                            .arg(second->cached_tokens)
                            .arg(used_after_first)));
    QCOMPARE(second->computed_tokens, second->prompt_tokens - second->cached_tokens);
    QVERIFY(second->computed_tokens <= second->prompt_tokens - used_after_first + kClosingTokens);

    // The memory panel follows: pages are cached now, weights are on a device.
    QTRY_VERIFY(!window.memoryPanel()->snapshot().isEmpty());
    QTRY_VERIFY(window.memoryPanel()->snapshot().cache.cached_pages +
                    window.memoryPanel()->snapshot().cache.shared_pages >
                0);
    QVERIFY(window.memoryPanel()->snapshot().devices.value(0).weights > 0);
    QTRY_VERIFY(window.memoryPanel()->snapshot().cache.reused_tokens >= second->cached_tokens);

    // A restart finds the chat, opens it again and continues it.
    run.restart();
    QVERIFY(run.app->chats().currentChat() == chat);
    QCOMPARE(run.app->chatList().rowCount(), 1);
    QCOMPARE(run.app->window().chatView()->messageCount(), 4);
    QVERIFY(run.waitForModel());
    const std::optional<store::GenerationStats> third = run.send(QStringLiteral("Who are you?"));
    QVERIFY(third);
    // A fresh engine's cache holds only what its disk tier gave back (whole
    // pages; this short chat fills none); the stored ids are the prompt.
    QCOMPARE(third->cached_tokens, third->disk_tokens);
    messages = run.app->store().messages(*chat);
    QCOMPARE(messages.size(), 6);
    std::size_t earlier = 0;
    for (int i = 0; i < 5; ++i)
      earlier += messages[i].tokens.size();
    QVERIFY(static_cast<std::size_t>(third->prompt_tokens) >= earlier);
    const std::optional<store::GenerationStats> fourth = run.send(QStringLiteral("Define garden."));
    QVERIFY(fourth);
    QVERIFY(fourth->cached_tokens >=
            third->prompt_tokens + third->generated_tokens - kClosingTokens);
  }

  void escapeStopsTheReplyAndKeepsWhatCame() {
    AppRun run(random_model(), 1500);
    run.start();
    QVERIFY(run.waitForModel());
    QSignalSpy finished(&run.app->chats(), &gui::ChatController::replyFinished);
    QSignalSpy deltas(&run.app->engine(), &gui::EngineHost::replyText);
    run.type(QStringLiteral("Go on and on."));
    QVERIFY(run.app->window().input()->isGenerating());
    QTRY_VERIFY_WITH_TIMEOUT(deltas.size() >= 3, 60'000);
    auto* editor =
        run.app->window().input()->findChild<QPlainTextEdit*>(QStringLiteral("messageInput"));
    QTest::keyClick(editor, Qt::Key_Escape);
    QVERIFY(finished.wait(60'000));
    const auto stats = finished.first().at(1).value<store::GenerationStats>();
    QCOMPARE(stats.stop_reason, QStringLiteral("cancelled"));
    QVERIFY(stats.generated_tokens < 1500);
    QVERIFY(!run.app->window().input()->isGenerating());
    const store::ChatId chat = *run.app->chats().currentChat();
    const QList<store::Message> messages = run.app->store().messages(chat);
    QCOMPARE(messages.size(), 2);
    QCOMPARE(messages[1].stats->stop_reason, QStringLiteral("cancelled"));
    QString streamed;
    for (const QList<QVariant>& delta : deltas)
      streamed += delta.at(1).toString();
    QCOMPARE(messages[1].text, streamed);
  }

  // The hint says "Esc stops a reply": it does wherever focus is in the
  // window, not only in the message box, and a dialog keeps its own Esc.
  void escapeStopsTheReplyWithFocusOutsideTheMessageBox() {
    AppRun run(random_model(), 1500);
    run.start();
    QVERIFY(run.waitForModel());
    gui::MainWindow& window = run.app->window();
    window.show();
    window.activateWindow();
    QVERIFY(QTest::qWaitForWindowActive(&window));
    QAction* stop = window.input()->stopAction();
    QVERIFY(!stop->isEnabled());

    // Nothing runs: Esc in the chat list does nothing, and sends no stop.
    QSignalSpy stopsAsked(window.input(), &ui::InputBox::stopRequested);
    window.chatList()->setFocus();
    QTest::keyClick(QApplication::focusWidget(), Qt::Key_Escape);
    QCOMPARE(stopsAsked.size(), 0);

    const auto stopWithFocusOn = [&](QWidget* target) {
      QSignalSpy finished(&run.app->chats(), &gui::ChatController::replyFinished);
      QSignalSpy deltas(&run.app->engine(), &gui::EngineHost::replyText);
      run.type(QStringLiteral("Go on and on."));
      QVERIFY(window.input()->isGenerating());
      QVERIFY(stop->isEnabled());
      QTRY_VERIFY_WITH_TIMEOUT(deltas.size() >= 3, 60'000);
      target->setFocus(Qt::OtherFocusReason);
      QVERIFY(QApplication::focusWidget() != nullptr);
      QVERIFY(!window.input()->isAncestorOf(QApplication::focusWidget()));
      QTest::keyClick(QApplication::focusWidget(), Qt::Key_Escape);
      QVERIFY(finished.wait(60'000));
      const auto stats = finished.first().at(1).value<store::GenerationStats>();
      QCOMPARE(stats.stop_reason, QStringLiteral("cancelled"));
      QVERIFY(stats.generated_tokens < 1500);
      QVERIFY(!window.input()->isGenerating());
      QVERIFY(!stop->isEnabled());
    };
    stopWithFocusOn(window.chatList());
    if (QTest::currentTestFailed()) return;
    window.memoryDock()->show();
    auto* panel = window.memoryPanel();
    panel->setFocusPolicy(Qt::StrongFocus);
    stopWithFocusOn(panel);
    if (QTest::currentTestFailed()) return;
    QCOMPARE(stopsAsked.size(), 2);

    // A dialog over the window keeps its Esc: it closes, and no stop is asked.
    QSignalSpy finished(&run.app->chats(), &gui::ChatController::replyFinished);
    run.type(QStringLiteral("Go on and on."));
    QVERIFY(window.input()->isGenerating());
    auto* chatSettings = window.findChild<QDialog*>(QStringLiteral("chatSettingsDialog"));
    QVERIFY(chatSettings);
    chatSettings->show();
    chatSettings->activateWindow();
    QVERIFY(QTest::qWaitForWindowActive(chatSettings));
    QTest::keyClick(chatSettings, Qt::Key_Escape);
    QTRY_VERIFY(!chatSettings->isVisible());
    QCOMPARE(stopsAsked.size(), 2);
    QVERIFY(window.input()->isGenerating());
    stop->trigger();
    QVERIFY(finished.wait(60'000));
  }

  void shiftEnterStartsANewLineInsteadOfSending() {
    AppRun run{QString()};
    run.start();
    auto* editor =
        run.app->window().input()->findChild<QPlainTextEdit*>(QStringLiteral("messageInput"));
    editor->setFocus();
    QTest::keyClicks(editor, QStringLiteral("one"));
    QTest::keyClick(editor, Qt::Key_Return, Qt::ShiftModifier);
    QTest::keyClicks(editor, QStringLiteral("two"));
    QCOMPARE(editor->toPlainText(), QStringLiteral("one\ntwo"));
    QCOMPARE(run.app->chatList().rowCount(), 0);
  }

  void regenerateShowsANewReplyAndKeepsTheOldOne() {
    AppRun run(demo_model());
    run.start();
    QVERIFY(run.waitForModel());
    QVERIFY(run.send(QStringLiteral("Hello!")));
    const store::ChatId chat = *run.app->chats().currentChat();
    const store::MessageId old_reply = run.app->store().messages(chat).last().id;
    QSignalSpy finished(&run.app->chats(), &gui::ChatController::replyFinished);
    run.app->chats().regenerate(store::raw(old_reply));
    QVERIFY(finished.wait(60'000));
    const QList<store::Message> messages = run.app->store().messages(chat);
    QCOMPARE(messages.size(), 2);
    QVERIFY(messages[1].id != old_reply);
    QVERIFY(!messages[1].text.isEmpty());
    QCOMPARE(run.app->store().siblings(messages[1].id)->ids,
             (QList<store::MessageId>{old_reply, messages[1].id}));
    QCOMPARE(run.app->window().chatView()->messageCount(), 2);
    // The prompt is the same as before: it all came from the cache.
    const auto stats = finished.first().at(1).value<store::GenerationStats>();
    QVERIFY(stats.cached_tokens >= stats.prompt_tokens - 1);
  }

  void editAndResendShowsTheNewTurnAndKeepsTheOldOnes() {
    AppRun run(demo_model());
    run.start();
    QVERIFY(run.waitForModel());
    QVERIFY(run.send(QStringLiteral("Hello!")));
    QVERIFY(run.send(QStringLiteral("Tell me a fortune.")));
    const store::ChatId chat = *run.app->chats().currentChat();
    const store::MessageId first = run.app->store().messages(chat).first().id;
    QSignalSpy finished(&run.app->chats(), &gui::ChatController::replyFinished);
    run.app->chats().editAndResend(store::raw(first), QStringLiteral("Who are you?"));
    QVERIFY(finished.wait(60'000));
    const QList<store::Message> messages = run.app->store().messages(chat);
    QCOMPARE(messages.size(), 2);
    QCOMPARE(messages[0].text, QStringLiteral("Who are you?"));
    QCOMPARE(run.app->window().chatView()->messageCount(), 2);
    // The first version of the chat is still there, all four messages of it.
    QCOMPARE(run.app->store().message_tree(chat).size(), 6);
  }
};

QUIRE_TEST(ConversationFlowTest)
#include "test_conversation_flow.moc"
