// --draft and --draft-tokens: refused values name themselves and the
// choices, a greedy reply with n-gram drafts or a draft model is the reply
// without them, a draft model for another tokenizer is refused by name, and
// the figures that generate and bench print about the drafts.

#include <QDir>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>
#include <QTest>
#include <cmath>

#include "cli_run.h"
#include "test_main.h"

namespace {

using cli_test::Run;
using cli_test::run_cli;

const QString kDemoModel = QStringLiteral(QUIRE_DEMO_MODEL_DIR);

// A prompt that says the same thing over and over: a greedy reply that goes
// on with it gives the n-gram drafter runs to find.
const QString kRepeatingPrompt =
    QStringLiteral("The cat sat on the mat. The cat sat on the mat. The cat sat on the");

QJsonObject draft_json_of(const Run& run) {
  return QJsonDocument::fromJson(run.out).object();
}

QString draft_why(const Run& run) {
  return QStringLiteral("exit %1, stderr: %2").arg(run.exit_code).arg(run.err);
}

Run generate_json(const QString& draft) {
  return run_cli({QStringLiteral("generate"), kDemoModel, QStringLiteral("--prompt"),
                  kRepeatingPrompt, QStringLiteral("--greedy"), QStringLiteral("--max-new"),
                  QStringLiteral("60"), QStringLiteral("--draft"), draft,
                  QStringLiteral("--json")});
}

// The figures a reply's drafts come to, as generate and bench compute them.
void check_draft_figures(const QJsonObject& entry, double generated) {
  const double drafted = entry[u"drafted_tokens"].toDouble();
  const double accepted = entry[u"accepted_tokens"].toDouble();
  QCOMPARE(entry[u"acceptance_rate"].toDouble(), drafted > 0 ? accepted / drafted : 0.0);
  QCOMPARE(entry[u"tokens_per_step"].toDouble(), generated / (generated - accepted));
}

}  // namespace

class DraftOptionTest : public QObject {
  Q_OBJECT

  QTemporaryDir root_;

 private slots:
  void anUnknownChoiceIsRefusedByName_data() {
    QTest::addColumn<QStringList>("command");
    QTest::newRow("generate") << QStringList{QStringLiteral("generate"), kDemoModel,
                                             QStringLiteral("--prompt"), QStringLiteral("Hi")};
    QTest::newRow("chat") << QStringList{QStringLiteral("chat"), kDemoModel};
    QTest::newRow("serve") << QStringList{QStringLiteral("serve"), kDemoModel};
    QTest::newRow("bench") << QStringList{QStringLiteral("bench"), kDemoModel};
  }

  void anUnknownChoiceIsRefusedByName() {
    QFETCH(QStringList, command);
    const Run run =
        run_cli(command + QStringList{QStringLiteral("--draft"), QStringLiteral("eagle")});
    QCOMPARE(run.exit_code, 2);
    QCOMPARE(run.err, QStringLiteral("quire-cli: --draft eagle: expected ngram, off or the "
                                     "directory of a draft model\n"));
    QVERIFY(run.out.isEmpty());
  }

  // The demo model's EXL2 copy drafts for its FP16 weights: the same
  // tokenizer, the same greedy reply, most drafts kept.
  void aDraftModelGivesTheSameGreedyReply() {
    const QString draft = QDir(kDemoModel).filePath(QStringLiteral("../exl2-4.0"));
    const Run off = generate_json(QStringLiteral("off"));
    const Run drafted_run = generate_json(draft);
    QVERIFY2(off.exit_code == 0, qPrintable(draft_why(off)));
    QVERIFY2(drafted_run.exit_code == 0, qPrintable(draft_why(drafted_run)));
    const QJsonObject plain = draft_json_of(off);
    const QJsonObject drafted = draft_json_of(drafted_run);
    QCOMPARE(drafted[u"tokens"].toArray(), plain[u"tokens"].toArray());
    QCOMPARE(drafted[u"text"].toString(), plain[u"text"].toString());
    const int tokens = drafted[u"tokens"].toArray().size();
    QVERIFY(drafted[u"drafted_tokens"].toInt() >= tokens / 2);
    QVERIFY(drafted[u"accepted_tokens"].toInt() * 2 > drafted[u"drafted_tokens"].toInt());
    check_draft_figures(drafted, tokens);
  }

