// quire-cli make-model for Gemma 2, Gemma 3, Phi-3, Mixtral and Qwen3-MoE:
// each family's options reach config.json, --config-from writes a published
// config.json back with only its shapes changed and the flags given on top,
// and options for another family are refused naming the flag.

#include <QDir>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>
#include <QTest>

#include "cli_run.h"
#include "test_main.h"

namespace {

QJsonObject json_of(const QString& path) {
  QFile file(path);
  return file.open(QIODevice::ReadOnly) ? QJsonDocument::fromJson(file.readAll()).object()
                                        : QJsonObject();
}

QString published(const char* name) {
  return QStringLiteral(QUIRE_TEST_DATA_DIR "/configs/") + name + QStringLiteral(".json");
}

}  // namespace

class MakeModelFamiliesTest : public QObject {
  Q_OBJECT

  QTemporaryDir root_;

  QJsonObject make(const QString& name, const QStringList& options) {
    const QString out = root_.filePath(name);
    const cli_test::Run run = cli_test::run_cli(QStringList{"make-model", out} + options);
    if (run.exit_code != 0) {
      qWarning("%s", qPrintable(run.err));
      return {};
    }
    return json_of(out + "/config.json");
  }

 private slots:
  void everyFamilyWritesItsClass_data() {
    QTest::addColumn<QString>("arch");
    QTest::addColumn<QString>("class_name");
    QTest::newRow("gemma2") << "gemma2"
                            << "Gemma2ForCausalLM";
    QTest::newRow("gemma3") << "gemma3"
                            << "Gemma3ForCausalLM";
    QTest::newRow("phi3") << "phi3"
                          << "Phi3ForCausalLM";
    QTest::newRow("mixtral") << "mixtral"
                             << "MixtralForCausalLM";
    QTest::newRow("qwen3_moe") << "qwen3_moe"
                               << "Qwen3MoeForCausalLM";
    QTest::newRow("qwen2_5_vl") << "qwen2_5_vl"
                                << "Qwen2_5_VLForConditionalGeneration";
  }

  void everyFamilyWritesItsClass() {
    QFETCH(QString, arch);
    QFETCH(QString, class_name);
    const QString out = root_.filePath("class-" + arch);
    const cli_test::Run run =
        cli_test::run_cli({"make-model", out, "--arch", arch, "--format", "exl2:4.0"});
    QVERIFY2(run.exit_code == 0, qPrintable(run.err));
    QCOMPARE(run.out.count('\n'), 1);
    QVERIFY(QString::fromUtf8(run.out).contains(arch + ", exl2:4.0"));
    const QJsonObject config = json_of(out + "/config.json");
    QCOMPARE(config["architectures"].toArray().first().toString(), class_name);
    QCOMPARE(config["quantization_config"].toObject()["quant_method"].toString(),
             QStringLiteral("exl2"));
  }

  void gemmaOptionsReachConfig() {
    QJsonObject config =
        make("gemma2", {"--arch", "gemma2", "--softcap", "0:20", "--query-pre-attn-scalar", "224",
                        "--sliding-window", "8", "--layer-types", "--layers", "3"});
    QVERIFY(config["attn_logit_softcapping"].isNull());
    QCOMPARE(config["final_logit_softcapping"].toDouble(), 20.0);
    QCOMPARE(config["query_pre_attn_scalar"].toInt(), 224);
    QCOMPARE(config["sliding_window"].toInt(), 8);
    QCOMPARE(config["layer_types"].toArray(),
             (QJsonArray{"sliding_attention", "full_attention", "sliding_attention"}));

    config = make("gemma3", {"--arch", "gemma3", "--sliding-window-pattern", "2", "--rope-scaling",
                             "linear:8", "--sliding-window", "16"});
    QCOMPARE(config["sliding_window_pattern"].toInt(), 2);
    QCOMPARE(config["rope_scaling"].toObject(),
             (QJsonObject{{"factor", 8.0}, {"rope_type", "linear"}}));

    const QString out = root_.filePath("gemma3-vision");
    const cli_test::Run run =
        cli_test::run_cli({"make-model", out, "--arch", "gemma3", "--multimodal", "--text-prefix",
                           "model.language_model."});
    QVERIFY2(run.exit_code == 0, qPrintable(run.err));
    QVERIFY(QString::fromUtf8(run.out).contains("with a vision tower"));
    config = json_of(out + "/config.json");
    QCOMPARE(config["architectures"].toArray().first().toString(),
             QStringLiteral("Gemma3ForConditionalGeneration"));
    QCOMPARE(config["text_config"].toObject()["model_type"].toString(),
             QStringLiteral("gemma3_text"));
    QCOMPARE(config["vision_config"].toObject()["model_type"].toString(),
             QStringLiteral("siglip_vision_model"));
    QVERIFY(QFile::exists(out + "/model.safetensors"));
  }

