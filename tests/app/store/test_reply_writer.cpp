// ReplyWriter: when it commits (driven by an injected clock), what it leaves
// behind, and regeneration.

#include <QRegularExpression>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>

#include "quire/app/store/chat_store.h"
#include "quire/app/store/reply_writer.h"
#include "store_test_helpers.h"
#include "test_main.h"

using namespace quire::store;

namespace {

// One step of a stream: the clock moves on, then a delta arrives.
struct Step {
  qint64 advance_ms = 0;
  QString delta;
  // Commits the writer should have made after this step.
  int commits = 0;
};

}  // namespace

class ReplyWriterTest : public QObject {
  Q_OBJECT

  std::unique_ptr<QTemporaryDir> dir_;
  std::unique_ptr<ChatStore> store_;
  ChatId chat_{};

  QString stored_text(MessageId id) const { return store_->message(id)->text; }

 private slots:
  void init() {
    dir_ = std::make_unique<QTemporaryDir>();
    store_ = std::make_unique<ChatStore>();
    QVERIFY(store_->open(test::options(dir_->filePath(QStringLiteral("chats.sqlite")))));
    chat_ = *store_->create_chat(QStringLiteral("writer"));
    QVERIFY(store_->append_message(chat_, Role::User, QStringLiteral("Tell me a story.")));
  }

  void cleanup() { store_.reset(); }

  void commitsAtMostOneIntervalApart_data() {
    QTest::addColumn<QList<Step>>("steps");
    QTest::addColumn<int>("interval");

    QTest::newRow("steady stream")
        << QList<Step>{{0, QStringLiteral("Once"), 0},   {300, QStringLiteral(" upon"), 0},
                       {699, QStringLiteral(" a"), 0},   {1, QStringLiteral(" time"), 1},
                       {500, QStringLiteral(","), 1},    {499, QStringLiteral(" a"), 1},
                       {1, QStringLiteral(" dragon"), 2}}
        << 1000;
    QTest::newRow("first delta after a long prefill")
        << QList<Step>{{5000, QStringLiteral("Late"), 1}, {10, QStringLiteral(" start"), 1}}
        << 1000;
    QTest::newRow("every delta when the interval is zero")
        << QList<Step>{{0, QStringLiteral("a"), 1}, {0, QStringLiteral("b"), 2}} << 0;
    QTest::newRow("short interval") << QList<Step>{{40, QStringLiteral("x"), 0},
                                                   {10, QStringLiteral("y"), 1},
                                                   {49, QStringLiteral("z"), 1},
                                                   {1, QStringLiteral("!"), 2}}
                                    << 50;
  }

  void commitsAtMostOneIntervalApart() {
    QFETCH(QList<Step>, steps);
    QFETCH(int, interval);
    qint64 clock = 1'000'000;
    const auto reply = store_->begin_reply(chat_, QStringLiteral("tiny"));
    QVERIFY(reply);
    ReplyWriter writer(*store_, *reply, {interval, [&clock] { return clock; }, false});
    QSignalSpy committed(&writer, &ReplyWriter::committed);

    QString all;
    QString last_committed;
    for (const Step& step : steps) {
      clock += step.advance_ms;
      all += step.delta;
      writer.append(step.delta, std::vector<std::int32_t>{int(all.size())});
      QCOMPARE(writer.commit_count(), step.commits);
      QCOMPARE(committed.size(), step.commits);
      if (committed.size() > 0) last_committed = all.left(committed.last().at(0).toInt());
      // The store holds exactly the text of the last commit.
      QCOMPARE(stored_text(*reply), last_committed);
      QCOMPARE(writer.has_pending(), last_committed != all);
    }
    GenerationStats stats;
    stats.stop_reason = QStringLiteral("eos");
    stats.generated_tokens = int(steps.size());
    QVERIFY(writer.finish(stats));
    // finish() always commits: the statistics are new even when the text is not.
    QCOMPARE(writer.commit_count(), steps.last().commits + 1);
    const Message message = *store_->message(*reply);
    QCOMPARE(message.text, all);
    QCOMPARE(message.stats, std::optional<GenerationStats>(stats));
    QCOMPARE(message.tokens.size(), std::size_t(steps.size()));
    QVERIFY(writer.is_finished());
    QTest::ignoreMessage(QtWarningMsg, QRegularExpression(QStringLiteral("append after finish")));
    writer.append(QStringLiteral("ignored"));
    QCOMPARE(store_->message(*reply)->text, all);
  }