  // A folder that holds no model, and a model with another tokenizer: each
  // refused by name before the reply starts.
  void aDraftThatIsNotADraftForThisModelIsRefused() {
    const QString empty = root_.filePath(QStringLiteral("empty"));
    QVERIFY(QDir().mkpath(empty));
    const Run none = run_cli({QStringLiteral("generate"), kDemoModel, QStringLiteral("--prompt"),
                              QStringLiteral("Hi"), QStringLiteral("--draft"), empty});
    QCOMPARE(none.exit_code, 2);
    QCOMPARE(none.err, QStringLiteral("quire-cli: no config.json in %1; choose a Hugging Face "
                                      "model directory (config.json, *.safetensors weights "
                                      "and a tokenizer: tokenizer.json or "
                                      "tokenizer.model)\n")
                           .arg(empty));
    QVERIFY(none.out.isEmpty());

    const QString foreign = root_.filePath(QStringLiteral("foreign"));
    QCOMPARE(run_cli({QStringLiteral("make-model"), foreign, QStringLiteral("--vocab"),
                      QStringLiteral("512")})
                 .exit_code,
             0);
    const Run other = run_cli({QStringLiteral("generate"), kDemoModel, QStringLiteral("--prompt"),
                               QStringLiteral("Hi"), QStringLiteral("--draft"), foreign});
    QCOMPARE(other.exit_code, 2);
    QVERIFY2(other.err.startsWith(QStringLiteral("quire-cli: the draft model %1 has 512 tokens, "
                                                 "the model %2 has 4096; a draft model must "
                                                 "use the model's own tokenizer")
                                      .arg(foreign, kDemoModel)),
             qPrintable(other.err));
    QVERIFY(other.out.isEmpty());
  }

  void aDraftLengthOutsideOneTo64IsRefused_data() {
    QTest::addColumn<QString>("tokens");
    QTest::newRow("0") << QStringLiteral("0");
    QTest::newRow("65") << QStringLiteral("65");
  }

  void aDraftLengthOutsideOneTo64IsRefused() {
    QFETCH(QString, tokens);
    const Run run = run_cli({QStringLiteral("generate"), kDemoModel, QStringLiteral("--prompt"),
                             QStringLiteral("Hi"), QStringLiteral("--draft"),
                             QStringLiteral("ngram"), QStringLiteral("--draft-tokens"), tokens});
    QCOMPARE(run.exit_code, 2);
    QCOMPARE(run.err, QStringLiteral("quire-cli: --draft-tokens: Value %1 not in range 1 to 64 "
                                     "(see quire-cli --help)\n")
                          .arg(tokens));
  }

  void ngramDraftsGiveTheSameGreedyReply() {
    const Run off = generate_json(QStringLiteral("off"));
    const Run ngram = generate_json(QStringLiteral("ngram"));
    QVERIFY2(off.exit_code == 0, qPrintable(draft_why(off)));
    QVERIFY2(ngram.exit_code == 0, qPrintable(draft_why(ngram)));
    const QJsonObject plain = draft_json_of(off);
    const QJsonObject drafted = draft_json_of(ngram);
    QVERIFY(!plain[u"text"].toString().isEmpty());
    QCOMPARE(drafted[u"text"].toString(), plain[u"text"].toString());
    QCOMPARE(drafted[u"tokens"].toArray(), plain[u"tokens"].toArray());
    QCOMPARE(drafted[u"stop_reason"].toString(), plain[u"stop_reason"].toString());

    // Without drafts: one token a step.
    QCOMPARE(plain[u"drafted_tokens"].toInt(), 0);
    QCOMPARE(plain[u"accepted_tokens"].toInt(), 0);
    QCOMPARE(plain[u"acceptance_rate"].toDouble(), 0.0);
    QCOMPARE(plain[u"tokens_per_step"].toDouble(), 1.0);
    // The reply repeats the prompt: drafts are made and some are kept.
    QVERIFY(drafted[u"drafted_tokens"].toInt() > 0);
    QVERIFY(drafted[u"accepted_tokens"].toInt() > 0);
    QVERIFY(drafted[u"accepted_tokens"].toInt() <= drafted[u"drafted_tokens"].toInt());
    check_draft_figures(drafted, drafted[u"tokens"].toArray().size());
  }

  // Streamed, the line after the reply says what the drafts did.
  void theReplysLastLineCountsTheDrafts() {
    const Run run =
        run_cli({QStringLiteral("generate"), kDemoModel, QStringLiteral("--prompt"),
                 kRepeatingPrompt, QStringLiteral("--greedy"), QStringLiteral("--max-new"),
                 QStringLiteral("60"), QStringLiteral("--draft"), QStringLiteral("ngram")});
    QVERIFY2(run.exit_code == 0, qPrintable(draft_why(run)));
    const QJsonObject figures = draft_json_of(generate_json(QStringLiteral("ngram")));
    const int drafted = figures[u"drafted_tokens"].toInt();
    const int accepted = figures[u"accepted_tokens"].toInt();
    const QString expected =
        QStringLiteral("; drafts: %1 of %2 accepted (%3%), %4 tokens per step]\n")
            .arg(accepted)
            .arg(drafted)
            .arg(std::lround(100.0 * accepted / drafted))
            .arg(figures[u"tokens_per_step"].toDouble(), 0, 'f', 1);
    QVERIFY2(run.err.endsWith(expected), qPrintable(run.err + QStringLiteral(" vs ") + expected));
  }