  // Qwen2.5-VL always has its tower; --multimodal is accepted and changes
  // nothing, --text-prefix picks the newer layout.
  void qwenVlWritesThePublishedLayout() {
    const QString out = root_.filePath("qwen2.5-vl");
    const cli_test::Run run =
        cli_test::run_cli({"make-model", out, "--arch", "qwen2_5_vl", "--multimodal",
                           "--text-prefix", "model.language_model."});
    QVERIFY2(run.exit_code == 0, qPrintable(run.err));
    QVERIFY(QString::fromUtf8(run.out).contains("with a vision tower"));
    const QJsonObject config = json_of(out + "/config.json");
    QCOMPARE(config["model_type"].toString(), QStringLiteral("qwen2_5_vl"));
    QCOMPARE(config["rope_scaling"].toObject(),
             (QJsonObject{{"type", "mrope"}, {"mrope_section", QJsonArray{4, 6, 6}}}));
    QCOMPARE(config["vision_config"].toObject()["out_hidden_size"].toInt(),
             config["hidden_size"].toInt());
    QCOMPARE(config["text_config"].toObject()["model_type"].toString(),
             QStringLiteral("qwen2_5_vl_text"));
    const QJsonObject processor = json_of(out + "/preprocessor_config.json");
    QCOMPARE(processor["processor_class"].toString(), QStringLiteral("Qwen2_5_VLProcessor"));
    QCOMPARE(processor["max_pixels"].toInt(), 12845056);
  }

  void phi3AndMixtureOptionsReachConfig() {
    QJsonObject config =
        make("phi3", {"--arch", "phi3", "--partial-rotary-factor", "0.5", "--rope-scaling",
                      "longrope:32", "--max-position-embeddings", "4096"});
    QCOMPARE(config["partial_rotary_factor"].toDouble(), 0.5);
    QCOMPARE(config["original_max_position_embeddings"].toInt(), 32);
    QCOMPARE(config["rope_scaling"].toObject()["long_factor"].toArray().size(), 8);

    config = make("qwen3-moe",
                  {"--arch", "qwen3_moe", "--experts", "6", "--experts-per-token", "3",
                   "--expert-intermediate", "64", "--mlp-only-layers", "0", "--no-norm-topk-prob"});
    QCOMPARE(config["num_experts"].toInt(), 6);
    QCOMPARE(config["num_experts_per_tok"].toInt(), 3);
    QCOMPARE(config["moe_intermediate_size"].toInt(), 64);
    QCOMPARE(config["mlp_only_layers"].toArray(), QJsonArray{0});
    QCOMPARE(config["norm_topk_prob"].toBool(), false);

    config = make("mixtral", {"--arch", "mixtral", "--experts", "2", "--experts-per-token", "1",
                              "--sliding-window", "null", "--format", "gptq"});
    QCOMPARE(config["num_local_experts"].toInt(), 2);
    QCOMPARE(config["num_experts_per_tok"].toInt(), 1);
    QVERIFY(config.contains("sliding_window") && config["sliding_window"].isNull());
  }

