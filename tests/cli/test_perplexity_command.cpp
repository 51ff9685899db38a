// quire-cli perplexity on a model made by make-model: the figure is the one
// the logits command's rows give for the same tokens, the cache coding enters
// it, --kl-divergence is the divergence of those rows from the FP16 cache's
// (on the demo model: a random model's distributions are nearly one-hot, so
// their divergences vanish in rounding), the residual window lowers it, and
// texts or windows it cannot score are refused by name.

#include <QDir>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>
#include <QTest>
#include <algorithm>
#include <cmath>
#include <utility>
#include <vector>

#include "cli_run.h"
#include "test_main.h"

namespace {

using cli_test::Run;
using cli_test::run_cli;

constexpr int kWindow = 48;

QString text_of_sentences() {
  QString text;
  const QStringList words = {QStringLiteral("river"),   QStringLiteral("stone"),
                             QStringLiteral("lantern"), QStringLiteral("quiet"),
                             QStringLiteral("morning"), QStringLiteral("window")};
  for (int i = 0; i < 120; ++i) {
    text += QStringLiteral("The %1 and the %2 wait by the %3. ")
                .arg(words[i % 6], words[(i * 5 + 1) % 6], words[(i * 7 + 2) % 6]);
  }
  return text;
}

// log softmax of a row of logits as the logits command prints them.
std::vector<double> log_softmax(const QJsonArray& row) {
  double largest = row[0].toDouble();
  for (const QJsonValue value : row)
    largest = std::max(largest, value.toDouble());
  double sum = 0;
  for (const QJsonValue value : row)
    sum += std::exp(value.toDouble() - largest);
  std::vector<double> out;
  for (const QJsonValue value : row)
    out.push_back(value.toDouble() - largest - std::log(sum));
  return out;
}

// The token ids of the test's text under a model's tokenizer.
QJsonArray text_ids(const QString& model) {
  const Run encoded =
      run_cli({QStringLiteral("tokenize"), model, QStringLiteral("--text"), text_of_sentences()});
  if (encoded.exit_code != 0) qWarning("%s", qPrintable(encoded.err));
  return QJsonDocument::fromJson(encoded.out).array();
}

// The first window's ids, as the logits command's --tokens takes them.
QString first_window(const QJsonArray& ids) {
  QStringList window;
  for (int i = 0; i < kWindow && i < ids.size(); ++i)
    window << QString::number(ids[i].toInt());
  return window.join(u',');
}

// Every position's logits for a window, as `logits --all` prints them.
QJsonArray all_rows(const QString& model, const QString& window, const QString& cache) {
  const Run logits = run_cli({QStringLiteral("logits"), model, QStringLiteral("--tokens"), window,
                              QStringLiteral("--all"), QStringLiteral("--cache"), cache,
                              QStringLiteral("--residual-window"), QStringLiteral("0")});
  if (logits.exit_code != 0) qWarning("%s", qPrintable(logits.err));
  return QJsonDocument::fromJson(logits.out).object()[u"logits"].toArray();
}

// The mean KL(P || Q) over the scored rows (the second half of a window)
// and the share of them where both rank the same token first.
std::pair<double, double> divergence_of_rows(const QJsonArray& reference, const QJsonArray& coded) {
  double total = 0;
  int same_top = 0;
  for (int i = kWindow / 2; i + 1 < kWindow; ++i) {
    const std::vector<double> p = log_softmax(reference[i].toArray());
    const std::vector<double> q = log_softmax(coded[i].toArray());
    for (std::size_t t = 0; t < p.size(); ++t)
      total += std::exp(p[t]) * (p[t] - q[t]);
    same_top += std::max_element(p.begin(), p.end()) - p.begin() ==
                std::max_element(q.begin(), q.end()) - q.begin();
  }
  const int scored = kWindow - 1 - kWindow / 2;
  return {total / scored, double(same_top) / scored};
}

QJsonObject perplexity_json(const QStringList& arguments) {
  const Run run = run_cli(arguments);
  if (run.exit_code != 0) qWarning("%s", qPrintable(run.err));
  return QJsonDocument::fromJson(run.out).object();
}

}  // namespace

