// Broken directories of the families with more parts than Llama's: each
// mistake names the config field or the tensor at fault in one line, exit
// status 2.

#include <QDir>
#include <QFile>
#include <QTemporaryDir>
#include <QTest>
#include <functional>

#include "bad_model_support.h"
#include "quire/engine/modelgen/random_model.h"
#include "quire/engine/modelgen/random_model_spec.h"
#include "test_main.h"

using namespace quire;
using namespace quire::test;

namespace {

using Damage = std::function<void(const QString& dir)>;

engine::modelgen::RandomModelSpec spec_of(const QString& family) {
  engine::modelgen::RandomModelSpec spec;
  spec.seed = 4;
  spec.architecture = family.toStdString();
  if (family == "llama-fp8") {
    spec.architecture = "llama";
    spec.format = engine::modelgen::parse_format("fp8");
  }
  if (family == "llama-exl3") {
    spec.architecture = "llama";
    spec.format = engine::modelgen::parse_format("exl3:4.0");
  }
  if (family == "qwen3") spec.head_dim = 64;
  if (family == "gemma3") spec.multimodal = true;
  if (family == "gemma3" || family == "gemma2") spec.sliding_window = 8;
  return spec;
}

}  // namespace

Q_DECLARE_METATYPE(Damage)

class BadFamilyModelsTest : public QObject {
  Q_OBJECT

  QTemporaryDir root_;

 private slots:
  void eachProblemNamesItsField_data() {
    QTest::addColumn<QString>("family");
    QTest::addColumn<Damage>("damage");
    QTest::addColumn<QString>("message");
    QTest::newRow("head_dim disagrees with the tensors")
        << "qwen3" << Damage([](const QString& d) {
             write(d + "/config.json",
                   read(d + "/config.json").replace("\"head_dim\": 64", "\"head_dim\": 32"));
           })
        << "model.layers.0.self_attn.q_proj has 256 outputs, but config.json's head_dim 32 x 4 "
           "heads asks for 128; the tensors hold heads of 64. config.json's \"head_dim\" "
           "disagrees with the tensors";
    QTest::newRow("more experts per token than experts")
        << "mixtral" << Damage([](const QString& d) {
             write(d + "/config.json",
                   read(d + "/config.json")
                       .replace("\"num_experts_per_tok\": 2", "\"num_experts_per_tok\": 5"));
           })
        << "\"num_experts_per_tok\" (5) is larger than the 4 experts (\"num_local_experts\")";
    QTest::newRow("a missing expert") << "mixtral" << Damage([](const QString& d) {
      rewrite_tensors(d, [](const engine::io::TensorInfo& info, std::vector<std::int64_t>&) {
        return info.name != "model.layers.1.block_sparse_moe.experts.2.w3.weight";
      });
    }) << "no tensor model.layers.1.block_sparse_moe.experts.2.w3.weight";
    QTest::newRow("a multimodal download without its language model")
        << "gemma3" << Damage([](const QString& d) {
             rewrite_tensors(d, [](const engine::io::TensorInfo& info, std::vector<std::int64_t>&) {
               return !info.name.starts_with("language_model.");
             });
           })
        << "no language model in the files (no tensor language_model.model.embed_tokens.weight or "
           "model.language_model.embed_tokens.weight); this Gemma 3 (multimodal) download may "
           "hold only its vision tower or be incomplete";
    QTest::newRow("a fused projection of the wrong width")
        << "phi3" << Damage([](const QString& d) {
             rewrite_tensors(
                 d, [](const engine::io::TensorInfo& info, std::vector<std::int64_t>& shape) {
                   if (info.name == "model.layers.0.mlp.gate_up_proj.weight") shape[0] = 384;
                   return true;
                 });
           })
        << "model.layers.0.mlp.gate_up_proj.weight has shape [384, 128] where [512, 128] is needed";
    QTest::newRow("FP8 weights without their scale")
        << "llama-fp8" << Damage([](const QString& d) {
             rewrite_tensors(d, [](const engine::io::TensorInfo& info, std::vector<std::int64_t>&) {
               return info.name != "model.layers.1.mlp.up_proj.weight_scale";
             });
           })
        << "model.layers.1.mlp.up_proj.weight holds FP8 (F8_E4M3) values but there is no "
           "model.layers.1.mlp.up_proj.weight_scale to scale them";
    QTest::newRow("compressed-tensors in a format Quire does not run")
        << "llama-fp8" << Damage([](const QString& d) {
             write(d + "/config.json",
                   read(d + "/config.json").replace("float-quantized", "nvfp4-pack-quantized"));
           })
        << "config.json's quantization_config is compressed-tensors in the "
           "\"nvfp4-pack-quantized\" format, which Quire does not run";
    QTest::newRow("a compressed-tensors layer without its weight")
        << "llama-fp8" << Damage([](const QString& d) {
             rewrite_tensors(d, [](const engine::io::TensorInfo& info, std::vector<std::int64_t>&) {
               return !info.name.starts_with("model.layers.0.self_attn.q_proj.weight");
             });
           })
        << "no tensor model.layers.0.self_attn.q_proj.weight_packed or "
           "model.layers.0.self_attn.q_proj.weight; config.json's quantization_config is "
           "compressed-tensors";
    QTest::newRow("FP8 scales per group of inputs")
        << "llama-fp8" << Damage([](const QString& d) {
             rewrite_tensors(
                 d, [](const engine::io::TensorInfo& info, std::vector<std::int64_t>& shape) {
                   if (info.name == "model.layers.0.self_attn.q_proj.weight_scale") shape = {64, 2};
                   return true;
                 });
           })
        << "model.layers.0.self_attn.q_proj.weight_scale has shape [64, 2]; FP8 weights take one "
           "scale per output row ([128, 1]) or one for the tensor ([1]). Scales per group of "
           "inputs are not supported";
  }

