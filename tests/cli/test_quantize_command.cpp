// quire-cli quantize: an FP16 model made by make-model becomes an EXL2 model
// that the engine loads (inspect reports EXL2 layers) and whose logits stay
// close to the FP16 model's; bad options and inputs give exit status 2 and one
// line on standard error.

#include <QDir>
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

const QString kTokens = QStringLiteral("1,17,290,33,401,64,128,5,77,300");

// The last position's logits.
std::vector<double> logits_of(const QString& dir) {
  return cli_test::last_logits(dir, kTokens);
}

double max_abs(const std::vector<double>& values) {
  double largest = 0.0;
  for (const double value : values)
    largest = std::max(largest, std::abs(value));
  return largest;
}

}  // namespace

class QuantizeCommandTest : public QObject {
  Q_OBJECT

  QTemporaryDir root_;
  QString fp16_;  // its own head
  QString tied_;  // the embeddings serve as the head

  QString quantize(const QString& in, const QString& name, const QStringList& options) {
    const QString out = root_.filePath(name);
    const Run run = run_cli(QStringList{QStringLiteral("quantize"), in, out} + options);
    return run.exit_code == 0 && run.err.isEmpty() && run.out.count('\n') == 1 ? out : QString();
  }

 private slots:
  void initTestCase() {
    QVERIFY(root_.isValid());
    fp16_ = root_.filePath(QStringLiteral("fp16"));
    tied_ = root_.filePath(QStringLiteral("tied"));
    QCOMPARE(run_cli({QStringLiteral("make-model"), fp16_, QStringLiteral("--format"),
                      QStringLiteral("fp16"), QStringLiteral("--no-tie"), QStringLiteral("--seed"),
                      QStringLiteral("5")})
                 .exit_code,
             0);
    QCOMPARE(run_cli({QStringLiteral("make-model"), tied_, QStringLiteral("--format"),
                      QStringLiteral("fp16"), QStringLiteral("--tie"),
                      QStringLiteral("--intermediate"), QStringLiteral("352")})
                 .exit_code,
             0);
  }

  void quantizesEveryLinearLayerAndTheHead() {
    const QString out = quantize(fp16_, QStringLiteral("exl2"),
                                 {QStringLiteral("--format"), QStringLiteral("exl2:4.0")});
    QVERIFY(!out.isEmpty());

    const Run inspect = run_cli({QStringLiteral("inspect"), out, QStringLiteral("--json")});
    QCOMPARE(inspect.exit_code, 0);
    const QJsonObject description = QJsonDocument::fromJson(inspect.out).object();
    const QJsonArray layers = description[u"layer_formats"].toArray();
    QCOMPARE(layers.size(), 2);
    for (const QJsonValue layer : layers) {
      for (const char* name :
           {"q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"}) {
        const QJsonObject linear = layer.toObject()[QLatin1String(name)].toObject();
        QCOMPARE(linear[u"format"].toString(), QStringLiteral("exl2"));
        QVERIFY2(std::abs(linear[u"bits_per_weight"].toDouble() - 4.0) < 0.5, name);
      }
    }
    const QJsonObject head = description[u"head"].toObject();
    QCOMPARE(head[u"tied"].toBool(), false);
    QCOMPARE(head[u"format"].toString(), QStringLiteral("exl2"));
    QVERIFY(head[u"bits_per_weight"].toDouble() > 5.9);  // --head-bits' default, 6

    const QJsonObject quantization =
        json_file(out + QStringLiteral("/config.json"))[u"quantization_config"].toObject();
    QCOMPARE(quantization[u"quant_method"].toString(), QStringLiteral("exl2"));
    QCOMPARE(quantization[u"bits"].toDouble(), 4.0);
    QCOMPARE(quantization[u"head_bits"].toInt(), 6);
    // The tokenizer and the other configuration files come along unchanged.
    for (const QString& name :
         {QStringLiteral("tokenizer.model"), QStringLiteral("tokenizer_config.json"),
          QStringLiteral("generation_config.json")}) {
      QCOMPARE(file_bytes(out + u'/' + name), file_bytes(fp16_ + u'/' + name));
    }
  }