  void timerCommitsAStalledStream() {
    const auto reply = store_->begin_reply(chat_, QStringLiteral("tiny"));
    ReplyWriter writer(*store_, *reply, {30, {}, true});
    writer.append(QStringLiteral("Thinking"));
    QCOMPARE(writer.commit_count(), 0);
    // No further delta arrives; the timer must commit anyway.
    QTRY_COMPARE_WITH_TIMEOUT(stored_text(*reply), QStringLiteral("Thinking"), 5000);
    QCOMPARE(writer.commit_count(), 1);
    QVERIFY(!writer.has_pending());
  }

  void unfinishedReplyKeepsTextAndSaysInterrupted() {
    const auto reply = store_->begin_reply(chat_, QStringLiteral("tiny-model"));
    {
      const Message started = *store_->message(*reply);
      QCOMPARE(started.role, Role::Assistant);
      QCOMPARE(started.text, QString());
      QCOMPARE(started.stats->stop_reason, QLatin1String(kStopInterrupted));
      QCOMPARE(started.stats->model, QStringLiteral("tiny-model"));
      qint64 clock = 0;
      ReplyWriter writer(*store_, *reply, {1000, [&clock] { return clock; }, false});
      writer.append(QStringLiteral("Half a sent"));
      QCOMPARE(writer.commit_count(), 0);
    }  // destroyed without finish(): what it had is committed
    const Message message = *store_->message(*reply);
    QCOMPARE(message.text, QStringLiteral("Half a sent"));
    QCOMPARE(message.stats->stop_reason, QLatin1String(kStopInterrupted));
  }

  void renderedTokensReplaceStreamedOnes() {
    const auto reply = store_->begin_reply(chat_, QString());
    ReplyWriter writer(*store_, *reply, {1000, [] { return qint64(0); }, false});
    writer.append(QStringLiteral("Hi"), std::vector<std::int32_t>{5, 6});
    writer.set_tokens({1, 2, 5, 6, 3});
    QVERIFY(writer.finish({}));
    QCOMPARE(store_->message(*reply)->tokens, (std::vector<std::int32_t>{1, 2, 5, 6, 3}));
  }

  void writerStopsWhenItsMessageIsGone() {
    const QList<Message> before = store_->messages(chat_);
    const auto reply = store_->begin_reply(chat_, QString());
    qint64 clock = 0;
    ReplyWriter writer(*store_, *reply, {1000, [&clock] { return clock; }, false});
    QSignalSpy failed(&writer, &ReplyWriter::failed);
    // The user edits and resends the question while the reply streams.
    QVERIFY(store_->truncate_after(before.first().id));
    clock += 2000;
    writer.append(QStringLiteral("orphan"));
    QCOMPARE(failed.size(), 1);
    QCOMPARE(store_->error(), StoreError::NotFound);
    QVERIFY(!writer.error_string().isEmpty());
    clock += 2000;
    writer.append(QStringLiteral(" text"));
    QVERIFY(!writer.finish({}));
    QCOMPARE(failed.size(), 1);  // no retries into nothing
    QCOMPARE(store_->messages(chat_).size(), 1);
  }

  void writerRefusesAUserMessage() {
    const auto user = store_->messages(chat_).first().id;
    QVERIFY(!store_->write_reply(user, QStringLiteral("overwrite"), {}, std::nullopt));
    QCOMPARE(store_->error(), StoreError::InvalidArgument);
    QCOMPARE(stored_text(user), QStringLiteral("Tell me a story."));
  }

  void regenerateReplacesTheLastReply() {
    const auto first = store_->begin_reply(chat_, QStringLiteral("m"));
    {
      ReplyWriter writer(*store_, *first);
      writer.append(QStringLiteral("A bad story."));
      GenerationStats stats;
      stats.stop_reason = QStringLiteral("eos");
      QVERIFY(writer.finish(stats));
    }
    const auto second = store_->replace_last_reply(chat_, QStringLiteral("m2"));
    QVERIFY(second);
    QVERIFY(*second != *first);
    QVERIFY(!store_->message(*first));
    const QList<Message> messages = store_->messages(chat_);
    QCOMPARE(messages.size(), 2);
    QCOMPARE(messages[1].id, *second);
    QCOMPARE(messages[1].position, 1);
    QCOMPARE(messages[1].text, QString());
    QCOMPARE(messages[1].stats->model, QStringLiteral("m2"));

    // With no reply at the end (the last one failed to start), it just begins one.
    QVERIFY(store_->truncate_after(messages[0].id));
    const auto third = store_->replace_last_reply(chat_, QStringLiteral("m3"));
    QVERIFY(third);
    QCOMPARE(store_->messages(chat_).size(), 2);
    QCOMPARE(store_->messages(chat_).first().text, QStringLiteral("Tell me a story."));
  }
};

QUIRE_TEST(ReplyWriterTest)
#include "test_reply_writer.moc"
