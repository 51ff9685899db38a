// Several chats generating at once share the engine's batches; switching
// chats never stops or mixes their replies.

#include <QSignalSpy>
#include <QStatusBar>
#include <QTest>

#include "app_test_support.h"
#include "chat_controller.h"
#include "engine_host.h"
#include "main_window.h"
#include "quire/ui/chat_view.h"
#include "quire/ui/input_box.h"
#include "test_main.h"

using namespace quire;
using namespace quire::test;

class RepliesAtOnceTest : public QObject {
  Q_OBJECT

 private slots:
  void twoChatsGenerateTogether() {
    AppRun run(random_model(), 200);
    run.start();
    QVERIFY(run.waitForModel());
    gui::ChatController& chats = run.app->chats();
    QSignalSpy finished(&chats, &gui::ChatController::replyFinished);
    QSignalSpy deltas(&run.app->engine(), &gui::EngineHost::replyText);

    run.type(QStringLiteral("First chat"));
    const store::ChatId first = *chats.currentChat();
    chats.openChat(std::nullopt);  // what "New chat" does
    QVERIFY(!run.app->window().input()->isGenerating());
    run.type(QStringLiteral("Second chat"));
    const store::ChatId second = *chats.currentChat();
    QVERIFY(first != second);
    QCOMPARE(chats.runningReplies(), 2);
    QVERIFY(chats.isGenerating(first));
    QVERIFY(run.app->window().input()->isGenerating());

    QTRY_COMPARE_WITH_TIMEOUT(finished.size(), 2, 120'000);
    QCOMPARE(chats.runningReplies(), 0);
    QCOMPARE(run.app->chatList().rowCount(), 2);

    // Each chat holds its own reply, whole, and the view of the chat on
    // show got only that chat's text.
    QString text_of_first;
    QString text_of_second;
    const qint64 first_reply = store::raw(run.app->store().messages(first).last().id);
    const qint64 second_reply = store::raw(run.app->store().messages(second).last().id);
    for (const QList<QVariant>& delta : deltas) {
      if (delta.at(0).toLongLong() == first_reply) text_of_first += delta.at(1).toString();
      if (delta.at(0).toLongLong() == second_reply) text_of_second += delta.at(1).toString();
    }
    QCOMPARE(run.app->store().messages(first).last().text, text_of_first);
    QCOMPARE(run.app->store().messages(second).last().text, text_of_second);
    QVERIFY(!text_of_first.isEmpty());
    QCOMPARE(run.app->window().chatView()->messageCount(), 2);
    QCOMPARE(run.app->window().chatView()->message(second_reply)->text, text_of_second);

    // Opening the first chat shows its reply as stored.
    chats.openChat(first);
    QCOMPARE(run.app->window().chatView()->message(first_reply)->text, text_of_first);
  }

  void aReplyThatDoesNotFitSaysSoAndKeepsTheQuestion() {
    AppRun run(demo_model());
    run.start();
    QVERIFY(run.waitForModel());
    // The demo model holds 256 positions; this message alone takes more.
    QString long_message;
    for (int i = 0; i < 200; ++i)
      long_message += QStringLiteral("word%1 ").arg(i);
    const std::optional<store::GenerationStats> stats = run.send(long_message);
    QVERIFY(stats);
    QCOMPARE(stats->stop_reason, QStringLiteral("error"));
    const store::ChatId chat = *run.app->chats().currentChat();
    const QList<store::Message> messages = run.app->store().messages(chat);
    QCOMPARE(messages.size(), 1);  // the question stays, the empty reply does not
    QCOMPARE(messages[0].text, long_message.trimmed());
    // The failed reply is on show with the reason (its id follows the question's).
    QCOMPARE(run.app->window().chatView()->messageCount(), 2);
    const auto failed = run.app->window().chatView()->message(store::raw(messages[0].id) + 1);
    QVERIFY(failed);
    const bool error_shown = failed->error.contains(QStringLiteral("does not fit"));
    QVERIFY2(error_shown, qPrintable(failed->error));
    QVERIFY(error_shown);

    // The chat goes on: a short message gets its reply.
    const std::optional<store::GenerationStats> next = run.send(QStringLiteral("Hello!"));
    QVERIFY(next);
    QVERIFY(next->stop_reason != QStringLiteral("error"));
    QCOMPARE(run.app->store().messages(chat).size(), 3);
  }

  // Device memory that runs short in two steps of a reply (injected through
  // QUIRE_FAULT_OP): the window stays, the reply is the one it is without the
  // shortage, and the status bar says what happened once.
  void aReplyGoesOnWhenMemoryRunsShort() {
    const auto reply = [](bool short_of_memory, QStringList& shown) {
      if (short_of_memory) qputenv("QUIRE_FAULT_OP", "linear:12,linear:40");
      AppRun run(random_model(), 30);
      run.start();
      const bool loaded = run.waitForModel();
      qunsetenv("QUIRE_FAULT_OP");  // the backend is made
      if (!loaded) return QString();
      QStatusBar* bar = run.app->window().statusBar();
      QObject::connect(bar, &QStatusBar::messageChanged, bar, [&shown](const QString& message) {
        if (message.startsWith(QStringLiteral("Memory ran short"))) shown << message;
      });
      const std::optional<store::GenerationStats> stats = run.send(QStringLiteral("Hello"));
      if (!stats || stats->stop_reason != QStringLiteral("max_tokens")) {
        qWarning() << "the reply ended" << (stats ? stats->stop_reason : QStringLiteral("late"));
        return QString();
      }
      // The model still serves: nothing was unloaded or reset.
      if (!run.app->engine().model()) {
        qWarning() << "the model is gone";
        return QString();
      }
      const store::ChatId chat = *run.app->chats().currentChat();
      return run.app->store().messages(chat).last().text;
    };
    QStringList none, shown;
    const QString expected = reply(false, none);
    QVERIFY(!expected.isEmpty());
    QVERIFY(none.isEmpty());
    QCOMPARE(reply(true, shown), expected);
    QCOMPARE(shown.size(), 1);
    QVERIFY2(shown.front().contains(QStringLiteral("replies continue")), qPrintable(shown.front()));
  }
};

QUIRE_TEST(RepliesAtOnceTest)
#include "test_replies_at_once.moc"