class PerplexityCommandTest : public QObject {
  Q_OBJECT

  QTemporaryDir root_;
  QString model_;
  QString text_;

  QStringList command(const QString& cache, int max_tokens,
                      const QString& model = QString()) const {
    return {QStringLiteral("perplexity"),   model.isEmpty() ? model_ : model,
            QStringLiteral("--text"),       text_,
            QStringLiteral("--window"),     QString::number(kWindow),
            QStringLiteral("--max-tokens"), QString::number(max_tokens),
            QStringLiteral("--cache"),      cache,
            QStringLiteral("--json")};
  }

 private slots:
  void initTestCase() {
    model_ = root_.filePath(QStringLiteral("model"));
    QCOMPARE(run_cli({QStringLiteral("make-model"), model_, QStringLiteral("--format"),
                      QStringLiteral("fp16"), QStringLiteral("--seed"), QStringLiteral("3")})
                 .exit_code,
             0);
    text_ = root_.filePath(QStringLiteral("text.txt"));
    QFile file(text_);
    QVERIFY(file.open(QIODevice::WriteOnly));
    file.write(text_of_sentences().toUtf8());
  }

  // The second half of the window is scored from the rows `logits --all`
  // prints for the same tokens: -log softmax at the next token, averaged.
  void scoresTheSecondHalfOfEachWindowFromTheModelsRows() {
    const QJsonArray ids = text_ids(model_);
    QVERIFY(ids.size() >= 2 * kWindow);
    const QString window = first_window(ids);
    const Run logits = run_cli({QStringLiteral("logits"), model_, QStringLiteral("--tokens"),
                                window, QStringLiteral("--all")});
    QCOMPARE(logits.exit_code, 0);
    const QJsonArray rows = QJsonDocument::fromJson(logits.out).object()[u"logits"].toArray();
    QCOMPARE(rows.size(), kWindow);
    double total = 0;
    for (int i = kWindow / 2; i + 1 < kWindow; ++i)
      total -= log_softmax(rows[i].toArray())[std::size_t(ids[i + 1].toInt())];
    const double expected = total / (kWindow - 1 - kWindow / 2);

    const QJsonObject result = perplexity_json(command(QStringLiteral("fp16"), kWindow));
    QCOMPARE(result[u"windows"].toInt(), 1);
    QCOMPARE(result[u"scored_tokens"].toInt(), kWindow - 1 - kWindow / 2);
    const double measured = result[u"mean_negative_log_likelihood"].toDouble();
    // The logits command prints nine significant digits.
    QVERIFY2(
        std::abs(measured - expected) < 1e-6 * expected,
        qPrintable(QStringLiteral("%1 vs %2").arg(measured, 0, 'g', 12).arg(expected, 0, 'g', 12)));
    QCOMPARE(result[u"perplexity"].toDouble(), std::exp(measured));
  }

  // Two windows score twice the tokens; a coarser cache gives another figure
  // and says which coding and how many bits it stores.
  void theCacheCodingEntersTheFigure() {
    const QJsonObject fp16 = perplexity_json(command(QStringLiteral("fp16"), 2 * kWindow));
    const QJsonObject q4 = perplexity_json(command(QStringLiteral("kf8v4"), 2 * kWindow));
    QCOMPARE(fp16[u"windows"].toInt(), 2);
    QCOMPARE(fp16[u"scored_tokens"].toInt(), 2 * (kWindow - 1 - kWindow / 2));
    QCOMPARE(fp16[u"window_perplexities"].toArray().size(), 2);
    QCOMPARE(q4[u"cache_format"].toString(), QStringLiteral("kf8v4"));
    QCOMPARE(q4[u"cache_bits_per_element"].toDouble(), 6.25);
    QVERIFY(fp16[u"perplexity"].toDouble() > 1.0);
    QVERIFY(q4[u"perplexity"].toDouble() != fp16[u"perplexity"].toDouble());
  }

