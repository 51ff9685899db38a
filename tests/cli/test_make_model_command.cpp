// quire-cli make-model: writes a model directory and says so on one line;
// invalid options and a non-empty OUT give exit status 2 and one line on
// standard error, and write nothing.

#include <QDir>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QTemporaryDir>
#include <QTest>

#include "test_main.h"

namespace {

struct Run {
  int exit_code = -1;
  QString out;
  QString err;
};

Run make_model(const QStringList& arguments) {
  QProcess process;
  process.start(QStringLiteral(QUIRE_CLI_PATH),
                QStringList{QStringLiteral("make-model")} + arguments);
  if (!process.waitForStarted()) return {};
  process.closeWriteChannel();
  process.waitForFinished(120000);
  return {process.exitStatus() == QProcess::NormalExit ? process.exitCode() : -1,
          QString::fromUtf8(process.readAllStandardOutput()),
          QString::fromUtf8(process.readAllStandardError())};
}

QJsonObject config_of(const QString& dir) {
  QFile file(dir + QStringLiteral("/config.json"));
  return file.open(QIODevice::ReadOnly) ? QJsonDocument::fromJson(file.readAll()).object()
                                        : QJsonObject();
}

}  // namespace

class MakeModelCommandTest : public QObject {
  Q_OBJECT

 private slots:
  void helpListsTheCommand() {
    QProcess process;
    process.start(QStringLiteral(QUIRE_CLI_PATH), {QStringLiteral("--help")});
    QVERIFY(process.waitForFinished(60000));
    QVERIFY(
        QString::fromUtf8(process.readAllStandardOutput()).contains(QStringLiteral("make-model")));
  }

  void writesAModelAndSaysSoOnOneLine() {
    QTemporaryDir root;
    QVERIFY(root.isValid());
    const QString out = root.filePath(QStringLiteral("qwen"));
    const Run run = make_model({out, "--arch", "qwen2", "--format", "exl2:4.0", "--layers", "1",
                                "--vocab", "400", "--sliding-window", "64", "--seed", "9"});
    QCOMPARE(run.exit_code, 0);
    QVERIFY2(run.err.isEmpty(), qPrintable(run.err));
    QCOMPARE(run.out.count(u'\n'), 1);
    QVERIFY2(run.out.contains(out) && run.out.contains(QStringLiteral("exl2:4.0")) &&
                 run.out.contains(QStringLiteral("bytes")),
             qPrintable(run.out));
    const QStringList files = QDir(out).entryList(QDir::Files, QDir::Name);
    QCOMPARE(files, (QStringList{"config.json", "generation_config.json", "model.safetensors",
                                 "tokenizer.model", "tokenizer_config.json"}));
    const QJsonObject config = config_of(out);
    QCOMPARE(config["architectures"].toArray().first().toString(),
             QStringLiteral("Qwen2ForCausalLM"));
    QCOMPARE(config["num_hidden_layers"].toInt(), 1);
    QCOMPARE(config["vocab_size"].toInt(), 400);
    QCOMPARE(config["sliding_window"].toInt(), 64);
    QCOMPARE(config["quantization_config"].toObject()["bits"].toDouble(), 4.0);
  }

