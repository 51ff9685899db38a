// What the window says and offers when a conversation meets the end of its
// context: the demo model knows 256 positions, far fewer than its cache holds.

#include <QLabel>
#include <QLocale>
#include <QRegularExpression>
#include <QSignalSpy>
#include <QTest>
#include <QTextEdit>
#include <QToolButton>

#include "app_test_support.h"
#include "chat_controller.h"
#include "engine_host.h"
#include "main_window.h"
#include "quire/app/app_settings.h"
#include "quire/ui/chat_view.h"
#include "quire/ui/input_box.h"
#include "test_main.h"

using namespace quire;
using namespace quire::test;

namespace {

// The widget of message `id` in the conversation.
QWidget* messageWidget(gui::MainWindow& window, qint64 id) {
  for (QWidget* widget : window.chatView()->findChildren<QWidget*>(QStringLiteral("message"))) {
    if (widget->property("messageId").toLongLong() == id) return widget;
  }
  return nullptr;
}

template <typename T>
T* shownChild(QWidget* parent, const QString& name) {
  for (T* child : parent->findChildren<T*>(name)) {
    if (child->isVisibleTo(parent)) return child;
  }
  return nullptr;
}

QString words(int count) {
  QStringList list;
  for (int i = 0; i < count; ++i)
    list << QStringLiteral("word");
  return list.join(u' ');
}

// Sends `text` as pasted (typing 20,000 words key by key would take minutes)
// and waits for the reply's outcome.
std::optional<gui::ReplyOutcome> paste(AppRun& run, const QString& text) {
  QSignalSpy finished(&run.app->engine(), &gui::EngineHost::replyFinished);
  run.app->window().input()->setText(text);
  run.app->window().input()->send();
  if (finished.isEmpty() && !finished.wait(120'000)) return std::nullopt;
  return finished.first().first().value<gui::ReplyOutcome>();
}

}  // namespace

class ContextLimitsTest : public QObject {
  Q_OBJECT

 private slots:
  void aMessageLongerThanTheModelCanReadIsRefusedPlainly() {
    AppRun run(demo_model());
    run.start();
    QVERIFY(run.waitForModel());
    run.app->show();
    gui::MainWindow& window = run.app->window();
    const QString message = words(20'000);
    const std::optional<gui::ReplyOutcome> outcome = paste(run, message);
    QVERIFY(outcome);

    // The model's own limit is the cap: a longer context setting cannot help.
    const QString error = window.chatView()->message(outcome->reply_id)->error;
    QVERIFY2(error.contains(QStringLiteral(" are kept for the reply: more than the model's 256 "
                                           "tokens (the most it reads at once)")),
             qPrintable(error));
    QVERIFY2(!error.contains(QStringLiteral("longer context")), qPrintable(error));
    QVERIFY2(error.endsWith(QStringLiteral("Shorten the message.")), qPrintable(error));

    // Regenerating would fail the same way: it is not offered.
    QWidget* reply = messageWidget(window, outcome->reply_id);
    QVERIFY(reply);
    QCOMPARE(shownChild<QToolButton>(reply, QStringLiteral("regenerateButton")), nullptr);

    // The message stays, folded to its beginning, whole on request.
    const store::ChatId chat = *run.app->chats().currentChat();
    const store::Message stored = run.app->store().messages(chat).first();
    QCOMPARE(stored.text, message);
    QWidget* asked = messageWidget(window, store::raw(stored.id));
    QVERIFY(asked);
    auto* text = shownChild<QTextEdit>(asked, QStringLiteral("messageText"));
    QVERIFY(text);
    QVERIFY(text->toPlainText().size() < 3000);
    auto* show_all = shownChild<QToolButton>(asked, QStringLiteral("showAllButton"));
    QVERIFY(show_all);
    QCOMPARE(show_all->text(), QStringLiteral("Show all"));
    show_all->click();
    QCOMPARE(text->toPlainText(), message);
    QCOMPARE(show_all->text(), QStringLiteral("Show less"));
    show_all->click();
    QVERIFY(text->toPlainText().size() < 3000);
  }

  void aContextSettingThatCapsTheChatIsNamed() {
    AppRun run(demo_model());
    run.start();
    QVERIFY(run.waitForModel());
    ui::EngineSettings settings = run.app->settings().engine;
    settings.max_context = 128;
    run.app->chats().setEngineSettings(settings);
    const std::optional<gui::ReplyOutcome> outcome = paste(run, words(200));
    QVERIFY(outcome);
    const QString error = run.app->window().chatView()->message(outcome->reply_id)->error;
    QVERIFY2(error.contains(QStringLiteral("the context of 128 tokens set in Settings")),
             qPrintable(error));
    QVERIFY2(error.endsWith(QStringLiteral("Shorten the message, or allow a longer context in "
                                           "Settings (this model reads up to 256 tokens), then "
                                           "Retry.")),
             qPrintable(error));
  }

  // A longer context setting cannot help a message longer than the model
  // reads: the advice does not offer it.
  void aLongerContextIsNotOfferedWhenTheMessageWouldStillNotFit() {
    AppRun run(demo_model());
    run.start();
    QVERIFY(run.waitForModel());
    ui::EngineSettings settings = run.app->settings().engine;
    settings.max_context = 128;
    run.app->chats().setEngineSettings(settings);
    const std::optional<gui::ReplyOutcome> outcome = paste(run, words(400));
    QVERIFY(outcome);
    const QString error = run.app->window().chatView()->message(outcome->reply_id)->error;
    QVERIFY2(error.contains(QStringLiteral("the context of 128 tokens set in Settings.")),
             qPrintable(error));
    QVERIFY2(error.endsWith(QStringLiteral(" It is also more than the 256 tokens this model reads "
                                           "at once: shorten the message.")),
             qPrintable(error));
    QVERIFY2(!error.contains(QStringLiteral("longer context")), qPrintable(error));
  }

  // The cache, smaller than the message, is what a longer context would
  // still meet: the advice names it and the size the message needs.
  void aCacheSmallerThanTheMessageIsNamedWithTheSizeNeeded() {
    AppRun run(random_model());
    {
      app::AppSettings stored(run.data.filePath(QStringLiteral("quire.conf")));
      stored.load();
      stored.engine.cache_tokens = 512;
      stored.engine.max_context = 256;
      stored.save();
    }
    run.restart();
    run.start();
    QVERIFY(run.waitForModel());
    const std::optional<gui::ReplyOutcome> outcome = paste(run, words(700));
    QVERIFY(outcome);
    const QString error = run.app->window().chatView()->message(outcome->reply_id)->error;
    const QRegularExpression advice(QStringLiteral(
        "the context of 256 tokens set in Settings\\. The cache holds 512 tokens: shorten the "
        "message, or give the cache and the context at least ([0-9,]+) tokens in Settings, then "
        "Retry\\.$"));
    const QRegularExpressionMatch match = advice.match(error);
    QVERIFY2(match.hasMatch(), qPrintable(error));
    QVERIFY2(QLocale().toInt(match.captured(1)) > 700, qPrintable(error));
    QVERIFY2(!error.contains(QStringLiteral("longer context")), qPrintable(error));
  }

  // Retry asks again for a reply that did not fit, once the settings allow it.
  void retryAsksAgainWithTheSettingsChanged() {
    AppRun run(demo_model());
    run.start();
    QVERIFY(run.waitForModel());
    run.app->show();
    gui::MainWindow& window = run.app->window();
    ui::EngineSettings settings = run.app->settings().engine;
    settings.max_context = 128;
    run.app->chats().setEngineSettings(settings);
    const QString message = words(110);
    const std::optional<gui::ReplyOutcome> failed = paste(run, message);
    QVERIFY(failed);
    QVERIFY(!failed->error.isEmpty());
    QWidget* reply = messageWidget(window, failed->reply_id);
    QVERIFY(reply);
    QCOMPARE(shownChild<QToolButton>(reply, QStringLiteral("regenerateButton")), nullptr);
    auto* retry = shownChild<QToolButton>(reply, QStringLiteral("retryButton"));
    QVERIFY(retry);

    settings.max_context = 0;  // the model's own 256
    run.app->chats().setEngineSettings(settings);
    QSignalSpy finished(&run.app->engine(), &gui::EngineHost::replyFinished);
    retry->click();
    QVERIFY(finished.wait(120'000));
    const auto outcome = finished.first().first().value<gui::ReplyOutcome>();
    QVERIFY2(outcome.error.isEmpty(), qPrintable(outcome.error));
    const store::ChatId chat = *run.app->chats().currentChat();
    const QList<store::Message> path = run.app->store().current_path(chat);
    QCOMPARE(path.size(), 2);
    QCOMPARE(path[0].text, message);
    QCOMPARE(store::raw(path[1].id), outcome.reply_id);
    QCOMPARE(path[1].role, store::Role::Assistant);
    QCOMPARE(window.chatView()->messageCount(), 2);
    QVERIFY(window.chatView()->message(outcome.reply_id)->error.isEmpty());
  }

  void leftOutTurnsAreInformationNotAnError() {
    AppRun run(demo_model());
    run.start();
    QVERIFY(run.waitForModel());
    run.app->show();
    gui::MainWindow& window = run.app->window();
    std::optional<gui::ReplyOutcome> outcome;
    for (int turn = 0; turn < 12 && !(outcome && outcome->trimmed_turns > 0); ++turn) {
      outcome = paste(run, QStringLiteral("Tell me something about the number %1, please, in a "
                                          "few words of your own.")
                               .arg(turn));
      QVERIFY(outcome);
      QVERIFY2(outcome->error.isEmpty(), qPrintable(outcome->error));
    }
    QVERIFY(outcome->trimmed_turns > 0);
    const int turns = outcome->trimmed_turns;
    const QString expected = turns == 1
                                 ? QStringLiteral(
                                       "1 turn at the start of this chat no longer fits the "
                                       "context; the model did not see it.")
                                 : QStringLiteral(
                                       "%1 turns at the start of this chat no longer fit the "
                                       "context; the model did not see them.")
                                       .arg(turns);
    QWidget* reply = messageWidget(window, outcome->reply_id);
    QVERIFY(reply);
    QCOMPARE(shownChild<QLabel>(reply, QStringLiteral("messageError")), nullptr);
    auto* notice = shownChild<QLabel>(reply, QStringLiteral("messageNotice"));
    QVERIFY(notice);
    QCOMPARE(notice->text(), expected + QStringLiteral(" %1 tokens of the prompt were read again.")
                                            .arg(outcome->recomputed_tokens));
    QVERIFY(window.chatView()->message(outcome->reply_id)->error.isEmpty());
  }
};

QUIRE_TEST(ContextLimitsTest)
#include "test_context_limits.moc"
