// quire-cli logits of small random models against an independent reference:
// tests/tools/reference_forward.py (PyTorch, following transformers' modeling
// code in float64) computed the fixtures in tests/data/reference/ from models
// made by `quire-cli make-model` with the same arguments.
//
// Tolerance: |quire - reference| <= 2e-4 * max|reference row| + 1e-5 (5e-4
// for EXL2 weights, whose batched products may round their inputs to 16
// bits; see the test). Quire
// computes in FP32 (weights dequantized exactly, FP32 accumulation) against a
// float64 reference that rounds K and V to FP16 as Quire's FP16 cache does;
// what remains is FP32 rounding through a few layers, about 1e-6 relative,
// so the bound leaves room for accumulation order while catching any real
// error (a wrong rotary pair, mask or scale moves logits by 1e-2 or more).

#include <QCryptographicHash>
#include <QDir>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QTemporaryDir>
#include <QTest>
#include <cmath>

#include "test_main.h"

using namespace Qt::StringLiterals;

namespace {

struct Run {
  int exit_code = -1;
  QByteArray out;
  QString err;
};

Run run_cli(const QStringList& arguments) {
  QProcess process;
  process.start(QStringLiteral(QUIRE_CLI_PATH), arguments);
  process.waitForFinished(300000);
  return {process.exitStatus() == QProcess::NormalExit ? process.exitCode() : -1,
          process.readAllStandardOutput(), QString::fromUtf8(process.readAllStandardError())};
}

QJsonObject load_fixture(const QString& path) {
  QFile file(path);
  file.open(QIODevice::ReadOnly);
  return QJsonDocument::fromJson(file.readAll()).object();
}

}  // namespace

class GoldenLogitsTest : public QObject {
  Q_OBJECT

  QTemporaryDir root_;

 private slots:
  void matchesTheReference_data() {
    QTest::addColumn<QString>("fixture");
    const QDir dir(QStringLiteral(QUIRE_TEST_DATA_DIR "/reference"));
    const QStringList files = dir.entryList({QStringLiteral("*.json")}, QDir::Files, QDir::Name);
    QVERIFY(files.size() >= 12);
    for (const QString& file : files) {
      // Prompts with images (gemma3-vision-*, make_vision_fixtures.sh) need
      // the images given to the model; their own test reads them.
      if (load_fixture(dir.filePath(file)).contains(u"images")) continue;
      QTest::newRow(qPrintable(file.chopped(5))) << dir.filePath(file);
    }
  }

  void matchesTheReference() {
    QFETCH(QString, fixture);
    const QJsonObject expected = load_fixture(fixture);
    const QString model = root_.filePath(expected[u"name"].toString());

    QStringList make{QStringLiteral("make-model"), model};
    // @CONFIGS@: the published config.json files of tests/data/configs.
    for (const QJsonValue& argument : expected[u"make_model"].toArray())
      make << argument.toString().replace(u"@CONFIGS@"_s,
                                          QStringLiteral(QUIRE_TEST_DATA_DIR "/configs"));
    const Run made = run_cli(make);
    QVERIFY2(made.exit_code == 0, qPrintable(made.err));

    // The fixture belongs to exactly these files.
    const QJsonObject digests = expected[u"sha256"].toObject();
    for (auto it = digests.begin(); it != digests.end(); ++it) {
      QFile file(model + u'/' + it.key());
      QVERIFY(file.open(QIODevice::ReadOnly));
      const QString digest = QString::fromLatin1(
          QCryptographicHash::hash(file.readAll(), QCryptographicHash::Sha256).toHex());
      QVERIFY2(
          digest == it.value().toString(),
          qPrintable(
              "make-model now writes a different " + it.key() +
              "; regenerate tests/data/reference with tests/tools/make_reference_fixtures.sh"));
    }

    QStringList tokens;
    for (const QJsonValue& token : expected[u"tokens"].toArray())
      tokens << QString::number(token.toInt());
    const Run run = run_cli({QStringLiteral("logits"), model, QStringLiteral("--tokens"),
                             tokens.join(u','), QStringLiteral("--all")});
    QVERIFY2(run.exit_code == 0, qPrintable(run.err));
    const QJsonArray actual = QJsonDocument::fromJson(run.out).object()[u"logits"].toArray();
    QCOMPARE(actual.size(), tokens.size());

    // EXL2 products of more than four rows take 16-bit inputs where the
    // processor has AVX-512 VNNI (linear_exl2_batched.cpp): each input is
    // rounded to 1/65534 of the largest in its group, about the rounding of
    // the FP16 activations exllamav2 multiplies these weights with, and that
    // moves these logits by up to 2.4e-4 of the largest (gemma2-exl2; 2e-5
    // on the float path).
    const QJsonObject config = load_fixture(model + QStringLiteral("/config.json"));
    const bool exl2 =
        config[u"quantization_config"].toObject()[u"quant_method"].toString() == u"exl2";
    const double relative_bound = exl2 ? 5e-4 : 2e-4;
    const QJsonArray positions = expected[u"positions"].toArray();
    const QJsonArray rows = expected[u"logits"].toArray();
    double worst = 0.0;
    for (qsizetype i = 0; i < positions.size(); ++i) {
      const QJsonArray want = rows[i].toArray();
      const QJsonArray got = actual[positions[i].toInt()].toArray();
      QCOMPARE(got.size(), want.size());
      double scale = 0.0;
      for (const QJsonValue& value : want)
        scale = std::max(scale, std::fabs(value.toDouble()));
      const double bound = relative_bound * scale + 1e-5;
      for (qsizetype v = 0; v < want.size(); ++v) {
        const double difference = std::fabs(got[v].toDouble() - want[v].toDouble());
        worst = std::max(worst, difference / scale);
        QVERIFY2(difference <= bound,
                 qPrintable(QString("position %1, logit %2: %3 vs reference %4")
                                .arg(positions[i].toInt())
                                .arg(v)
                                .arg(got[v].toDouble())
                                .arg(want[v].toDouble())));
      }
    }
    qInfo("largest difference: %.2e of the largest logit", worst);

    // The greedy continuation the reference chose (make_reference_fixtures.sh
    // keeps only continuations whose every step wins by a clear margin).
    const QJsonArray greedy = expected[u"greedy"].toArray();
    QVERIFY(!greedy.isEmpty());
    const Run generated = run_cli(
        {QStringLiteral("generate"), model, QStringLiteral("--tokens"), tokens.join(u','),
         QStringLiteral("--greedy"), QStringLiteral("--ignore-eos"),
         QStringLiteral("--repetition-penalty"), QStringLiteral("1"), QStringLiteral("--max-new"),
         QString::number(greedy.size()), QStringLiteral("--json")});
    QVERIFY2(generated.exit_code == 0, qPrintable(generated.err));
    const QJsonArray chosen = QJsonDocument::fromJson(generated.out).object()[u"tokens"].toArray();
    QCOMPARE(chosen, greedy);
  }
};

QUIRE_TEST(GoldenLogitsTest)
#include "test_golden_logits.moc"