  // The published file comes back with its shapes scaled down, and flags on top.
  void configFromKeepsThePublishedKeys() {
    const QJsonObject real = json_of(published("mixtral-8x7b-instruct-v0.1"));
    QVERIFY(!real.isEmpty());
    const QJsonObject made =
        make("mixtral-published", {"--config-from", published("mixtral-8x7b-instruct-v0.1"),
                                   "--experts-per-token", "1", "--format", "fp16"});
    QVERIFY(!made.isEmpty());
    const QStringList shapes = {"hidden_size",         "num_hidden_layers", "num_attention_heads",
                                "num_key_value_heads", "intermediate_size", "vocab_size",
                                "num_local_experts"};
    QCOMPARE(made.keys(), real.keys());
    for (const QString& key : real.keys()) {
      if (shapes.contains(key) || key == "num_experts_per_tok") continue;
      QVERIFY2(made[key] == real[key], qPrintable(key));
    }
    QCOMPARE(made["num_experts_per_tok"].toInt(), 1);
    QCOMPARE(made["num_local_experts"].toInt(), 4);
    QCOMPARE(made["hidden_size"].toInt(), 256);
    QCOMPARE(made["torch_dtype"].toString(), QStringLiteral("bfloat16"));  // as published

    const QJsonObject gemma =
        make("gemma3-published", {"--config-from", published("gemma-3-4b-it")});
    const QJsonObject real_gemma = json_of(published("gemma-3-4b-it"));
    QCOMPARE(gemma["architectures"], real_gemma["architectures"]);
    QCOMPARE(gemma["text_config"].toObject()["rope_scaling"],
             real_gemma["text_config"].toObject()["rope_scaling"]);
    QCOMPARE(gemma["eos_token_id"], real_gemma["eos_token_id"]);
  }

  // The new families' presets: the published settings at a small size, and
  // no key the published file lacks.
  void likeWritesThePublishedSettings_data() {
    QTest::addColumn<QString>("name");
    for (const char* name :
         {"gemma-2-9b-it", "gemma-3-4b-it", "phi-3.5-mini-instruct", "phi-4-mini-instruct",
          "mixtral-8x7b-instruct-v0.1", "qwen3-30b-a3b"}) {
      QTest::newRow(name) << name;
    }
  }

  void likeWritesThePublishedSettings() {
    QFETCH(QString, name);
    const QJsonObject made = make("like-" + name, {"--like", name});
    const QJsonObject real = json_of(published(qPrintable(name)));
    QVERIFY(!made.isEmpty() && !real.isEmpty());
    for (const char* key : {"architectures", "model_type", "torch_dtype", "tie_word_embeddings"})
      QVERIFY2(made.value(key) == real.value(key), key);
    const bool vision = real.contains("text_config");
    const QJsonObject text = vision ? made["text_config"].toObject() : made;
    const QJsonObject real_text = vision ? real["text_config"].toObject() : real;
    for (const char* key :
         {"model_type", "rope_theta", "max_position_embeddings", "rms_norm_eps", "sliding_window",
          "attn_logit_softcapping", "final_logit_softcapping", "num_experts_per_tok",
          "norm_topk_prob", "original_max_position_embeddings", "partial_rotary_factor",
          "cache_implementation"}) {
      QVERIFY2(text.value(key) == real_text.value(key), key);
    }
    const QJsonObject scaling = text["rope_scaling"].toObject();
    const QJsonObject real_scaling = real_text["rope_scaling"].toObject();
    QCOMPARE(scaling.keys(), real_scaling.keys());
    if (real_scaling.contains("factor")) QCOMPARE(scaling["factor"], real_scaling["factor"]);
    for (const QString& key : made.keys())
      QVERIFY2(real.contains(key), qPrintable(key));
    // Shapes that gemma-3-4b-it leaves to Gemma3TextConfig's defaults (its
    // query_pre_attn_scalar is its head_dim, 256).
    const QStringList shapes = {"head_dim", "num_attention_heads", "num_key_value_heads",
                                "vocab_size", "query_pre_attn_scalar"};
    for (const QString& key : text.keys())
      QVERIFY2(real_text.contains(key) || (vision && shapes.contains(key)), qPrintable(key));
  }

