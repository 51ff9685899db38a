// A process killed (SIGKILL) while streaming a reply loses at most the last
// second of that reply, and the file opens cleanly afterwards.

#include <QProcess>
#include <QTemporaryDir>
#include <QTest>
#include <chrono>

#include "kill_helper_protocol.h"
#include "quire/app/store/chat_store.h"
#include "store_test_helpers.h"
#include "test_main.h"

using namespace quire::store;

namespace {

qint64 steady_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

struct Appended {
  int pieces = 0;
  int length = 0;
  qint64 at_ms = 0;
};

}  // namespace

class StoreKillTest : public QObject {
  Q_OBJECT

 private slots:
  void killedMidReplyLosesAtMostOneSecond() {
    QTemporaryDir dir;
    const QString path = dir.filePath(QStringLiteral("chats.sqlite"));
    QProcess helper;
    helper.setProcessChannelMode(QProcess::ForwardedErrorChannel);
    helper.start(QStringLiteral(QUIRE_KILL_HELPER_PATH), {path});
    QVERIFY2(helper.waitForStarted(10000), qPrintable(helper.errorString()));

    QList<Appended> appended;
    int commits = 0;
    int committed_length = 0;
    bool user_committed = false;
    // Stream for a while, with several commits behind us, then kill.
    const qint64 deadline = steady_ms() + 60000;
    while (commits < 3 && steady_ms() < deadline) {
      if (!helper.canReadLine() && !helper.waitForReadyRead(1000)) {
        QVERIFY2(helper.state() == QProcess::Running, "the helper stopped on its own");
        continue;
      }
      while (helper.canReadLine()) {
        const QStringList words = QString::fromUtf8(helper.readLine()).trimmed().split(u' ');
        if (words.value(0) == QLatin1String("user")) user_committed = true;
        if (words.value(0) == QLatin1String("committed")) {
          ++commits;
          committed_length = words.value(1).toInt();
        }
        if (words.value(0) == QLatin1String("appended")) {
          appended << Appended{words.value(1).toInt(), words.value(2).toInt(),
                               words.value(3).toLongLong()};
        }
        QVERIFY2(words.value(0) != QLatin1String("error"), qPrintable(words.join(u' ')));
      }
    }
    QVERIFY(user_committed);
    QCOMPARE(commits, 3);
    // Let the stream run on past the last commit, then kill it.
    QTest::qWait(600);
    const qint64 killed_at = steady_ms();
    helper.kill();  // SIGKILL: no destructor, no flush, no checkpoint
    QVERIFY(helper.waitForFinished(10000));
    QCOMPARE(helper.exitStatus(), QProcess::CrashExit);
    while (helper.canReadLine()) {
      const QStringList words = QString::fromUtf8(helper.readLine()).trimmed().split(u' ');
      if (words.value(0) == QLatin1String("appended")) {
        appended << Appended{words.value(1).toInt(), words.value(2).toInt(),
                             words.value(3).toLongLong()};
      }
    }
    QVERIFY(!appended.isEmpty());

    ChatStore store;
    QVERIFY2(store.open(test::options(path)), qPrintable(store.error_string()));
    const QList<ChatSummary> chats = store.list_chats();
    QCOMPARE(chats.size(), 1);
    const QList<Message> messages = store.messages(chats.first().id);
    QCOMPARE(messages.size(), 2);
    QCOMPARE(messages[0].role, Role::User);
    QCOMPARE(messages[0].text, kill_test::kQuestion);
    const Message& reply = messages[1];
    QCOMPARE(reply.role, Role::Assistant);
    QCOMPARE(reply.stats->stop_reason, QLatin1String(kStopInterrupted));

    // What survived is a prefix of what was streamed, whole pieces only.
    QString streamed;
    int pieces = 0;
    while (streamed.size() < reply.text.size())
      streamed += kill_test::piece(pieces++);
    QCOMPARE(reply.text, streamed);
    QCOMPARE(reply.tokens.size(), std::size_t(pieces));
    QVERIFY(reply.text.size() >= committed_length);
    // Everything appended more than a second (plus scheduling slack for a
    // loaded machine) before the kill was committed.
    const qint64 slack_ms = 400;
    int must_have = 0;
    for (const Appended& step : appended) {
      if (step.at_ms <= killed_at - 1000 - slack_ms) must_have = std::max(must_have, step.length);
    }
    qInfo("kept %d of %d streamed characters; %d were appended over %lld ms before the kill",
          int(reply.text.size()), appended.last().length, must_have, 1000 + slack_ms);
    QVERIFY2(must_have > 0, "the stream was too short to judge");
    QVERIFY2(reply.text.size() >= must_have,
             qPrintable(QStringLiteral("kept %1 characters; %2 were older than a second")
                            .arg(reply.text.size())
                            .arg(must_have)));
    QVERIFY(reply.text.size() <= appended.last().length);
  }
};

QUIRE_TEST(StoreKillTest)
#include "test_store_kill.moc"