  void logitsStayCloseToTheFp16Model() {
    const std::vector<double> reference = logits_of(fp16_);
    QCOMPARE(reference.size(), std::size_t{512});
    QVERIFY(max_abs(reference) > 0.5);

    const QString q8 = quantize(fp16_, QStringLiteral("q8"),
                                {QStringLiteral("--format"), QStringLiteral("exl2:8.0"),
                                 QStringLiteral("--head-bits"), QStringLiteral("8")});
    const QString q4 = quantize(fp16_, QStringLiteral("q4"),
                                {QStringLiteral("--format"), QStringLiteral("exl2:4.0")});
    const QString q3 = quantize(fp16_, QStringLiteral("q3"),
                                {QStringLiteral("--format"), QStringLiteral("exl2:3.0")});
    QVERIFY(!q8.isEmpty() && !q4.isEmpty() && !q3.isEmpty());
    const std::vector<double> logits8 = logits_of(q8);
    const std::vector<double> logits4 = logits_of(q4);
    const std::vector<double> logits3 = logits_of(q3);
    QCOMPARE(logits8.size(), reference.size());
    QCOMPARE(logits4.size(), reference.size());
    QCOMPARE(logits3.size(), reference.size());

    // Round-to-nearest with scales that never clip keeps every weight within
    // half a step, about 1/2^bits of its column's range. This random model
    // (unit-variance embeddings, no training to make it smooth) passes that
    // noise through two layers and the head; measured, the largest logit
    // difference relative to the largest FP16 logit is 0.013 at 8 bits, 0.23
    // at 4.0 and 0.61 at 3.0. The bounds leave room for other seeds and
    // compilers, and the order must hold: more bits, closer logits.
    const double error8 = relative_logit_error(reference, logits8);
    const double error4 = relative_logit_error(reference, logits4);
    const double error3 = relative_logit_error(reference, logits3);
    const QString errors =
        QStringLiteral("8 bits %1, 4.0 bits %2, 3.0 bits %3").arg(error8).arg(error4).arg(error3);
    QVERIFY2(error8 < 0.03, qPrintable(errors));
    QVERIFY2(error4 < 0.35, qPrintable(errors));
    QVERIFY2(error8 < error4 && error4 < error3, qPrintable(errors));
  }

  void tiedModelKeepsItsEmbeddingsAsTheHead() {
    const QString out = quantize(tied_, QStringLiteral("tied-exl2"),
                                 {QStringLiteral("--format"), QStringLiteral("exl2:3.5"),
                                  QStringLiteral("--group-size"), QStringLiteral("64")});
    QVERIFY(!out.isEmpty());
    const Run inspect = run_cli({QStringLiteral("inspect"), out, QStringLiteral("--json")});
    QCOMPARE(inspect.exit_code, 0);
    const QJsonObject description = QJsonDocument::fromJson(inspect.out).object();
    QCOMPARE(description[u"head"].toObject()[u"tied"].toBool(), true);
    const QJsonObject down =
        description[u"layer_formats"].toArray()[0].toObject()[u"down_proj"].toObject();
    QCOMPARE(down[u"format"].toString(), QStringLiteral("exl2"));
    QVERIFY(std::abs(down[u"bits_per_weight"].toDouble() - 3.5) < 0.5);
    QCOMPARE(logits_of(out).size(), std::size_t{512});
  }

  void sameSeedGivesTheSameFile() {
    const QStringList options{QStringLiteral("--format"), QStringLiteral("exl2:5.0"),
                              QStringLiteral("--seed"), QStringLiteral("11")};
    const QString a = quantize(fp16_, QStringLiteral("seed-a"), options);
    const QString b = quantize(fp16_, QStringLiteral("seed-b"), options);
    QVERIFY(!a.isEmpty() && !b.isEmpty());
    const QByteArray bytes = file_bytes(a + QStringLiteral("/model.safetensors"));
    QVERIFY(!bytes.isEmpty());
    QCOMPARE(file_bytes(b + QStringLiteral("/model.safetensors")), bytes);
  }

  void rejectsBadOptionsAndInputs() {
    const QString quantized = quantize(fp16_, QStringLiteral("again"),
                                       {QStringLiteral("--format"), QStringLiteral("exl2:4.0")});
    QVERIFY(!quantized.isEmpty());
    const QString fresh = root_.filePath(QStringLiteral("never"));
    const QStringList quantize_to{QStringLiteral("quantize"), fp16_, fresh};
    const QList<QStringList> cases{
        quantize_to,  // no --format
        quantize_to + QStringList{QStringLiteral("--format"), QStringLiteral("gptq")},
        quantize_to + QStringList{QStringLiteral("--format"), QStringLiteral("exl2:9")},
        quantize_to + QStringList{QStringLiteral("--format"), QStringLiteral("exl2:four")},
        quantize_to + QStringList{QStringLiteral("--format"), QStringLiteral("exl2:4.0"),
                                  QStringLiteral("--head-bits"), QStringLiteral("7")},
        quantize_to + QStringList{QStringLiteral("--format"), QStringLiteral("exl2:4.0"),
                                  QStringLiteral("--group-size"), QStringLiteral("48")},
        // OUT is not empty.
        QStringList{QStringLiteral("quantize"), fp16_, quantized, QStringLiteral("--format"),
                    QStringLiteral("exl2:4.0")},
        // IN is quantized already.
        QStringList{QStringLiteral("quantize"), quantized, fresh, QStringLiteral("--format"),
                    QStringLiteral("exl2:4.0")},
        // IN does not exist.
        QStringList{QStringLiteral("quantize"), root_.filePath(QStringLiteral("missing")), fresh,
                    QStringLiteral("--format"), QStringLiteral("exl2:4.0")},
    };
    for (const QStringList& arguments : cases) {
      const Run run = run_cli(arguments);
      QVERIFY2(run.exit_code == 2, qPrintable(arguments.join(u' ')));
      QVERIFY2(run.err.trimmed().count(u'\n') == 0 && !run.err.trimmed().isEmpty(),
               qPrintable(run.err));
      QVERIFY2(run.out.isEmpty(), run.out.constData());
    }
    QVERIFY(!QDir(fresh).exists());
  }
};

QUIRE_TEST(QuantizeCommandTest)
#include "test_quantize_command.moc"