  void rejectsOptionsOfAnotherFamily_data() {
    QTest::addColumn<QStringList>("arguments");
    QTest::addColumn<QString>("mentions");
    QTest::newRow("softcap on llama") << QStringList{"--softcap", "50:30"} << "--softcap";
    QTest::newRow("bad softcap") << QStringList{"--arch", "gemma2", "--softcap", "50"}
                                 << "--softcap: \"50\" is not ATTN:FINAL";
    QTest::newRow("experts on gemma2") << QStringList{"--arch", "gemma2", "--experts", "4"}
                                       << "--experts: applies to --arch mixtral and qwen3_moe";
    QTest::newRow("top-k above experts")
        << QStringList{"--arch", "mixtral", "--experts", "4", "--experts-per-token", "5"}
        << "--experts-per-token: 5 is outside 1..4";
    QTest::newRow("vision on gemma2")
        << QStringList{"--arch", "gemma2", "--multimodal"} << "--multimodal";
    QTest::newRow("prefix without vision")
        << QStringList{"--arch", "gemma3", "--text-prefix", "model.language_model."}
        << "--text-prefix";
    QTest::newRow("unknown prefix")
        << QStringList{"--arch", "gemma3", "--multimodal", "--text-prefix", "text."}
        << "--text-prefix";
    QTest::newRow("gemma's prefix on qwen2_5_vl")
        << QStringList{"--arch", "qwen2_5_vl", "--text-prefix", "language_model.model."}
        << "--text-prefix";
    QTest::newRow("longrope on llama")
        << QStringList{"--rope-scaling", "longrope"} << "--rope-scaling";
    QTest::newRow("unnormalised mixtral")
        << QStringList{"--arch", "mixtral", "--no-norm-topk-prob"} << "--no-norm-topk-prob";
    QTest::newRow("dense layer past the model")
        << QStringList{"--arch", "qwen3_moe", "--mlp-only-layers", "0,5"} << "--mlp-only-layers";
    QTest::newRow("gemma2 pattern")
        << QStringList{"--arch", "gemma2", "--sliding-window-pattern", "3"}
        << "--sliding-window-pattern";
    QTest::newRow("gemma null window")
        << QStringList{"--arch", "gemma2", "--sliding-window", "null"} << "--sliding-window";
    QTest::newRow("config-from with arch")
        << QStringList{"--config-from", published("gemma-2-9b-it"), "--arch", "llama"} << "--arch";
    QTest::newRow("config-from missing")
        << QStringList{"--config-from", "/nonexistent/config.json"} << "--config-from: cannot read";
    QTest::newRow("unknown arch") << QStringList{"--arch", "gpt2"} << "--arch: \"gpt2\"";
  }

  void rejectsOptionsOfAnotherFamily() {
    QFETCH(QStringList, arguments);
    QFETCH(QString, mentions);
    QTemporaryDir root;
    QVERIFY(root.isValid());
    const cli_test::Run run =
        cli_test::run_cli(QStringList{"make-model", root.filePath("model")} + arguments);
    QCOMPARE(run.exit_code, 2);
    QVERIFY(run.out.isEmpty());
    QCOMPARE(run.err.count(u'\n'), 1);
    QVERIFY2(run.err.contains(mentions), qPrintable(run.err));
    QVERIFY(QDir(root.path()).isEmpty(QDir::AllEntries | QDir::Hidden | QDir::NoDotAndDotDot));
  }
};

QUIRE_TEST(MakeModelFamiliesTest)
#include "test_make_model_families.moc"
