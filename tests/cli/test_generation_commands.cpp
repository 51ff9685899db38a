// quire-cli generate, replay and bench on small models made by make-model:
// exit codes, the JSON they print, and what the numbers must say about the
// cache (every later turn of a conversation reuses all earlier ones).

#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>
#include <QTest>
#include <algorithm>

#include "cli_run.h"
#include "shared_model.h"
#include "test_main.h"

namespace {

using cli_test::Run;
using cli_test::run_cli;

// The runs of one measurement (the array under `key`), sorted.
QList<double> sorted_runs(const QJsonValue& measurement, QLatin1String key) {
  QList<double> runs;
  for (const QJsonValue& r : measurement[key].toArray())
    runs.append(r.toDouble());
  std::sort(runs.begin(), runs.end());
  return runs;
}

QJsonObject json_of(const Run& run) {
  QJsonParseError error{};
  const QJsonDocument document = QJsonDocument::fromJson(run.out, &error);
  if (error.error != QJsonParseError::NoError) {
    qWarning("not JSON (%s): %s", qPrintable(error.errorString()), run.out.constData());
  }
  return document.object();
}

QList<int> ints(const QJsonArray& array) {
  QList<int> values;
  for (const QJsonValue& value : array)
    values.append(value.toInt());
  return values;
}

QString join(const QList<int>& ids) {
  QStringList parts;
  for (int id : ids)
    parts.append(QString::number(id));
  return parts.join(QLatin1Char(','));
}

int argmax(const QJsonArray& row) {
  int best = 0;
  for (int i = 1; i < row.size(); ++i) {
    if (row[i].toDouble() > row[best].toDouble()) best = i;
  }
  return best;
}

}  // namespace

class GenerationCommandsTest : public QObject {
  Q_OBJECT

  QTemporaryDir root_;
  QString model_;
  QString script_;

 private slots:
  void initTestCase() { QVERIFY(cli_test::make_model_and_script(root_.path(), &model_, &script_)); }

  void greedyGenerationFollowsTheLogits() {
    const QList<int> prompt{1, 17, 42, 99};
    const Run run =
        run_cli({QStringLiteral("generate"), model_, QStringLiteral("--tokens"), join(prompt),
                 QStringLiteral("--greedy"), QStringLiteral("--ignore-eos"),
                 QStringLiteral("--max-new"), QStringLiteral("5"), QStringLiteral("--json")});
    QCOMPARE(run.exit_code, 0);
    const QJsonObject out = json_of(run);
    const QList<int> generated = ints(out[u"tokens"].toArray());
    QCOMPARE(generated.size(), 5);
    QCOMPARE(out[u"prompt_tokens"].toInt(), 4);
    QCOMPARE(out[u"cached_tokens"].toInt(), 0);
    QCOMPARE(out[u"stop_reason"].toString(), QStringLiteral("max_new_tokens"));
    QVERIFY(out[u"decode_tokens_per_s"].toDouble() > 0);

    // Each generated token is the most likely one after everything before it,
    // as `logits` computes it on its own.
    QList<int> context = prompt;
    for (int token : generated) {
      const Run logits =
          run_cli({QStringLiteral("logits"), model_, QStringLiteral("--tokens"), join(context)});
      QCOMPARE(logits.exit_code, 0);
      const QJsonArray rows = json_of(logits)[u"logits"].toArray();
      QCOMPARE(argmax(rows.last().toArray()), token);
      context.append(token);
    }
  }

  void seededSamplingRepeats() {
    const QStringList arguments{QStringLiteral("generate"),     model_,
                                QStringLiteral("--prompt"),     QStringLiteral("Once upon a time"),
                                QStringLiteral("--seed"),       QStringLiteral("7"),
                                QStringLiteral("--max-new"),    QStringLiteral("12"),
                                QStringLiteral("--ignore-eos"), QStringLiteral("--json")};
    const Run first = run_cli(arguments);
    const Run second = run_cli(arguments);
    QCOMPARE(first.exit_code, 0);
    QCOMPARE(second.exit_code, 0);
    QCOMPARE(ints(json_of(first)[u"tokens"].toArray()), ints(json_of(second)[u"tokens"].toArray()));
    QCOMPARE(json_of(first)[u"text"].toString(), json_of(second)[u"text"].toString());
  }

