// RandomModelSpec: option parsing, validation with messages that name the
// option, the output directory rules, and the JSON files' exact keys.

#include <QDir>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>
#include <QTest>
#include <functional>
#include <stdexcept>

#include "modelgen_test_support.h"
#include "quire/engine/modelgen/random_model.h"
#include "test_main.h"

using namespace quire::engine::modelgen;
namespace fs = std::filesystem;

namespace {

// The std::invalid_argument message `f` throws, or "" when it throws none.
std::string rejection(const std::function<void()>& f) {
  try {
    f();
  } catch (const std::invalid_argument& error) {
    return error.what();
  }
  return {};
}

QJsonObject json_file(const fs::path& path) {
  return QJsonDocument::fromJson(quire::test::read_file(path)).object();
}

struct BadSpec {
  const char* label;
  const char* option;  // the message starts with "<option>: "
  std::function<void(RandomModelSpec&)> change;
};

std::vector<BadSpec> bad_specs() {
  return {
      {"unknown architecture", "arch", [](RandomModelSpec& s) { s.architecture = "gpt2"; }},
      {"no layers", "layers", [](RandomModelSpec& s) { s.layers = 0; }},
      {"65 layers", "layers", [](RandomModelSpec& s) { s.layers = 65; }},
      {"no heads", "heads", [](RandomModelSpec& s) { s.heads = 0; }},
      {"kv heads not dividing", "kv_heads", [](RandomModelSpec& s) { s.kv_heads = 3; }},
      {"more kv heads than heads", "kv_heads", [](RandomModelSpec& s) { s.kv_heads = 8; }},
      {"head_dim 48", "head_dim", [](RandomModelSpec& s) { s.head_dim = 48; }},
      {"head_dim 16", "head_dim", [](RandomModelSpec& s) { s.head_dim = 16; }},
      {"hidden / heads = 24", "head_dim", [](RandomModelSpec& s) { s.hidden = 96; }},
      {"hidden not a multiple of heads", "head_dim",
       [](RandomModelSpec& s) {
         s.hidden = 100;
         s.heads = 3;
         s.kv_heads = 1;
       }},
      {"vocab 319", "vocab", [](RandomModelSpec& s) { s.vocab = 319; }},
      {"vocab 5000", "vocab", [](RandomModelSpec& s) { s.vocab = 5000; }},
      {"EXL2 hidden 136", "hidden",
       [](RandomModelSpec& s) {
         s.format = parse_format("exl2:4.0");
         s.hidden = 136;
         s.head_dim = 32;
       }},
      {"GPTQ intermediate 200", "intermediate",
       [](RandomModelSpec& s) {
         s.format = parse_format("gptq");
         s.intermediate = 200;
       }},
      {"EXL2 bits 9", "format",
       [](RandomModelSpec& s) {
         s.format = {WeightFormat::EXL2, 9.0};
       }},
      {"EXL2 head bits 7", "head_bits",
       [](RandomModelSpec& s) {
         s.format = parse_format("exl2:4.0");
         s.exl2_head_bits = 7;
       }},
      {"GPTQ groups of 48", "gptq_group_size",
       [](RandomModelSpec& s) {
         s.format = parse_format("gptq");
         s.gptq_group_size = 48;
       }},
      {"GPTQ groups wider than a layer", "gptq_group_size",
       [](RandomModelSpec& s) {
         s.format = parse_format("gptq");
         s.gptq_group_size = 256;
       }},
      {"W4A16 groups not dividing the inputs", "group_size",
       [](RandomModelSpec& s) {
         s.format = parse_format("w4a16");
         s.group_size = 48;
       }},
      {"AWQ groups wider than a layer", "group_size",
       [](RandomModelSpec& s) {
         s.format = parse_format("awq");
         s.group_size = 512;
       }},
      {"actorder per channel", "actorder",
       [](RandomModelSpec& s) {
         s.format = parse_format("w8a16");
         s.actorder = true;
       }},
      {"actorder for AWQ", "actorder",
       [](RandomModelSpec& s) {
         s.format = parse_format("awq");
         s.actorder = true;
       }},
      {"a group size for FP16", "group_size", [](RandomModelSpec& s) { s.group_size = 32; }},
      {"AWQ for qwen3_moe", "format",
       [](RandomModelSpec& s) {
         s.architecture = "qwen3_moe";
         s.format = parse_format("awq");
       }},
      {"window on llama", "sliding_window", [](RandomModelSpec& s) { s.sliding_window = 64; }},
      {"window of 0", "sliding_window",
       [](RandomModelSpec& s) {
         s.architecture = "mistral";
         s.sliding_window = 0;
       }},
      {"rope_theta 0", "rope_theta", [](RandomModelSpec& s) { s.rope_theta = 0.0; }},
      {"rope factor 0.5", "rope_scaling",
       [](RandomModelSpec& s) {
         s.rope_scaling = {RopeScalingSpec::Type::Linear, 0.5};
       }},
      {"llama3 with a short context", "max_position_embeddings",
       [](RandomModelSpec& s) {
         s.rope_scaling = parse_rope_scaling("llama3");
         s.max_position_embeddings = 32;
       }},
      {"no shards", "shards", [](RandomModelSpec& s) { s.shards = 0; }},
      {"more shards than tensors", "shards", [](RandomModelSpec& s) { s.shards = 100; }},
  };
}

}  // namespace

