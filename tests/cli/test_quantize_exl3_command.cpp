// quire-cli quantize --format exl3: an FP16 model made by make-model becomes
// an EXL3 model the engine loads, in exllamav3's layout (config.json's
// quantization_config, quantization_config.json's tensor_storage), with
// exllamav3's mixed widths and, with --calibration, calibration rows; its
// logits stay close to the FP16 model's; bad options and inputs give exit
// status 2 and one line on standard error. Models of one layer, so that the
// trellis search takes seconds.

#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>
#include <QTest>
#include <algorithm>
#include <cmath>
#include <vector>

#include "cli_run.h"
#include "test_main.h"

namespace {

using cli_test::file_bytes;
using cli_test::json_file;
using cli_test::relative_logit_error;
using cli_test::Run;
using cli_test::run_cli;

const QString kTokens = QStringLiteral("1,17,290,33,101,64,128,5,77,300");

std::vector<double> logits_of(const QString& dir) {
  return cli_test::last_logits(dir, kTokens);
}

}  // namespace

class QuantizeExl3CommandTest : public QObject {
  Q_OBJECT

  QTemporaryDir root_;
  QString fp16_;  // its own head
  QString tied_;  // the embeddings serve as the head
  QString calibrated_;
  Run calibrated_run_;

 private slots:
  void initTestCase() {
    QVERIFY(root_.isValid());
    fp16_ = root_.filePath(QStringLiteral("fp16"));
    tied_ = root_.filePath(QStringLiteral("tied"));
    for (const auto& [dir, tie] : {std::pair{fp16_, "--no-tie"}, std::pair{tied_, "--tie"}}) {
      QCOMPARE(run_cli({QStringLiteral("make-model"), dir, QStringLiteral("--format"),
                        QStringLiteral("fp16"), QStringLiteral("--layers"), QStringLiteral("1"),
                        QStringLiteral("--vocab"), QStringLiteral("320"), QLatin1String(tie),
                        QStringLiteral("--seed"), QStringLiteral("5")})
                   .exit_code,
               0);
    }
    const QString text = root_.filePath(QStringLiteral("calibration.txt"));
    QFile file(text);
    QVERIFY(file.open(QIODevice::WriteOnly));
    for (int i = 0; i < 80; ++i)
      file.write(QStringLiteral("The river %1 runs past the stone wall of %2. ")
                     .arg(i)
                     .arg(i * 7)
                     .toUtf8());
    file.close();
    calibrated_ = root_.filePath(QStringLiteral("calibrated"));
    calibrated_run_ =
        run_cli({QStringLiteral("quantize"), fp16_, calibrated_, QStringLiteral("--format"),
                 QStringLiteral("exl3:3.5"), QStringLiteral("--head-bits"), QStringLiteral("4"),
                 QStringLiteral("--calibration"), text, QStringLiteral("--calibration-tokens"),
                 QStringLiteral("600")});
    QCOMPARE(calibrated_run_.exit_code, 0);
  }

  // Every projection and the head in EXL3, in exllamav3's files, the widths
  // as exllamav3 allocates 3.5 bits: attention raised to 4 before the MLP.
  void writesExllamav3sLayout() {
    QCOMPARE(calibrated_run_.out.count('\n'), 1);
    QVERIFY(calibrated_run_.out.contains("calibrated on 600 tokens"));
    // A line per tensor on standard error, after the calibration's.
    QVERIFY2(calibrated_run_.err.contains(QStringLiteral("[8/8] lm_head: 4 bits")),
             qPrintable(calibrated_run_.err));
    QVERIFY(calibrated_run_.err.contains(QStringLiteral("calibration: 600 of 600 tokens")));

    const Run inspect = run_cli({QStringLiteral("inspect"), calibrated_, QStringLiteral("--json")});
    QCOMPARE(inspect.exit_code, 0);
    const QJsonObject description = QJsonDocument::fromJson(inspect.out).object();
    const QJsonObject layer = description[u"layer_formats"].toArray()[0].toObject();
    for (const char* name :
         {"q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"}) {
      QCOMPARE(layer[QLatin1String(name)].toObject()[u"format"].toString(), QStringLiteral("exl3"));
    }
    QCOMPARE(description[u"head"].toObject()[u"format"].toString(), QStringLiteral("exl3"));

    const QJsonObject quantization =
        json_file(calibrated_ + QStringLiteral("/config.json"))[u"quantization_config"].toObject();
    QCOMPARE(quantization[u"quant_method"].toString(), QStringLiteral("exl3"));
    QCOMPARE(quantization[u"codebook"].toString(), QStringLiteral("mul1"));
    QCOMPARE(quantization[u"head_bits"].toInt(), 4);
    QCOMPARE(quantization[u"out_scales"].toString(), QStringLiteral("auto"));
    QCOMPARE(quantization[u"calibration"].toObject()[u"rows"].toInt(), 1);
    QCOMPARE(quantization[u"calibration"].toObject()[u"cols"].toInt(), 2048);
    const double bits = quantization[u"bits"].toDouble();
    QVERIFY2(bits > 3.4 && bits <= 3.5, qPrintable(QString::number(bits)));

    const QJsonObject storage =
        json_file(calibrated_ + QStringLiteral("/quantization_config.json"))[u"tensor_storage"]
            .toObject();
    const auto width = [&](const char* module) {
      return storage[QLatin1String(module)].toObject()[u"bits_per_weight"].toInt();
    };
    const int attention = width("model.layers.0.self_attn.q_proj");
    QCOMPARE(width("model.layers.0.self_attn.k_proj"), attention);
    QCOMPARE(width("model.layers.0.self_attn.v_proj"), attention);
    QVERIFY(attention >= 4 && width("model.layers.0.self_attn.o_proj") >= 4);
    QCOMPARE(width("model.layers.0.mlp.gate_proj"), 3);
    QCOMPARE(width("model.layers.0.mlp.up_proj"), 3);
    QCOMPARE(width("lm_head"), 4);
    const QJsonObject q = storage[u"model.layers.0.self_attn.q_proj"].toObject();
    QCOMPARE(q[u"quant_format"].toString(), QStringLiteral("exl3"));
    QCOMPARE(q[u"mul1_multiplier"].toInteger(), qint64(0x83DCD12D));
    for (const char* part : {"trellis", "suh", "svh", "mul1"}) {
      QVERIFY2(q[u"stored_tensors"].toObject().contains(
                   QStringLiteral("model.layers.0.self_attn.q_proj.") + QLatin1String(part)),
               part);
    }
    QVERIFY(storage.contains(QStringLiteral("model.embed_tokens")));
    for (const QString& name :
         {QStringLiteral("tokenizer.model"), QStringLiteral("tokenizer_config.json"),
          QStringLiteral("generation_config.json")}) {
      QCOMPARE(file_bytes(calibrated_ + u'/' + name), file_bytes(fp16_ + u'/' + name));
    }
  }