  void bannedStringsAndTextBiases() {
    const QStringList base{QStringLiteral("generate"), model_,
                           QStringLiteral("--prompt"), QStringLiteral("Once upon a time"),
                           QStringLiteral("--greedy"), QStringLiteral("--max-new"),
                           QStringLiteral("24"),       QStringLiteral("--ignore-eos"),
                           QStringLiteral("--json")};
    const Run plain = run_cli(base);
    QCOMPARE(plain.exit_code, 0);
    const QString text = json_of(plain)[u"text"].toString();
    QVERIFY2(text.size() > 10, qPrintable(text));
    QCOMPARE(json_of(plain)[u"banned_rewinds"].toInt(), 0);
    const QString banned = text.mid(3, 5).toUpper();
    const Run guarded = run_cli(base + QStringList{QStringLiteral("--ban-string"), banned});
    QCOMPARE(guarded.exit_code, 0);
    const QString kept = json_of(guarded)[u"text"].toString();
    QVERIFY2(!kept.contains(banned, Qt::CaseInsensitive), qPrintable(kept));
    QVERIFY(json_of(guarded)[u"banned_rewinds"].toInt() >= 1);
    QCOMPARE(ints(json_of(guarded)[u"tokens"].toArray()).size(), 24);

    // Every token of the text pushed far up: greedy takes only those.
    const Run ids = run_cli({QStringLiteral("tokenize"), model_, QStringLiteral("--text"),
                             QStringLiteral("zebra"), QStringLiteral("--no-bos")});
    QCOMPARE(ids.exit_code, 0);
    const QList<int> zebra = ints(QJsonDocument::fromJson(ids.out).array());
    QVERIFY(!zebra.isEmpty());
    const Run biased = run_cli(
        base + QStringList{QStringLiteral("--logit-bias-text"), QStringLiteral("zebra=100")});
    QCOMPARE(biased.exit_code, 0);
    for (const int token : ints(json_of(biased)[u"tokens"].toArray()))
      QVERIFY2(zebra.contains(token), qPrintable(QString::number(token)));

    const Run bad =
        run_cli(base + QStringList{QStringLiteral("--logit-bias-text"), QStringLiteral("no bias")});
    QCOMPARE(bad.exit_code, 2);
    QVERIFY2(bad.err.contains(QStringLiteral("TEXT=BIAS")), qPrintable(bad.err));
  }

  void generateRejectsBadInput() {
    const Run missing =
        run_cli({QStringLiteral("generate"), root_.filePath(QStringLiteral("no-such-model")),
                 QStringLiteral("--prompt"), QStringLiteral("hi")});
    QCOMPARE(missing.exit_code, 2);
    QVERIFY2(missing.err.contains(QStringLiteral("no-such-model")), qPrintable(missing.err));

    const Run bad_ids = run_cli(
        {QStringLiteral("generate"), model_, QStringLiteral("--tokens"), QStringLiteral("1,x,3")});
    QCOMPARE(bad_ids.exit_code, 2);
    QVERIFY(!bad_ids.err.isEmpty());

    const Run no_cache =
        run_cli({QStringLiteral("generate"), model_, QStringLiteral("--prompt"),
                 QStringLiteral("hi"), QStringLiteral("--cache"), QStringLiteral("q3")});
    QCOMPARE(no_cache.exit_code, 2);
    QVERIFY2(no_cache.err.contains(QStringLiteral("q3")), qPrintable(no_cache.err));
  }

  void replayReusesEveryEarlierTurn_data() {
    QTest::addColumn<QString>("cache");
    QTest::newRow("fp16") << QStringLiteral("fp16");
    QTest::newRow("q4") << QStringLiteral("q4");
  }

