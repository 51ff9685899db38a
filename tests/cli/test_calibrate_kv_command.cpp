// quire-cli calibrate-kv on a model made by make-model: the copy it writes
// loads with calibrated scales (inspect says so), perplexity with an FP8
// cache uses them unless --dynamic-fp8-scales, the original is untouched,
// and an output directory that is in use is refused.

#include <QDir>
#include <QFile>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>
#include <QTest>

#include "cli_run.h"
#include "test_main.h"

namespace {

using cli_test::Run;
using cli_test::run_cli;

QJsonObject json_of(const QStringList& arguments) {
  const Run run = run_cli(arguments);
  if (run.exit_code != 0) qWarning("%s", qPrintable(run.err));
  return QJsonDocument::fromJson(run.out).object();
}

}  // namespace

class CalibrateKvCommandTest : public QObject {
  Q_OBJECT

  QTemporaryDir root_;
  QString model_;
  QString text_;

  // Without the residual window, whose FP16 open page would hold every
  // scored token here: the scales are what is compared.
  QStringList perplexity(const QString& model, const QString& cache) const {
    return {QStringLiteral("perplexity"),        model, QStringLiteral("--text"),  text_,
            QStringLiteral("--window"),          "48",  QStringLiteral("--cache"), cache,
            QStringLiteral("--residual-window"), "0",   QStringLiteral("--json")};
  }

 private slots:
  void initTestCase() {
    model_ = root_.filePath(QStringLiteral("model"));
    QCOMPARE(run_cli({QStringLiteral("make-model"), model_, QStringLiteral("--format"),
                      QStringLiteral("fp16"), QStringLiteral("--seed"), QStringLiteral("4")})
                 .exit_code,
             0);
    text_ = root_.filePath(QStringLiteral("text.txt"));
    QFile file(text_);
    QVERIFY(file.open(QIODevice::WriteOnly));
    for (int i = 0; i < 40; ++i)
      file.write(
          QStringLiteral("A lantern by the river, a stone by the window %1. ").arg(i).toUtf8());
  }

  void calibratedCopyLoadsAndIsUsed_data() {
    QTest::addColumn<QString>("strategy");
    QTest::addColumn<QString>("scheme");
    QTest::addRow("tensor") << "tensor"
                            << "tensor";
    QTest::addRow("head") << "head"
                          << "attn_head";
  }

  void calibratedCopyLoadsAndIsUsed() {
    QFETCH(QString, strategy);
    QFETCH(QString, scheme);
    const QString out = root_.filePath("calibrated-" + strategy);
    const Run run = run_cli({QStringLiteral("calibrate-kv"), model_, QStringLiteral("--text"),
                             text_, QStringLiteral("--out"), out, QStringLiteral("--strategy"),
                             strategy, QStringLiteral("--window"), QStringLiteral("64")});
    QVERIFY2(run.exit_code == 0, qPrintable(run.err));
    QVERIFY(run.out.contains("calibrated 2 layers"));

    const QJsonObject inspected =
        json_of({QStringLiteral("inspect"), out, QStringLiteral("--json")});
    QCOMPARE(inspected[u"kv_scales"].toString(), scheme);
    QVERIFY(inspected[u"kv_scales_note"].toString().startsWith("calibrated FP8 K/V scales"));
    QVERIFY(json_of({QStringLiteral("inspect"), model_, QStringLiteral("--json")})[u"kv_scales"]
                .isNull());

    QFile config(out + "/config.json");
    QVERIFY(config.open(QIODevice::ReadOnly));
    const QJsonObject kv = QJsonDocument::fromJson(config.readAll())
                               .object()[u"quantization_config"]
                               .toObject()[u"kv_cache_scheme"]
                               .toObject();
    QCOMPARE(kv[u"num_bits"].toInt(), 8);
    QCOMPARE(kv[u"type"].toString(), QStringLiteral("float"));
    QCOMPARE(kv[u"strategy"].toString(), scheme);
    QCOMPARE(kv[u"dynamic"].toBool(true), false);
    QCOMPARE(kv[u"symmetric"].toBool(false), true);

    const QJsonObject calibrated = json_of(perplexity(out, QStringLiteral("fp8")));
    QCOMPARE(calibrated[u"fp8_scales"].toString(), QStringLiteral("calibrated"));
    QStringList dynamic_arguments = perplexity(out, QStringLiteral("fp8"));
    dynamic_arguments << QStringLiteral("--dynamic-fp8-scales");
    const QJsonObject dynamic = json_of(dynamic_arguments);
    QCOMPARE(dynamic[u"fp8_scales"].toString(), QStringLiteral("per page"));
    QVERIFY(calibrated[u"perplexity"].toDouble() != dynamic[u"perplexity"].toDouble());
    // The FP16 cache ignores the scales: the copy scores as the original.
    QCOMPARE(json_of(perplexity(out, QStringLiteral("fp16")))[u"perplexity"].toDouble(),
             json_of(perplexity(model_, QStringLiteral("fp16")))[u"perplexity"].toDouble());
    QVERIFY(json_of(perplexity(out, QStringLiteral("q8")))[u"fp8_scales"].isNull());
  }

  void outputInUseIsRefused() {
    const QString out = root_.filePath(QStringLiteral("occupied"));
    QVERIFY(QDir().mkpath(out));
    QFile(out + "/keep.txt").open(QIODevice::WriteOnly);
    const Run run = run_cli({QStringLiteral("calibrate-kv"), model_, QStringLiteral("--text"),
                             text_, QStringLiteral("--out"), out});
    QVERIFY(run.exit_code != 0);
    QVERIFY2(run.err.contains("already exists and is not an empty directory"), qPrintable(run.err));
    const Run missing =
        run_cli({QStringLiteral("calibrate-kv"), model_, QStringLiteral("--text"), text_});
    QVERIFY(missing.exit_code != 0);
    QVERIFY2(missing.err.contains("--out"), qPrintable(missing.err));
  }
};

QUIRE_TEST(CalibrateKvCommandTest)
#include "test_calibrate_kv_command.moc"
