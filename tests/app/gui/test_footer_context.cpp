// The footer's context count follows the version of a reply on show: after
// switching versions it counts the conversation the user reads.

#include <QSignalSpy>
#include <QTest>

#include "app_test_support.h"
#include "chat_controller.h"
#include "main_window.h"
#include "quire/ui/status_line.h"
#include "test_main.h"

using namespace quire;
using namespace quire::test;

class FooterContextTest : public QObject {
  Q_OBJECT

 private slots:
  void theContextCountFollowsTheVersionOnShow() {
    AppRun run(random_model(), 24);
    run.start();
    QVERIFY(run.waitForModel());
    ui::StatusLine& status = *run.app->window().statusLine();
    const std::optional<store::GenerationStats> long_stats =
        run.send(QStringLiteral("Count to ten."));
    QVERIFY(long_stats);
    const store::ChatId chat = *run.app->chats().currentChat();
    const store::MessageId first = run.app->store().current_path(chat).constLast().id;
    const qint64 long_reply = status.contextUsed();
    QVERIFY(long_reply > 0);

    // A shorter second version: random weights run to the limit they get.
    run.adjust_request = [](gui::ReplyRequest& request) { request.max_new_tokens = 8; };
    QSignalSpy finished(&run.app->chats(), &gui::ChatController::replyFinished);
    run.app->chats().regenerate(store::raw(first));
    QVERIFY(finished.wait(120'000));
    const store::MessageId second = run.app->store().current_path(chat).constLast().id;
    QVERIFY(second != first);
    const qint64 short_reply = status.contextUsed();
    const auto short_stats = finished.first().at(1).value<store::GenerationStats>();
    QVERIFY(short_stats.generated_tokens < long_stats->generated_tokens);
    // The same question, a reply that many tokens shorter.
    QCOMPARE(short_reply,
             long_reply - (long_stats->generated_tokens - short_stats.generated_tokens));

    run.app->chats().switchBranch(store::raw(second), -1);
    QCOMPARE(run.app->store().current_path(chat).constLast().id, first);
    QCOMPARE(status.contextUsed(), long_reply);
    run.app->chats().switchBranch(store::raw(first), +1);
    QCOMPARE(status.contextUsed(), short_reply);
  }
};

QUIRE_TEST(FooterContextTest)
#include "test_footer_context.moc"