  void benchReportsTheDrafts() {
    const Run run = run_cli({QStringLiteral("bench"),  kDemoModel,
                             QStringLiteral("--json"), QStringLiteral("--context"),
                             QStringLiteral("1024"),   QStringLiteral("--decode-tokens"),
                             QStringLiteral("8"),      QStringLiteral("--prefill"),
                             QStringLiteral("32"),     QStringLiteral("--decode-contexts"),
                             QStringLiteral("60"),     QStringLiteral("--repeat"),
                             QStringLiteral("2"),      QStringLiteral("--batches"),
                             QStringLiteral("1"),      QStringLiteral("--batch-tokens"),
                             QStringLiteral("2"),      QStringLiteral("--turn-words"),
                             QStringLiteral("2"),      QStringLiteral("--turn-reply"),
                             QStringLiteral("2"),      QStringLiteral("--rewrite-tokens"),
                             QStringLiteral("40"),     QStringLiteral("--draft"),
                             QStringLiteral("ngram"),  QStringLiteral("--draft-tokens"),
                             QStringLiteral("6"),      QStringLiteral("--threads"),
                             QStringLiteral("1")});
    QVERIFY2(run.exit_code == 0, qPrintable(draft_why(run)));
    const QJsonObject out = draft_json_of(run);
    QCOMPARE(out[u"draft"].toObject(),
             (QJsonObject{{QStringLiteral("method"), QStringLiteral("ngram")},
                          {QStringLiteral("max_tokens"), 6}}));
    const QJsonArray decode = out[u"decode"].toArray();
    QCOMPARE(decode.size(), 1);
    // Two runs of 8 tokens each.
    check_draft_figures(decode[0].toObject(), 16);
    QVERIFY(decode[0].toObject()[u"tokens_per_s"].toDouble() > 0);

    // The rewrite: a code block asked for again with one change, rendered in
    // the model's format; the reply copies from it, so drafts are made.
    const QJsonObject rewrite = out[u"rewrite"].toObject();
    QVERIFY(rewrite[u"prompt_tokens"].toInt() > 200);
    QCOMPARE(rewrite[u"generated_tokens"].toInt(), 40);
    QVERIFY(rewrite[u"tokens_per_s"].toDouble() > 0);
    QCOMPARE(rewrite[u"runs_tokens_per_s"].toArray().size(), 2);
    QVERIFY(rewrite[u"drafted_tokens"].toInt() > 0);
    check_draft_figures(rewrite, 80);
  }

  // Without --draft nothing drafts, and the rewrite takes its prompt from a
  // file when given one.
  void benchRewritesAPromptFileWithoutDrafts() {
    const QString prompt = root_.filePath(QStringLiteral("rewrite.txt"));
    QFile file(prompt);
    QVERIFY(file.open(QIODevice::WriteOnly));
    file.write("Say this again: one two three four five six seven eight nine ten.");
    file.close();
    const Run run = run_cli({QStringLiteral("bench"),
                             kDemoModel,
                             QStringLiteral("--json"),
                             QStringLiteral("--context"),
                             QStringLiteral("1024"),
                             QStringLiteral("--decode-tokens"),
                             QStringLiteral("4"),
                             QStringLiteral("--prefill"),
                             QStringLiteral("32"),
                             QStringLiteral("--decode-contexts"),
                             QStringLiteral("60"),
                             QStringLiteral("--repeat"),
                             QStringLiteral("1"),
                             QStringLiteral("--batches"),
                             QStringLiteral("1"),
                             QStringLiteral("--batch-tokens"),
                             QStringLiteral("2"),
                             QStringLiteral("--turn-words"),
                             QStringLiteral("2"),
                             QStringLiteral("--turn-reply"),
                             QStringLiteral("2"),
                             QStringLiteral("--rewrite-tokens"),
                             QStringLiteral("12"),
                             QStringLiteral("--prompt-file"),
                             prompt,
                             QStringLiteral("--threads"),
                             QStringLiteral("1")});
    QVERIFY2(run.exit_code == 0, qPrintable(draft_why(run)));
    const QJsonObject out = draft_json_of(run);
    QCOMPARE(out[u"draft"].toObject()[u"method"].toString(), QStringLiteral("off"));
    const QJsonObject rewrite = out[u"rewrite"].toObject();
    QVERIFY(rewrite[u"prompt_tokens"].toInt() > 10);
    QVERIFY(rewrite[u"prompt_tokens"].toInt() < 100);
    QCOMPARE(rewrite[u"drafted_tokens"].toInt(), 0);
    QCOMPARE(rewrite[u"tokens_per_step"].toDouble(), 1.0);

    const QString absent = root_.filePath(QStringLiteral("no-such-file.txt"));
    const Run missing =
        run_cli({QStringLiteral("bench"), kDemoModel, QStringLiteral("--prompt-file"), absent});
    QCOMPARE(missing.exit_code, 2);
    QCOMPARE(missing.err,
             QStringLiteral("quire-cli: --prompt-file %1: cannot be read\n").arg(absent));
  }
};

QUIRE_TEST(DraftOptionTest)
#include "test_draft_option.moc"