  // The divergence of the first window's scored rows under a Q4 cache from
  // those under an FP16 cache, from the rows `logits --all` prints for each.
  void klDivergenceComparesEachScoredRowWithTheFp16Cache() {
    const QString demo = QStringLiteral(QUIRE_DEMO_MODEL_DIR);
    const QString window = first_window(text_ids(demo));
    const QJsonArray reference = all_rows(demo, window, QStringLiteral("fp16"));
    const QJsonArray coded = all_rows(demo, window, QStringLiteral("q4"));
    QCOMPARE(reference.size(), kWindow);
    QCOMPARE(coded.size(), kWindow);
    const auto [expected, same_top] = divergence_of_rows(reference, coded);

    QStringList arguments = command(QStringLiteral("q4"), kWindow, demo);
    arguments << QStringLiteral("--kl-divergence") << QStringLiteral("--residual-window")
              << QStringLiteral("0");
    const QJsonObject result = perplexity_json(arguments);
    const QJsonObject divergence = result[u"kl_divergence"].toObject();
    const double measured = divergence[u"mean"].toDouble();
    QVERIFY2(
        expected > 0 && std::abs(measured - expected) < 1e-4 * expected,
        qPrintable(QStringLiteral("%1 vs %2").arg(measured, 0, 'g', 9).arg(expected, 0, 'g', 9)));
    QVERIFY(divergence[u"largest"].toDouble() >= measured);
    QCOMPARE(divergence[u"same_top_token"].toDouble(), same_top);
    QCOMPARE(result[u"residual_window"].toInt(), 0);

    // The FP16 cache against itself: nothing.
    QStringList itself = command(QStringLiteral("fp16"), kWindow, demo);
    itself << QStringLiteral("--kl-divergence");
    const QJsonObject none = perplexity_json(itself)[u"kl_divergence"].toObject();
    QCOMPARE(none[u"mean"].toDouble(), 0.0);
    QCOMPARE(none[u"same_top_token"].toDouble(), 1.0);
  }

  // --reference-model: the divergence of the demo model's EXL2 weights from
  // its FP16 weights, both with an FP16 cache, from the rows `logits --all`
  // prints for each.
  void referenceModelGivesTheDivergenceOfOtherWeights() {
    const QString fp16 = QStringLiteral(QUIRE_DEMO_MODEL_DIR);
    const QString exl2 = QDir(fp16).filePath(QStringLiteral("../exl2-4.0"));
    const QString window = first_window(text_ids(fp16));
    const auto [expected, same_top] =
        divergence_of_rows(all_rows(fp16, window, QStringLiteral("fp16")),
                           all_rows(exl2, window, QStringLiteral("fp16")));

    QStringList arguments = command(QStringLiteral("fp16"), kWindow, exl2);
    arguments << QStringLiteral("--kl-divergence") << QStringLiteral("--reference-model") << fp16;
    const QJsonObject divergence = perplexity_json(arguments)[u"kl_divergence"].toObject();
    const double measured = divergence[u"mean"].toDouble();
    QVERIFY2(
        expected > 0 && std::abs(measured - expected) < 1e-4 * expected,
        qPrintable(QStringLiteral("%1 vs %2").arg(measured, 0, 'g', 9).arg(expected, 0, 'g', 9)));
    QCOMPARE(divergence[u"same_top_token"].toDouble(), same_top);
    QCOMPARE(divergence[u"reference_model"].toString(), fp16);

    // A model against itself as its reference: nothing.
    QStringList itself = command(QStringLiteral("fp16"), kWindow, fp16);
    itself << QStringLiteral("--kl-divergence") << QStringLiteral("--reference-model") << fp16;
    QCOMPARE(perplexity_json(itself)[u"kl_divergence"].toObject()[u"mean"].toDouble(), 0.0);

    // Another vocabulary, and the option without --kl-divergence.
    for (const QStringList& refused :
         {command(QStringLiteral("fp16"), kWindow, fp16)
              << QStringLiteral("--kl-divergence") << QStringLiteral("--reference-model") << model_,
          command(QStringLiteral("fp16"), kWindow, exl2)
              << QStringLiteral("--reference-model") << fp16}) {
      const Run run = run_cli(refused);
      QCOMPARE(run.exit_code, 2);
      QVERIFY2(run.err.contains(QStringLiteral("--reference-model")), qPrintable(run.err));
    }
  }