  void passesEveryOptionThrough() {
    QTemporaryDir root;
    QVERIFY(root.isValid());
    const QString out = root.filePath(QStringLiteral("gptq"));
    const Run run = make_model({out,
                                "--format",
                                "gptq",
                                "--gptq-v2",
                                "--gptq-no-act-order",
                                "--shards",
                                "2",
                                "--no-tie",
                                "--hidden",
                                "256",
                                "--heads",
                                "2",
                                "--kv-heads",
                                "1",
                                "--head-dim",
                                "64",
                                "--intermediate",
                                "512",
                                "--rope-scaling",
                                "linear:2",
                                "--rope-theta",
                                "500000",
                                "--gptq-group-size",
                                "64"});
    QCOMPARE(run.exit_code, 0);
    QVERIFY(QFile::exists(out + QStringLiteral("/model.safetensors.index.json")));
    QVERIFY(QFile::exists(out + QStringLiteral("/model-00002-of-00002.safetensors")));
    const QJsonObject config = config_of(out);
    QCOMPARE(config["hidden_size"].toInt(), 256);
    QCOMPARE(config["num_key_value_heads"].toInt(), 1);
    QCOMPARE(config["head_dim"].toInt(), 64);
    QCOMPARE(config["intermediate_size"].toInt(), 512);
    QCOMPARE(config["rope_theta"].toDouble(), 500000.0);
    QCOMPARE(config["rope_scaling"].toObject()["factor"].toDouble(), 2.0);
    QCOMPARE(config["tie_word_embeddings"].toBool(), false);
    const QJsonObject quantization = config["quantization_config"].toObject();
    QCOMPARE(quantization["checkpoint_format"].toString(), QStringLiteral("gptq_v2"));
    QCOMPARE(quantization["desc_act"].toBool(), false);
    QCOMPARE(quantization["group_size"].toInt(), 64);
  }

  // exllamav3's layout: config.json's quantization_config, and beside it
  // quantization_config.json with each module's stored tensors, the
  // quantized ones' bits and codebook multiplier.
  void writesExl3AsExllamaDoes() {
    QTemporaryDir root;
    const QString out = root.filePath(QStringLiteral("exl3"));
    const Run run = make_model(
        {out, "--arch", "qwen2", "--format", "exl3:2.5:mcg", "--head-bits", "5", "--layers", "1"});
    QCOMPARE(run.exit_code, 0);
    QFile config_file(out + QStringLiteral("/config.json"));
    QVERIFY(config_file.open(QIODevice::ReadOnly));
    const QJsonObject quantization =
        QJsonDocument::fromJson(config_file.readAll()).object()["quantization_config"].toObject();
    QCOMPARE(quantization["quant_method"].toString(), QStringLiteral("exl3"));
    QCOMPARE(quantization["bits"].toDouble(), 2.5);
    QCOMPARE(quantization["head_bits"].toInt(), 5);
    QCOMPARE(quantization["codebook"].toString(), QStringLiteral("mcg"));
    QFile storage_file(out + QStringLiteral("/quantization_config.json"));
    QVERIFY(storage_file.open(QIODevice::ReadOnly));
    const QJsonObject storage = QJsonDocument::fromJson(storage_file.readAll()).object();
    QCOMPARE(storage["quant_method"].toString(), QStringLiteral("exl3"));
    const QJsonObject modules = storage["tensor_storage"].toObject();
    const QJsonObject k = modules["model.layers.0.self_attn.k_proj"].toObject();
    QCOMPARE(k["quant_format"].toString(), QStringLiteral("exl3"));
    const int bits = k["bits_per_weight"].toInt();
    QVERIFY(bits == 2 || bits == 3);
    QCOMPARE(k["mcg_multiplier"].toInteger(), qint64(0xCBAC1FED));
    const QJsonObject tensors = k["stored_tensors"].toObject();
    // Qwen2's K projection: 128 inputs, 64 outputs padded to 128; a bias.
    const QJsonObject trellis = tensors["model.layers.0.self_attn.k_proj.trellis"].toObject();
    QCOMPARE(trellis["shape"].toArray(), (QJsonArray{8, 8, 16 * bits}));
    QCOMPARE(trellis["dtype"].toString(), QStringLiteral("torch.int16"));
    QCOMPARE(tensors["model.layers.0.self_attn.k_proj.bias"].toObject()["shape"].toArray(),
             QJsonArray{128});
    QCOMPARE(modules["lm_head"].toObject()["bits_per_weight"].toInt(), 5);
    QVERIFY(!modules["model.layers.0.input_layernorm"].toObject().contains("quant_format"));
  }