  // EXL3 layers (Llama, 4 bits, MUL1: up_proj's trellis [8, 16, 64]).
  void eachExl3ProblemNamesItsTensor_data() {
    QTest::addColumn<QString>("family");
    QTest::addColumn<Damage>("damage");
    QTest::addColumn<QString>("message");
    const auto reshape = [](const char* name, std::vector<std::int64_t> to) {
      return Damage([name, to](const QString& d) {
        rewrite_tensors(
            d, [name, to](const engine::io::TensorInfo& info, std::vector<std::int64_t>& shape) {
              if (info.name == name) shape = to;
              return true;
            });
      });
    };
    QTest::newRow("a codebook marker Quire does not know")
        << "llama-exl3" << Damage([](const QString& d) {
             // The same length: the header's offsets stay right.
             write(d + "/model.safetensors",
                   read(d + "/model.safetensors")
                       .replace("layers.0.mlp.up_proj.mul1", "layers.0.mlp.up_proj.mul7"));
           })
        << "model.layers.0.mlp.up_proj.mul7 lies beside an EXL3 trellis, but EXL3 layers hold "
           "only trellis, suh, svh, su, sv, mcg, mul1 and bias";
    QTest::newRow("a trellis wider than the layer")
        << "llama-exl3" << reshape("model.layers.0.mlp.up_proj.trellis", {8, 24, 64})
        << "model.layers.0.mlp.up_proj (EXL3): trellis holds 384 outputs (its second dimension "
           "times 16), but the layer has 256, which pads to 256";
    QTest::newRow("a trellis of no width")
        << "llama-exl3" << reshape("model.layers.0.mlp.up_proj.trellis", {8, 16, 60})
        << "model.layers.0.mlp.up_proj (EXL3): trellis has shape [8, 16, 60]; its last "
           "dimension must be 16 x the bits per weight, 1 to 8 (16 to 128)";
    QTest::newRow("suh of the wrong length")
        << "llama-exl3" << reshape("model.layers.1.self_attn.o_proj.suh", {64})
        << "model.layers.1.self_attn.o_proj (EXL3): suh has 64 values; the trellis has 128 "
           "(padded) inputs";
    QTest::newRow("svh missing") << "llama-exl3" << Damage([](const QString& d) {
      rewrite_tensors(d, [](const engine::io::TensorInfo& info, std::vector<std::int64_t>&) {
        return info.name != "lm_head.svh";
      });
    }) << "lm_head (EXL3): there is no svh (nor the packed sv) beside the trellis";
  }

  void eachExl3ProblemNamesItsTensor() { eachProblemNamesItsField(); }

  void eachProblemNamesItsField() {
    QFETCH(QString, family);
    QFETCH(Damage, damage);
    QFETCH(QString, message);
    const QString dir =
        root_.filePath(QString::fromLatin1(QTest::currentDataTag()).replace(u' ', u'-'));
    engine::modelgen::write_random_model(spec_of(family), dir.toStdString());
    damage(dir);
    const Run run = run_cli(
        {QStringLiteral("logits"), dir, QStringLiteral("--tokens"), QStringLiteral("1,2,3")});
    QCOMPARE(run.exit_code, 2);
    QVERIFY2(run.err.contains(message), qPrintable(run.err));
    QCOMPARE(run.err.count(u'\n'), 1);  // one line
  }
};

QUIRE_TEST(BadFamilyModelsTest)
#include "test_bad_family_models.moc"