  void replayReusesEveryEarlierTurn() {
    QFETCH(QString, cache);
    const Run run = run_cli({QStringLiteral("replay"), model_, QStringLiteral("--conversation"),
                             script_, QStringLiteral("--max-new"), QStringLiteral("24"),
                             QStringLiteral("--cache"), cache, QStringLiteral("--json")});
    QCOMPARE(run.exit_code, 0);
    const QJsonArray turns = json_of(run)[u"turns"].toArray();
    QCOMPARE(turns.size(), 10);
    for (int i = 0; i < turns.size(); ++i) {
      const QJsonObject turn = turns[i].toObject();
      QCOMPARE(turn[u"turn"].toInt(), i + 1);
      QCOMPARE(turn[u"trimmed_turns"].toInt(), 0);
      QCOMPARE(turn[u"computed_tokens"].toInt(),
               turn[u"prompt_tokens"].toInt() - turn[u"cached_tokens"].toInt());
      if (i == 0) {
        QCOMPARE(turn[u"cached_tokens"].toInt(), 0);
        continue;
      }
      // Everything the previous turn held (its prompt and its reply) is served
      // from the cache except, at most, the reply's last token, which was
      // sampled but never run through the model. A partial page copied from
      // a cached sibling may match further than that: more reuse, never less.
      const QJsonObject previous = turns[i - 1].toObject();
      const int held = previous[u"prompt_tokens"].toInt() + previous[u"generated_tokens"].toInt();
      QVERIFY2(turn[u"cached_tokens"].toInt() >= held - 1,
               qPrintable(QStringLiteral("turn %1: %2 cached of %3 held")
                              .arg(i + 1)
                              .arg(turn[u"cached_tokens"].toInt())
                              .arg(held)));
      QVERIFY(turn[u"cached_tokens"].toInt() < turn[u"prompt_tokens"].toInt());
      QVERIFY(turn[u"computed_tokens"].toInt() < turn[u"prompt_tokens"].toInt() / 2 + 40);
    }

    // The table says the same thing to a person.
    const Run table = run_cli({QStringLiteral("replay"), model_, QStringLiteral("--conversation"),
                               script_, QStringLiteral("--max-new"), QStringLiteral("24"),
                               QStringLiteral("--cache"), cache});
    QCOMPARE(table.exit_code, 0);
    QVERIFY(table.out.contains("cached"));
    QCOMPARE(table.out.count('\n'), 11);  // a header and ten turns
  }

  // The cache policies a user can choose: how a reply's pages are reserved,
  // and the host-memory tier (in tokens, whole pages of 256).
  void replayTakesTheCachePolicies() {
    const Run run =
        run_cli({QStringLiteral("replay"), model_, QStringLiteral("--conversation"), script_,
                 QStringLiteral("--max-new"), QStringLiteral("8"),
                 QStringLiteral("--reserve-pages"), QStringLiteral("all"),
                 QStringLiteral("--host-cache"), QStringLiteral("1000"), QStringLiteral("--json")});
    QCOMPARE(run.exit_code, 0);
    const QJsonObject result = json_of(run);
    QCOMPARE(result[u"reservation"].toString(), QStringLiteral("reserve on admission"));
    QCOMPARE(result[u"host_pages"].toInt(), 4);
    QCOMPARE(result[u"turns"].toArray().size(), 10);

    const Run defaults =
        run_cli({QStringLiteral("replay"), model_, QStringLiteral("--conversation"), script_,
                 QStringLiteral("--max-new"), QStringLiteral("8"), QStringLiteral("--json")});
    // Pages as replies grow, as in the app (settings_table.cpp says why).
    QCOMPARE(json_of(defaults)[u"reservation"].toString(), QStringLiteral("on demand"));
    QCOMPARE(json_of(defaults)[u"host_pages"].toInt(), 0);

    const Run bad = run_cli({QStringLiteral("replay"), model_, QStringLiteral("--conversation"),
                             script_, QStringLiteral("--reserve-pages"), QStringLiteral("some")});
    QCOMPARE(bad.exit_code, 2);
    QVERIFY2(bad.err.contains(QStringLiteral("--reserve-pages \"some\" is not all or on-demand")),
             qPrintable(bad.err));
  }

  void replayRejectsBadScripts() {
    const QString broken = root_.filePath(QStringLiteral("broken.json"));
    QFile file(broken);
    QVERIFY(file.open(QIODevice::WriteOnly));
    file.write("{\"messages\": [\"hello\", 3]}");
    file.close();
    const Run run =
        run_cli({QStringLiteral("replay"), model_, QStringLiteral("--conversation"), broken});
    QCOMPARE(run.exit_code, 2);
    QVERIFY2(run.err.contains(QStringLiteral("every message must be a string")),
             qPrintable(run.err));

    const Run missing = run_cli({QStringLiteral("replay"), model_, QStringLiteral("--conversation"),
                                 root_.filePath(QStringLiteral("absent.json"))});
    QCOMPARE(missing.exit_code, 2);
    QVERIFY(missing.err.contains(QStringLiteral("absent.json")));
  }