  // Token by token on pages of 16, most of each window is sealed in Q4
  // pages; the residual window reads the open page from its FP16 copy and
  // the divergence falls.
  void theResidualWindowLowersTheDivergence() {
    const auto divergence = [&](const char* window_slots) {
      QStringList arguments =
          command(QStringLiteral("q4"), 2 * kWindow, QStringLiteral(QUIRE_DEMO_MODEL_DIR));
      arguments << QStringLiteral("--kl-divergence") << QStringLiteral("--page-size")
                << QStringLiteral("16") << QStringLiteral("--chunk") << QStringLiteral("1")
                << QStringLiteral("--residual-window") << QLatin1String(window_slots);
      const QJsonObject result = perplexity_json(arguments);
      [&] { QCOMPARE(result[u"page_size"].toInt(), 16); }();
      return result[u"kl_divergence"].toObject()[u"mean"].toDouble();
    };
    const double without = divergence("0");
    const double with = divergence("1");
    QVERIFY2(with > 0 && with < without,
             qPrintable(QStringLiteral("%1 with, %2 without").arg(with).arg(without)));
  }

  // Without --window a model trained for fewer positions than the default
  // 512 runs in windows of its own length; a longer --window is still refused.
  void defaultWindowIsCutToTheModelsPositions() {
    const QString short_model = root_.filePath(QStringLiteral("positions-256"));
    QCOMPARE(run_cli({QStringLiteral("make-model"), short_model, QStringLiteral("--format"),
                      QStringLiteral("fp16"), QStringLiteral("--max-position-embeddings"),
                      QStringLiteral("256")})
                 .exit_code,
             0);
    const QJsonObject result = perplexity_json(
        {QStringLiteral("perplexity"), short_model, QStringLiteral("--text"), text_,
         QStringLiteral("--max-tokens"), QStringLiteral("512"), QStringLiteral("--json")});
    QCOMPARE(result[u"window"].toInt(), 256);
    QCOMPARE(result[u"windows"].toInt(), 2);
    QCOMPARE(result[u"scored_tokens"].toInt(), 2 * (256 - 1 - 128));

    // The default stays 512 for a model trained for more.
    const QJsonObject longer = perplexity_json(
        {QStringLiteral("perplexity"), model_, QStringLiteral("--text"), text_,
         QStringLiteral("--max-tokens"), QStringLiteral("512"), QStringLiteral("--json")});
    QCOMPARE(longer[u"window"].toInt(), 512);
    QCOMPARE(longer[u"windows"].toInt(), 1);

    const Run explicit_window =
        run_cli({QStringLiteral("perplexity"), short_model, QStringLiteral("--text"), text_,
                 QStringLiteral("--window"), QStringLiteral("512")});
    QCOMPARE(explicit_window.exit_code, 2);
    QCOMPARE(explicit_window.err,
             QStringLiteral("quire-cli: --window 512 is longer than the 256 positions the model "
                            "was trained for\n"));
  }

  void refusesWhatItCannotScore() {
    QStringList too_short = command(QStringLiteral("fp16"), kWindow - 1);
    const Run short_text = run_cli(too_short);
    QCOMPARE(short_text.exit_code, 2);
    QVERIFY2(short_text.err.contains(QStringLiteral("fewer than one --window of 48")),
             qPrintable(short_text.err));
    const Run long_window = run_cli({QStringLiteral("perplexity"), model_, QStringLiteral("--text"),
                                     text_, QStringLiteral("--window"), QStringLiteral("4096")});
    QCOMPARE(long_window.exit_code, 2);
    QVERIFY2(long_window.err.contains(QStringLiteral("longer than the 2048 positions")),
             qPrintable(long_window.err));
    const Run missing = run_cli({QStringLiteral("perplexity"), model_, QStringLiteral("--text"),
                                 root_.filePath(QStringLiteral("absent.txt"))});
    QCOMPARE(missing.exit_code, 2);
    QVERIFY2(missing.err.contains(QStringLiteral("cannot be read")), qPrintable(missing.err));
  }
};

QUIRE_TEST(PerplexityCommandTest)
#include "test_perplexity_command.moc"