class RandomModelSpecTest : public QObject {
  Q_OBJECT

 private slots:
  void defaultsAreValid() {
    const RandomModelSpec spec;
    validate(spec);
    QCOMPARE(spec.resolved_head_dim(), 32);
    QVERIFY(spec.resolved_tie());
    RandomModelSpec exl2;
    exl2.format = parse_format("exl2:4.0");
    QVERIFY(!exl2.resolved_tie());  // its head is quantized
    exl2.tie_embeddings = true;
    QVERIFY(exl2.resolved_tie());
    QCOMPARE(describe(spec), std::string("llama, fp16, 2 layers, hidden 128, vocab 512"));
  }

  void parsesFormats() {
    QCOMPARE(int(parse_format("fp16").kind), int(WeightFormat::FP16));
    QCOMPARE(int(parse_format("bf16").kind), int(WeightFormat::BF16));
    QCOMPARE(int(parse_format("gptq").kind), int(WeightFormat::GPTQ));
    const FormatSpec exl2 = parse_format("exl2:4.65");
    QCOMPARE(int(exl2.kind), int(WeightFormat::EXL2));
    QCOMPARE(exl2.exl2_bits, 4.65);
    QCOMPARE(to_string(exl2), std::string("exl2:4.65"));
    QCOMPARE(to_string(parse_format("exl2:2")), std::string("exl2:2.0"));
    QCOMPARE(to_string(parse_format("exl2:8.0")), std::string("exl2:8.0"));
    // The integer formats of llm-compressor, AutoAWQ and GPTQModel.
    for (const auto& [text, kind] : {std::pair{"w4a16", WeightFormat::W4A16},
                                     {"w4a16-asym", WeightFormat::W4A16},
                                     {"w8a16", WeightFormat::W8A16},
                                     {"w8a16-asym", WeightFormat::W8A16},
                                     {"int8", WeightFormat::INT8},
                                     {"awq", WeightFormat::AWQ},
                                     {"gptq:8", WeightFormat::GPTQ}}) {
      const FormatSpec format = parse_format(text);
      QCOMPARE(int(format.kind), int(kind));
      QCOMPARE(format.zero_points, std::string(text).ends_with("-asym"));
      QCOMPARE(to_string(format), std::string(text));
    }
    QCOMPARE(parse_format("gptq:8").gptq_bits, 8);
    QCOMPARE(parse_format("gptq").gptq_bits, 4);
    for (const char* bad : {"fp32", "exl2", "exl2:", "exl2:1.5", "exl2:9", "exl2:4.0x", "EXL2:4.0",
                            "gptq:4", "gptq:3", "exl2:nan", "w4a16:asym", "awq:8", "int4", ""}) {
      const std::string message = rejection([&] { parse_format(bad); });
      QVERIFY2(message.starts_with("format: "), bad);
    }
  }

