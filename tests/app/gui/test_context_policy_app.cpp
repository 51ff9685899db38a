// A chat whose context policy is truncate-middle, in the window: the demo
// model reads 256 positions, so a few turns fill it. The first turn stays,
// the reply's note says what went and what was read again, the chat marks
// where the model's context resumes, and the footer's gauge forecasts the
// next drop in the words of the chat's turn numbers.

#include <QLabel>
#include <QRegularExpression>
#include <QSignalSpy>
#include <QTest>

#include "app_test_support.h"
#include "chat_controller.h"
#include "engine_host.h"
#include "main_window.h"
#include "quire/ui/chat_view.h"
#include "quire/ui/input_box.h"
#include "quire/ui/status_line.h"
#include "test_main.h"

using namespace quire;
using namespace quire::test;

namespace {

std::optional<gui::ReplyOutcome> ask(AppRun& run, const QString& text) {
  QSignalSpy finished(&run.app->engine(), &gui::EngineHost::replyFinished);
  run.app->window().input()->setText(text);
  run.app->window().input()->send();
  if (finished.isEmpty() && !finished.wait(120'000)) return std::nullopt;
  return finished.first().first().value<gui::ReplyOutcome>();
}

QString question(int turn) {
  return QStringLiteral("Tell me something about the number %1, please, in a few words.").arg(turn);
}

// The ids of the messages whose context divider is on show.
QList<qint64> dividedMessages(gui::MainWindow& window) {
  QList<qint64> ids;
  for (QWidget* message : window.chatView()->findChildren<QWidget*>(QStringLiteral("message"))) {
    auto* divider = message->findChild<QWidget*>(QStringLiteral("contextDivider"));
    if (divider && divider->isVisibleTo(message))
      ids.append(message->property("messageId").toLongLong());
  }
  return ids;
}

}  // namespace

class ContextPolicyAppTest : public QObject {
  Q_OBJECT

 private slots:
  void truncateMiddleKeepsTheFirstTurnAndShowsWhatWent() {
    AppRun run(demo_model());
    run.start();
    QVERIFY(run.waitForModel());
    run.app->show();
    gui::MainWindow& window = run.app->window();

    std::optional<gui::ReplyOutcome> outcome = ask(run, question(0));
    QVERIFY(outcome);
    const store::ChatId chat = *run.app->chats().currentChat();
    store::ChatSettings settings;
    settings.context_overflow = QStringLiteral("truncate_middle");
    QVERIFY(run.app->store().set_chat_settings(chat, settings));

    for (int turn = 1; turn < 14 && outcome->trimmed_turns == 0; ++turn) {
      outcome = ask(run, question(turn));
      QVERIFY(outcome);
      QVERIFY2(outcome->error.isEmpty(), qPrintable(outcome->error));
    }
    QVERIFY(outcome->trimmed_turns > 0);
    QCOMPARE(outcome->context_overflow, QStringLiteral("truncate_middle"));
    QCOMPARE(outcome->trimmed_first_turn, 1);
    QVERIFY(outcome->recomputed_tokens > 0);

    const QString note = window.chatView()->message(outcome->reply_id)->notice;
    const QString went =
        outcome->trimmed_turns == 1
            ? QStringLiteral("1 turn after the first of this chat no longer fits the context")
            : QStringLiteral("%1 turns after the first of this chat no longer fit the context")
                  .arg(outcome->trimmed_turns);
    QVERIFY2(note.startsWith(went), qPrintable(note));
    QVERIFY2(note.endsWith(QStringLiteral("%1 tokens of the prompt were read again.")
                               .arg(outcome->recomputed_tokens)),
             qPrintable(note));

    // The first question is still what the model reads first; the divider
    // stands on the first message after the dropped turns, and only there.
    QList<qint64> users;
    for (const store::Message& message : run.app->store().current_path(chat)) {
      if (message.role == store::Role::User) users.append(store::raw(message.id));
    }
    const qint64 resumes = outcome->context_turns.resumes_at;
    QCOMPARE(dividedMessages(window), QList<qint64>{resumes});
    QCOMPARE(outcome->context_turns.user_message_ids.first(), users.first());
    QCOMPARE(users.indexOf(resumes), 1 + outcome->trimmed_turns);

    // As the chat grows again, the gauge names the turns the next message
    // would drop: never the first one, which truncate-middle keeps.
    QString forecast;
    for (int turn = 20; turn < 34 && forecast.isEmpty(); ++turn) {
      outcome = ask(run, question(turn));
      QVERIFY(outcome);
      forecast = window.statusLine()->contextDrop().description;
    }
    static const QRegularExpression drops(QStringLiteral(
        "^Sending now drops turns? (\\d+)(\u2013\\d+)? \\(([\\d,]+) tokens\\); the model then "
        "reads ([\\d,]+) tokens again\\.$"));
    const QRegularExpressionMatch match = drops.match(forecast);
    QVERIFY2(match.hasMatch(), qPrintable(forecast));
    QVERIFY(match.captured(1).toInt() > 1);
    auto* gauge = window.statusLine()->findChild<QWidget*>(QStringLiteral("contextGauge"));
    QVERIFY(gauge->toolTip().endsWith(forecast));

    // Under stop, the same chat would not be sent: the gauge says so.
    settings.context_overflow = QStringLiteral("stop");
    QVERIFY(run.app->store().set_chat_settings(chat, settings));
    QVERIFY2(window.statusLine()->contextDrop().description.startsWith(
                 QStringLiteral("Sending now stops: the chat is ")),
             qPrintable(window.statusLine()->contextDrop().description));
  }
};

QUIRE_TEST(ContextPolicyAppTest)
#include "test_context_policy_app.moc"