  // A random model passes the coding noise of every weight through to its
  // logits undamped; measured, the largest difference relative to the
  // largest FP16 logit is 0.18 at 3.5 bits with the head at 4, and 0.029 at
  // 4 bits with the FP16 embeddings as the head (EXL2 at 4.0 bits, the head
  // at 6: 0.21 on the same model).
  void logitsStayCloseToTheFp16Model() {
    const std::vector<double> reference = logits_of(fp16_);
    QCOMPARE(reference.size(), std::size_t{320});
    const double calibrated = relative_logit_error(reference, logits_of(calibrated_));
    QVERIFY2(calibrated < 0.3, qPrintable(QString::number(calibrated)));

    // MCG at 4 bits, the tied embeddings as the head, output scales.
    const QString mcg = root_.filePath(QStringLiteral("mcg"));
    const Run run = run_cli({QStringLiteral("quantize"), tied_, mcg, QStringLiteral("--format"),
                             QStringLiteral("exl3:4:mcg"), QStringLiteral("--out-scales"),
                             QStringLiteral("always")});
    QCOMPARE(run.exit_code, 0);
    QVERIFY(!run.out.contains("calibrated"));
    const QJsonObject quantization =
        json_file(mcg + QStringLiteral("/config.json"))[u"quantization_config"].toObject();
    QCOMPARE(quantization[u"codebook"].toString(), QStringLiteral("mcg"));
    QCOMPARE(quantization[u"head_bits"].toInt(), 16);
    QCOMPARE(quantization[u"out_scales"].toString(), QStringLiteral("always"));
    QCOMPARE(quantization[u"bits"].toDouble(), 4.0);
    QVERIFY(!quantization.contains(QStringLiteral("calibration")));
    QVERIFY(run.err.contains(QStringLiteral("output scales")));
    const double error = relative_logit_error(logits_of(tied_), logits_of(mcg));
    QVERIFY2(error < 0.06, qPrintable(QString::number(error)));
  }

  void rejectsBadOptionsAndInputs() {
    const QString fresh = root_.filePath(QStringLiteral("never"));
    const QStringList to{QStringLiteral("quantize"), fp16_, fresh, QStringLiteral("--format")};
    const QList<QStringList> cases{
        to + QStringList{QStringLiteral("exl3:4.0:mul2")},
        to + QStringList{QStringLiteral("exl3:0.5")},
        to + QStringList{QStringLiteral("exl3:8.5")},
        to + QStringList{QStringLiteral("exl3:")},
        to + QStringList{QStringLiteral("exl3:4"), QStringLiteral("--head-bits"),
                         QStringLiteral("12")},
        to + QStringList{QStringLiteral("exl3:4"), QStringLiteral("--group-size"),
                         QStringLiteral("64")},
        to + QStringList{QStringLiteral("exl3:4"), QStringLiteral("--out-scales"),
                         QStringLiteral("sometimes")},
        to + QStringList{QStringLiteral("exl3:4"), QStringLiteral("--calibration"),
                         root_.filePath(QStringLiteral("absent.txt"))},
        to + QStringList{QStringLiteral("exl3:4"), QStringLiteral("--calibration-tokens"),
                         QStringLiteral("100")},
        to + QStringList{QStringLiteral("exl2:4"), QStringLiteral("--calibration"),
                         root_.filePath(QStringLiteral("calibration.txt"))},
        // IN is quantized already; OUT is not empty.
        QStringList{QStringLiteral("quantize"), calibrated_, fresh, QStringLiteral("--format"),
                    QStringLiteral("exl3:4")},
        QStringList{QStringLiteral("quantize"), fp16_, calibrated_, QStringLiteral("--format"),
                    QStringLiteral("exl3:4")},
    };
    for (const QStringList& arguments : cases) {
      const Run run = run_cli(arguments);
      QVERIFY2(run.exit_code == 2, qPrintable(arguments.join(u' ')));
      QVERIFY2(run.err.trimmed().count(u'\n') == 0 && !run.err.trimmed().isEmpty(),
               qPrintable(run.err));
      QVERIFY2(run.out.isEmpty(), run.out.constData());
    }
    QVERIFY(!QFile::exists(fresh));
  }
};

QUIRE_TEST(QuantizeExl3CommandTest)
#include "test_quantize_exl3_command.moc"