  void parsesRopeScaling() {
    using Type = RopeScalingSpec::Type;
    QCOMPARE(int(parse_rope_scaling("none").type), int(Type::None));
    const RopeScalingSpec linear = parse_rope_scaling("linear:2.5");
    QCOMPARE(int(linear.type), int(Type::Linear));
    QCOMPARE(linear.factor, 2.5);
    QCOMPARE(int(parse_rope_scaling("dynamic:4").type), int(Type::Dynamic));
    const RopeScalingSpec llama3 = parse_rope_scaling("llama3");
    QCOMPARE(int(llama3.type), int(Type::Llama3));
    QCOMPARE(llama3.factor, 8.0);
    QCOMPARE(to_string(parse_rope_scaling("llama3:16")), std::string("llama3:16.0"));
    const RopeScalingSpec bands = parse_rope_scaling("llama3:32:8192:1:4");
    QCOMPARE(bands.original_max_position_embeddings, std::int64_t(8192));
    QCOMPARE(to_string(bands), std::string("llama3:32.0:8192"));
    QCOMPARE(to_string(parse_rope_scaling("llama3:8:1024:2:8")),
             std::string("llama3:8.0:1024:2.0:8.0"));
    const RopeScalingSpec yarn = parse_rope_scaling("yarn:4:32768");
    QCOMPARE(int(yarn.type), int(Type::Yarn));
    QCOMPARE(yarn.factor, 4.0);
    QCOMPARE(yarn.original_max_position_embeddings, std::int64_t(32768));
    QCOMPARE(to_string(parse_rope_scaling("yarn:2")), std::string("yarn:2.0"));
    for (const char* bad : {"yarn", "yarn:0.5", "yarn:2:1.5", "llama3:8:1024:2", "linear",
                            "linear:", "linear:0.5", "linear:2:3", "dynamic:x", "cubic"}) {
      QVERIFY2(rejection([&] { parse_rope_scaling(bad); }).starts_with("rope_scaling: "), bad);
    }
  }

  void rejectsInvalidSpecsNamingTheOption() {
    QTemporaryDir root;
    QVERIFY(root.isValid());
    for (const BadSpec& bad : bad_specs()) {
      RandomModelSpec spec;
      bad.change(spec);
      const std::string message = rejection([&] { validate(spec); });
      QVERIFY2(message.starts_with(std::string(bad.option) + ": "),
               qPrintable(QString("%1: \"%2\"").arg(bad.label, QString::fromStdString(message))));
      // write_random_model validates first and leaves nothing behind.
      const fs::path out = fs::path(root.path().toStdString()) / "out";
      QCOMPARE(rejection([&] { write_random_model(spec, out); }), message);
      QVERIFY(QDir(root.path()).isEmpty(QDir::AllEntries | QDir::Hidden | QDir::NoDotAndDotDot));
    }
  }

  void smallVocabularyErrorSaysWhy() {
    RandomModelSpec spec;
    spec.vocab = 256;
    const std::string message = rejection([&] { validate(spec); });
    QVERIFY2(message.find("320") != std::string::npos && message.find("byte") != std::string::npos,
             message.c_str());
  }

  void outputMustBeNewOrEmpty() {
    QTemporaryDir root;
    QVERIFY(root.isValid());
    const fs::path base = root.path().toStdString();
    const RandomModelSpec spec;

    fs::create_directory(base / "full");
    QFile marker(QString::fromStdString((base / "full" / "keep.txt").string()));
    QVERIFY(marker.open(QIODevice::WriteOnly));
    marker.write("mine");
    marker.close();
    QVERIFY(rejection([&] { write_random_model(spec, base / "full"); }).starts_with("out_dir: "));
    QCOMPARE(QDir(QString::fromStdString((base / "full").string()))
                 .entryList(QDir::NoDotAndDotDot | QDir::AllEntries | QDir::Hidden),
             QStringList{QStringLiteral("keep.txt")});
    QVERIFY(rejection([&] {
              write_random_model(spec, base / "full" / "keep.txt");
            }).starts_with("out_dir: "));

    fs::create_directory(base / "empty");
    QCOMPARE(write_random_model(spec, base / "empty").files.size(), std::size_t(5));
    const WrittenModel nested = write_random_model(spec, base / "a" / "b" / "c/");
    QCOMPARE(nested.files.size(), std::size_t(5));
    QVERIFY(nested.tensors == 2 + 9 * spec.layers);
    std::uint64_t bytes = 0;
    for (const fs::path& file : nested.files) {
      QCOMPARE(file.parent_path(), base / "a" / "b" / "c");
      bytes += fs::file_size(file);
    }
    QCOMPARE(nested.total_bytes, bytes);
    // No staging directories are left next to the models.
    QCOMPARE(QDir(root.path()).entryList(QDir::NoDotAndDotDot | QDir::AllEntries | QDir::Hidden),
             (QStringList{"a", "empty", "full"}));
    QCOMPARE(QDir(root.path() + "/a/b")
                 .entryList(QDir::NoDotAndDotDot | QDir::AllEntries | QDir::Hidden),
             QStringList{"c"});
  }

