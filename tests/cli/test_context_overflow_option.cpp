// --context-overflow on quire-cli replay and generate: a ten-turn chat in a
// one-page (256-token) context on a small model made by make-model, with
// each policy's exact drops, and stop's refusal.

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>
#include <QTest>

#include "cli_run.h"
#include "shared_model.h"
#include "test_main.h"

namespace {

using cli_test::Run;
using cli_test::run_cli;

QJsonArray replay_turns(const Run& run) {
  return QJsonDocument::fromJson(run.out).object()[u"turns"].toArray();
}

}  // namespace

class ContextOverflowOptionTest : public QObject {
  Q_OBJECT

  QTemporaryDir root_;
  QString model_;
  QString script_;

  QStringList replay(const QString& policy) const {
    return {QStringLiteral("replay"),
            model_,
            QStringLiteral("--conversation"),
            script_,
            QStringLiteral("--max-new"),
            QStringLiteral("8"),
            QStringLiteral("--greedy"),
            QStringLiteral("--context"),
            QStringLiteral("256"),
            QStringLiteral("--context-overflow"),
            policy,
            QStringLiteral("--json")};
  }

 private slots:
  void initTestCase() { QVERIFY(cli_test::make_model_and_script(root_.path(), &model_, &script_)); }

  // Each turn adds 54 tokens; the fifth would not fit. Truncate-middle keeps
  // the first turn and drops turns 2-3 (108 tokens); drop-oldest drops turns
  // 1-3 (162). What stays unchanged is under a page, so all of the shortened
  // prompt before the new message is read again: 125 and 71 tokens.
  void eachPolicyDropsItsTurns_data() {
    QTest::addColumn<QString>("policy");
    QTest::addColumn<int>("first");
    QTest::addColumn<int>("turns");
    QTest::addColumn<int>("tokens");
    QTest::addColumn<int>("recomputed");
    QTest::addColumn<int>("prompt");
    QTest::newRow("truncate-middle")
        << QStringLiteral("truncate-middle") << 2 << 2 << 108 << 125 << 168;
    QTest::newRow("drop-oldest") << QStringLiteral("drop-oldest") << 1 << 3 << 162 << 71 << 114;
  }

  void eachPolicyDropsItsTurns() {
    QFETCH(QString, policy);
    QFETCH(int, first);
    QFETCH(int, turns);
    QFETCH(int, tokens);
    QFETCH(int, recomputed);
    QFETCH(int, prompt);
    const Run run = run_cli(replay(policy));
    QCOMPARE(run.exit_code, 0);
    const QJsonArray all = replay_turns(run);
    QCOMPARE(all.size(), 10);
    for (int i = 0; i < 4; ++i)
      QCOMPARE(all[i][u"trimmed_turns"].toInt(), 0);
    const QJsonValue fifth = all[4];
    QCOMPARE(fifth[u"trimmed_first_turn"].toInt(), first);
    QCOMPARE(fifth[u"trimmed_turns"].toInt(), turns);
    QCOMPARE(fifth[u"trimmed_tokens"].toInt(), tokens);
    QCOMPARE(fifth[u"trim_recomputed_tokens"].toInt(), recomputed);
    QCOMPARE(fifth[u"prompt_tokens"].toInt(), prompt);
  }

  void stopRefusesTheTurn() {
    const Run run = run_cli(replay(QStringLiteral("stop")));
    QCOMPARE(run.exit_code, 1);
    QVERIFY2(run.err.contains(QStringLiteral("tokens over the context of 256, and the chat's "
                                             "context policy is to stop")),
             qPrintable(run.err));

    QStringList bad = replay(QStringLiteral("sideways"));
    const Run refused = run_cli(bad);
    QCOMPARE(refused.exit_code, 2);
    QVERIFY2(refused.err.contains(
                 QStringLiteral("\"sideways\" is not stop, drop-oldest or truncate-middle")),
             qPrintable(refused.err));
  }

  // generate's prompt has no turns: the policy cuts tokens, keeping the BOS.
  void generateCutsAPromptThatDoesNotFit() {
    QString text;
    for (int i = 0; i < 300; ++i)
      text += QStringLiteral("word ");
    const QStringList base{QStringLiteral("generate"),  model_,
                           QStringLiteral("--prompt"),  text,
                           QStringLiteral("--max-new"), QStringLiteral("8"),
                           QStringLiteral("--greedy"),  QStringLiteral("--context"),
                           QStringLiteral("256")};
    const Run oldest = run_cli(base);  // the default is drop-oldest
    QCOMPARE(oldest.exit_code, 0);
    QVERIFY2(oldest.err.contains(QStringLiteral("tokens 2\u2013")), qPrintable(oldest.err));

    const Run stop =
        run_cli(base + QStringList{QStringLiteral("--context-overflow"), QStringLiteral("stop")});
    QCOMPARE(stop.exit_code, 1);
    QVERIFY2(stop.err.contains(QStringLiteral("tokens over the context of 256")),
             qPrintable(stop.err));

    const Run middle = run_cli(base + QStringList{QStringLiteral("--context-overflow"),
                                                  QStringLiteral("truncate-middle")});
    QCOMPARE(middle.exit_code, 0);
    // 248 tokens of room: the BOS and 123 more from the start, then the end.
    QVERIFY2(middle.err.contains(QStringLiteral("tokens 125\u2013")), qPrintable(middle.err));
  }
};

QUIRE_TEST(ContextOverflowOptionTest)
#include "test_context_overflow_option.moc"