  void benchReportsEveryMeasurement() {
    // Small lengths keep this quick; the defaults are the full benchmark.
    const Run run = run_cli({QStringLiteral("bench"),
                             model_,
                             QStringLiteral("--json"),
                             QStringLiteral("--context"),
                             QStringLiteral("2048"),
                             QStringLiteral("--decode-tokens"),
                             QStringLiteral("4"),
                             QStringLiteral("--prefill"),
                             QStringLiteral("128,512,4096"),
                             QStringLiteral("--first-token"),
                             QStringLiteral("100,4096"),
                             QStringLiteral("--decode-contexts"),
                             QStringLiteral("64,300,2046"),
                             QStringLiteral("--repeat"),
                             QStringLiteral("2"),
                             QStringLiteral("--batches"),
                             QStringLiteral("1,3,20"),
                             QStringLiteral("--batch-tokens"),
                             QStringLiteral("5"),
                             QStringLiteral("--turn-words"),
                             QStringLiteral("6"),
                             QStringLiteral("--turn-reply"),
                             QStringLiteral("8"),
                             QStringLiteral("--threads"),
                             QStringLiteral("1")});
    QCOMPARE(run.exit_code, 0);
    const QJsonObject out = json_of(run);
    QCOMPARE(out[u"cache_tokens"].toInt(), 2048);
    // Pinned to one thread; the peak is measured on that thread, and every
    // kernel names the path it took here.
    QCOMPARE(out[u"threads"].toInt(), 1);
    const QJsonObject peak = out[u"multiply_add_peak"].toObject();
    QVERIFY(peak[u"per_s"].toDouble() > 0);
    QVERIFY(QStringList({QStringLiteral("AVX-512 FMA"), QStringLiteral("AVX2 FMA"),
                         QStringLiteral("SSE multiply and add")})
                .contains(peak[u"instructions"].toString()));
    const QJsonObject paths = out[u"kernel_paths"].toObject();
    for (const char* kernel : {"batched (prefill) products", "attention"})
      QVERIFY2(!paths[QLatin1String(kernel)].toString().isEmpty(), kernel);
    // The dense product rate is measured on the model's MLP shape.
    const QJsonObject matmul = out[u"matmul"].toObject();
    QCOMPARE(matmul[u"rows"].toInt(), 256);
    QCOMPARE(matmul[u"in"].toInt(), 128);
    QCOMPARE(matmul[u"out"].toInt(), 256);
    QVERIFY(matmul[u"multiply_adds_per_s"].toDouble() > 0);
    QVERIFY(out[u"copy_bandwidth_gb_s"].toDouble() > 0);
    // Decode's bound on the CPU: what the backend's threads read together.
    QVERIFY(out[u"read_bandwidth_gb_s"].toDouble() > 0);
    QCOMPARE(out[u"bandwidth_bound_of"].toString(),
             QStringLiteral("reads of host memory on every thread"));
    QVERIFY(!out[u"cpu"].toString().isEmpty());

    // Only what fits in 2048 tokens of cache is measured.
    QList<int> prefill_lengths, decode_contexts, batch_jobs;
    for (const QJsonValue& p : out[u"prefill"].toArray()) {
      prefill_lengths.append(p[u"tokens"].toInt());
      QVERIFY(p[u"tokens_per_s"].toDouble() > 0);
      QVERIFY(p[u"fraction_of_matmul_rate"].toDouble() > 0);
      QVERIFY(p[u"fraction_of_peak"].toDouble() > 0);
      // Each of the --repeat runs prefills a prompt of its own (one taken
      // from the cache would be far faster); the median is reported.
      const QList<double> runs = sorted_runs(p, QLatin1String("runs_tokens_per_s"));
      QCOMPARE(runs.size(), 2);
      QCOMPARE(p[u"tokens_per_s"].toDouble(), runs[1]);
    }
    QCOMPARE(prefill_lengths, (QList<int>{128, 512}));
    // The first token of a fresh prompt, timed per run; 4096 tokens do not
    // fit the cache and are left out.
    const QJsonArray first_token = out[u"first_token"].toArray();
    QCOMPARE(first_token.size(), 1);
    QCOMPARE(first_token[0][u"tokens"].toInt(), 100);
    const QList<double> first_runs = sorted_runs(first_token[0], QLatin1String("runs_seconds"));
    QCOMPARE(first_runs.size(), 2);
    QVERIFY(first_runs[0] > 0);
    QCOMPARE(first_token[0][u"seconds"].toDouble(), first_runs[1]);
    for (const QJsonValue& d : out[u"decode"].toArray()) {
      decode_contexts.append(d[u"context"].toInt());
      QVERIFY(d[u"tokens_per_s"].toDouble() > 0);
      QVERIFY(d[u"fraction_of_bandwidth_bound"].toDouble() > 0);
      // The reported rate is the median of the runs.
      const QList<double> runs = sorted_runs(d, QLatin1String("runs_tokens_per_s"));
      QCOMPARE(runs.size(), 2);
      QCOMPARE(d[u"tokens_per_s"].toDouble(), runs[1]);
    }
    QCOMPARE(decode_contexts, (QList<int>{64, 300}));
    for (const QJsonValue& b : out[u"batch"].toArray()) {
      const int jobs = b[u"jobs"].toInt();
      batch_jobs.append(jobs);
      QCOMPARE(b[u"generated_tokens"].toInt(), 5 * jobs);
      QVERIFY(b[u"tokens_per_s"].toDouble() > 0);
      QVERIFY(b[u"decode_tokens_per_s"].toDouble() > 0);
      // The first run computes every 64-token prompt. The second finds them
      // in the cache, all but the last token of each, where the pages of
      // all the jobs fit (8 pages of 256 tokens hold 3 jobs' pages, not 20).
      QCOMPARE(b[u"computed_tokens"].toInt(), 64 * jobs);
      const int recomputed = b[u"cached_run_computed_tokens"].toInt();
      if (jobs <= 3) {
        QCOMPARE(recomputed, jobs);
      } else {
        QVERIFY(recomputed <= 64 * jobs);
      }
    }
    QCOMPARE(batch_jobs, (QList<int>{1, 3, 20}));

    // Each turn of the conversation takes at least every earlier prompt from
    // the cache (and the earlier replies, which the JSON does not count).
    const QJsonObject conversation = out[u"conversation"].toObject();
    const QJsonArray turns = conversation[u"turns"].toArray();
    QCOMPARE(turns.size(), 10);
    QCOMPARE(turns[0].toObject()[u"cached_tokens"].toInt(), 0);
    for (int i = 1; i < turns.size(); ++i) {
      QVERIFY(turns[i].toObject()[u"cached_tokens"].toInt() >=
              turns[i - 1].toObject()[u"prompt_tokens"].toInt());
    }
    // The conversation ran --repeat times; each turn reports the median.
    for (const QJsonValue& turn : turns) {
      const QList<double> runs = sorted_runs(turn, QLatin1String("runs_time_to_first_token_s"));
      QCOMPARE(runs.size(), 2);
      QCOMPARE(turn[u"time_to_first_token_s"].toDouble(), runs[1]);
    }
    QCOMPARE(conversation[u"turn_1_ttft_s"].toDouble(),
             turns[0].toObject()[u"time_to_first_token_s"].toDouble());
    QVERIFY(conversation[u"turn_10_cold_ttft_s"].toDouble() > 0);

    // 2 layers x 2 K/V heads x 32 dims: FP16 K and V take 512 bytes a token.
    const QJsonObject kv = out[u"kv_bytes_per_token"].toObject();
    QCOMPARE(kv[u"fp16"].toDouble(), 512.0);
    QCOMPARE(kv[u"q8"].toDouble(), 272.0);
    QCOMPARE(kv[u"q4"].toDouble(), 144.0);
  }