  void jsonFilesSayWhatDownloadedModelsSay() {
    QTemporaryDir root;
    QVERIFY(root.isValid());
    const fs::path base = root.path().toStdString();

    RandomModelSpec llama;
    llama.rope_scaling = parse_rope_scaling("llama3");
    write_random_model(llama, base / "llama");
    const QJsonObject config = json_file(base / "llama" / "config.json");
    QCOMPARE(config["architectures"].toArray(), QJsonArray{"LlamaForCausalLM"});
    QVERIFY(!config.contains("head_dim"));  // hidden / heads
    QVERIFY(!config.contains("quantization_config"));
    QVERIFY(!config.contains("sliding_window"));
    QCOMPARE(config["tie_word_embeddings"].toBool(), true);
    QCOMPARE(config["bos_token_id"].toInt(), 1);
    QCOMPARE(config["eos_token_id"].toInt(), 2);
    const QJsonObject rope = config["rope_scaling"].toObject();
    QCOMPARE(rope["rope_type"].toString(), QStringLiteral("llama3"));
    QCOMPARE(rope["factor"].toDouble(), 8.0);
    QCOMPARE(rope["low_freq_factor"].toDouble(), 1.0);
    QCOMPARE(rope["high_freq_factor"].toDouble(), 4.0);
    QCOMPARE(rope["original_max_position_embeddings"].toInt(), 64);
    const QJsonObject generation = json_file(base / "llama" / "generation_config.json");
    QCOMPARE(generation["bos_token_id"].toInt(), 1);
    QCOMPARE(generation["eos_token_id"].toInt(), 2);
    const QJsonObject tokenizer = json_file(base / "llama" / "tokenizer_config.json");
    QCOMPARE(tokenizer["add_bos_token"].toBool(), true);
    QCOMPARE(tokenizer["bos_token"].toString(), QStringLiteral("<s>"));
    QCOMPARE(tokenizer["eos_token"].toString(), QStringLiteral("</s>"));

    RandomModelSpec qwen;
    qwen.architecture = "qwen2";
    qwen.format = parse_format("exl2:3.5");
    qwen.sliding_window = 128;
    qwen.head_dim = 64;
    write_random_model(qwen, base / "qwen");
    const QJsonObject qconfig = json_file(base / "qwen" / "config.json");
    QCOMPARE(qconfig["head_dim"].toInt(), 64);
    QCOMPARE(qconfig["use_sliding_window"].toBool(), true);
    QCOMPARE(qconfig["sliding_window"].toInt(), 128);
    QCOMPARE(qconfig["max_window_layers"].toInt(), 0);
    QCOMPARE(qconfig["tie_word_embeddings"].toBool(), false);
    const QJsonObject exl2 = qconfig["quantization_config"].toObject();
    QCOMPARE(exl2["quant_method"].toString(), QStringLiteral("exl2"));
    QCOMPARE(exl2["bits"].toDouble(), 3.5);
    QCOMPARE(exl2["head_bits"].toInt(), 6);

    RandomModelSpec gptq;
    gptq.format = parse_format("gptq");
    gptq.gptq_v2 = true;
    write_random_model(gptq, base / "gptq");
    const QJsonObject quantization =
        json_file(base / "gptq" / "config.json")["quantization_config"].toObject();
    QCOMPARE(quantization["quant_method"].toString(), QStringLiteral("gptq"));
    QCOMPARE(quantization["bits"].toInt(), 4);
    QCOMPARE(quantization["group_size"].toInt(), 32);
    QCOMPARE(quantization["desc_act"].toBool(), true);
    QCOMPARE(quantization["checkpoint_format"].toString(), QStringLiteral("gptq_v2"));
  }
};

QUIRE_TEST(RandomModelSpecTest)
#include "test_random_model_spec.moc"