  void rejectsBadOptions_data() {
    QTest::addColumn<QStringList>("arguments");
    QTest::addColumn<QString>("mentions");
    QTest::newRow("format") << QStringList{"--format", "fp32"} << "--format";
    QTest::newRow("not a number") << QStringList{"--layers", "two"} << "--layers";
    QTest::newRow("no layers") << QStringList{"--layers", "0"} << "--layers";
    QTest::newRow("kv heads") << QStringList{"--kv-heads", "3"} << "--kv-heads";
    QTest::newRow("head dim") << QStringList{"--head-dim", "48"} << "--head-dim";
    QTest::newRow("vocab") << QStringList{"--vocab", "100"} << "--vocab";
    QTest::newRow("rope") << QStringList{"--rope-scaling", "cubic"} << "--rope-scaling";
    QTest::newRow("rope theta") << QStringList{"--rope-theta", "fast"} << "--rope-theta";
    QTest::newRow("window on llama") << QStringList{"--sliding-window", "8"} << "--sliding-window";
    QTest::newRow("seed") << QStringList{"--seed", "-1"} << "--seed";
    QTest::newRow("tie both ways") << QStringList{"--tie", "--no-tie"} << "--no-tie";
    QTest::newRow("head bits without exl2") << QStringList{"--head-bits", "8"} << "--head-bits";
    QTest::newRow("exl3 bits") << QStringList{"--format", "exl3:9"} << "--format";
    QTest::newRow("exl3 codebook") << QStringList{"--format", "exl3:4.0:mul2"} << "--format";
    QTest::newRow("exl3 head bits")
        << QStringList{"--format", "exl3:4.0", "--head-bits", "12"} << "--head-bits";
    QTest::newRow("gptq option without gptq") << QStringList{"--gptq-v2"} << "--gptq-v2";
    QTest::newRow("group size without an integer format")
        << QStringList{"--group-size", "32"} << "--group-size";
    QTest::newRow("group size not dividing the inputs")
        << QStringList{"--format", "w4a16", "--group-size", "48"} << "--group-size";
    QTest::newRow("group size not a number")
        << QStringList{"--format", "awq", "--group-size", "rows"} << "--group-size";
    QTest::newRow("actorder per channel")
        << QStringList{"--format", "w8a16", "--actorder"} << "--actorder";
    QTest::newRow("unknown option") << QStringList{"--colour", "blue"} << "--colour";
    QTest::newRow("missing value") << QStringList{"--layers"} << "--layers";
  }

  void rejectsBadOptions() {
    QFETCH(QStringList, arguments);
    QFETCH(QString, mentions);
    QTemporaryDir root;
    QVERIFY(root.isValid());
    const QString out = root.filePath(QStringLiteral("model"));
    const Run run = make_model(QStringList{out} + arguments);
    QCOMPARE(run.exit_code, 2);
    QVERIFY(run.out.isEmpty());
    QCOMPARE(run.err.count(u'\n'), 1);
    QVERIFY2(run.err.contains(mentions), qPrintable(run.err));
    QVERIFY(QDir(root.path()).isEmpty(QDir::AllEntries | QDir::Hidden | QDir::NoDotAndDotDot));
  }

  void requiresOut() {
    const Run run = make_model({"--format", "fp16"});
    QCOMPARE(run.exit_code, 2);
    QCOMPARE(run.err.count(u'\n'), 1);
    QVERIFY2(run.err.contains(QStringLiteral("OUT")), qPrintable(run.err));
  }

  void refusesANonEmptyOut() {
    QTemporaryDir root;
    QVERIFY(root.isValid());
    QFile notes(root.filePath(QStringLiteral("notes.txt")));
    QVERIFY(notes.open(QIODevice::WriteOnly));
    notes.write("keep me");
    notes.close();
    const Run run = make_model({root.path()});
    QCOMPARE(run.exit_code, 2);
    QCOMPARE(run.err.count(u'\n'), 1);
    QVERIFY2(run.err.contains(QStringLiteral("not empty")), qPrintable(run.err));
    QCOMPARE(QDir(root.path()).entryList(QDir::AllEntries | QDir::Hidden | QDir::NoDotAndDotDot),
             QStringList{"notes.txt"});
  }
};

QUIRE_TEST(MakeModelCommandTest)
#include "test_make_model_command.moc"