  // What a comparison of kernels measures, without the conversation's ten
  // turns and its second model load.
  void benchLeavesOutTheConversation() {
    const Run run = run_cli({QStringLiteral("bench"),  model_,
                             QStringLiteral("--json"), QStringLiteral("--context"),
                             QStringLiteral("1024"),   QStringLiteral("--decode-tokens"),
                             QStringLiteral("4"),      QStringLiteral("--prefill"),
                             QStringLiteral("64"),     QStringLiteral("--decode-contexts"),
                             QStringLiteral("64"),     QStringLiteral("--repeat"),
                             QStringLiteral("1"),      QStringLiteral("--batches"),
                             QStringLiteral("1"),      QStringLiteral("--batch-tokens"),
                             QStringLiteral("4"),      QStringLiteral("--rewrite-tokens"),
                             QStringLiteral("0"),      QStringLiteral("--threads"),
                             QStringLiteral("1"),      QStringLiteral("--no-conversation")});
    QCOMPARE(run.exit_code, 0);
    const QJsonObject out = json_of(run);
    QVERIFY(!out.contains(u"conversation"));
    QCOMPARE(out[u"first_token"].toArray().size(), 0);
    QCOMPARE(out[u"decode"].toArray().size(), 1);
    QVERIFY(!run.err.contains(QStringLiteral("turn 10")));
  }
};

QUIRE_TEST(GenerationCommandsTest)
#include "test_generation_commands.moc"
