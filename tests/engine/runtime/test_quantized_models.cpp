// Models of the formats Quire repacks into GPTQ's layout (compressed-tensors'
// pack-quantized and naive int8, AutoAWQ's GEMM layout) and 8-bit GPTQ, as
// make-model writes them: the planner's bytes are what the loader puts on the
// device, and every broken or unsupported directory is refused in one line
// naming what is wrong (exit status 2).

#include <QTemporaryDir>
#include <QTest>
#include <cstring>
#include <functional>
#include <numeric>

#include "bad_model_support.h"
#include "quire/engine/runtime/loaded_model.h"
#include "runtime_test_support.h"
#include "test_main.h"

using namespace quire;
using namespace quire::test;

namespace {

using Damage = std::function<void(const QString& dir)>;

// "llama w4a16 32 actorder": family, format, then group size and flags.
engine::modelgen::RandomModelSpec spec_of(const QString& text) {
  const QStringList words = text.split(u' ');
  engine::modelgen::RandomModelSpec spec;
  spec.seed = 6;
  spec.architecture = words[0].toStdString();
  spec.format = engine::modelgen::parse_format(words[1].toStdString());
  for (const QString& word : words.mid(2)) {
    if (word == "actorder") {
      spec.actorder = true;
    } else if (word == "channel") {
      spec.group_size = 0;
    } else {
      spec.group_size = word.toInt();
    }
  }
  return spec;
}

void replace_in_config(const QString& dir, const QByteArray& from, const QByteArray& to) {
  const QByteArray config = read(dir + "/config.json");
  QVERIFY2(config.contains(from), from.constData());
  write(dir + "/config.json", QByteArray(config).replace(from, to));
}

}  // namespace

Q_DECLARE_METATYPE(Damage)

class QuantizedModelsTest : public QObject {
  Q_OBJECT

  QTemporaryDir root_;

 private slots:
  // Every module's weight bytes in the plan, summed, are the bytes the
  // loader uploads: the repacked tensors, their scales and zero points in the
  // dtype they keep, the group indices and the biases.
  void plannedBytesAreTheLoadedBytes_data() {
    QTest::addColumn<QString>("spec");
    for (const char* spec :
         {"llama w4a16 32 actorder", "llama w4a16-asym 64", "llama w8a16", "llama w8a16-asym 32",
          "llama int8", "llama int8 32", "llama awq 32", "llama awq channel", "llama gptq:8",
          "llama gptq", "qwen2 w4a16 32", "qwen2 awq 64", "mixtral awq 64", "qwen3_moe w4a16 32",
          "qwen3_moe int8"}) {
      QTest::newRow(spec) << QString(spec);
    }
  }

  void plannedBytesAreTheLoadedBytes() {
    QFETCH(QString, spec);
    const TestModel model(spec_of(spec));
    const engine::ModelDescription& description = *model.description();
    std::int64_t planned = 0;
    for (const engine::ModuleCost& module : description.modules(cache::CacheFormat::FP16, 32, 1))
      planned += module.weight_bytes;
    kernels::CpuBackend backend;
    const std::vector<int> devices(description.layers.size() + 2, 0);
    const engine::LoadedModel loaded = engine::LoadedModel::load(description, backend, devices);
    QCOMPARE(loaded.device_bytes.at(0), planned);
  }

  void eachProblemNamesItsField_data() {
    QTest::addColumn<QString>("spec");
    QTest::addColumn<Damage>("damage");
    QTest::addColumn<QString>("message");
    const QString runs = "Quire runs compressed-tensors' pack-quantized W4A16 and W8A16";
    for (const char* format : {"nvfp4-pack-quantized", "marlin-24", "sparse-24-bitmask"}) {
      QTest::newRow(format) << "llama w4a16 32" << Damage([format](const QString& d) {
        replace_in_config(d, "\"format\": \"pack-quantized\"",
                          QByteArray("\"format\": \"") + format + "\"");
      })
                            << "config.json's quantization_config is compressed-tensors in the \"" +
                                   QString(format) + "\" format, which Quire does not run. " + runs;
    }
    QTest::newRow("int-quantized activations")
        << "llama w4a16 32" << Damage([](const QString& d) {
             replace_in_config(d, "\"input_activations\": null",
                               "\"input_activations\": {\"num_bits\": 8, \"type\": \"int\", "
                               "\"strategy\": \"token\", \"dynamic\": true, \"symmetric\": true}");
           })
        << "config_groups.group_0 (4-bit int group of 32, pack-quantized) quantizes activations "
           "to 8-bit integers (int-quantized activations, W4A8), which Quire does not run. " +
               runs;
    QTest::newRow("the int-quantized format")
        << "llama int8" << Damage([](const QString& d) {
             replace_in_config(d, "naive-quantized", "int-quantized");
           })
        << "config.json's quantization_config is compressed-tensors in the \"int-quantized\" "
           "format, which Quire does not run. " +
               runs;
    QTest::newRow("3-bit weights")
        << "llama w4a16 32" << Damage([](const QString& d) {
             replace_in_config(d, "\"num_bits\": 4", "\"num_bits\": 3");
           })
        << "config_groups.group_0 (3-bit int group of 32, pack-quantized) packs 3-bit weights, "
           "which Quire does not run";
    QTest::newRow("a group size that does not divide the inputs")
        << "llama w4a16 32" << Damage([](const QString& d) {
             replace_in_config(d, "\"group_size\": 32", "\"group_size\": 48");
           })
        << "model.layers.0.self_attn.q_proj (compressed-tensors pack-quantized): the scheme's "
           "group_size 48 does not divide the layer's 128 inputs; config.json does not describe "
           "these weights";
    QTest::newRow("zero points where the scheme is symmetric")
        << "llama w4a16-asym 32" << Damage([](const QString& d) {
             replace_in_config(d, "\"symmetric\": false", "\"symmetric\": true");
           })
        << "but the scheme is symmetric (every zero point is 0)";
    QTest::newRow("scales that disagree with the weights")
        << "llama w4a16 32" << Damage([](const QString& d) {
             rewrite_tensors(
                 d, [](const engine::io::TensorInfo& info, std::vector<std::int64_t>& shape) {
                   if (info.name == "model.layers.1.mlp.up_proj.weight_scale") shape = {256, 2};
                   return true;
                 });
           })
        << "model.layers.1.mlp.up_proj (compressed-tensors pack-quantized): weight_scale has "
           "shape [256, 2]; groups of 32 inputs need [256, 4]";
    QTest::newRow("g_idx out of range")
        << "llama w4a16 32 actorder" << Damage([](const QString& d) {
             edit_tensor(d, "model.layers.0.mlp.down_proj.weight_g_idx",
                         [](std::vector<std::byte>& bytes) {
                           const std::int32_t group = 99;
                           std::memcpy(bytes.data() + 4 * 7, &group, 4);
                         });
           })
        << "model.layers.0.mlp.down_proj (compressed-tensors pack-quantized): weight_g_idx[7] is "
           "99, but there are 8 groups";
    QTest::newRow("a layer the config ignores")
        << "llama w4a16 32" << Damage([](const QString& d) {
             replace_in_config(d, "\"lm_head\"", "\"lm_head\", \"re:.*up_proj$\"");
           })
        << "model.layers.0.mlp.up_proj holds pack-quantized weights, but config.json's "
           "quantization_config gives it no weight scheme";
    QTest::newRow("int8 weights beyond the scheme's bits")
        << "llama int8" << Damage([](const QString& d) {
             replace_in_config(d, "\"num_bits\": 8", "\"num_bits\": 4");
           })
        << "(compressed-tensors naive-quantized): weight holds";
    QTest::newRow("AWQ in another layout")
        << "llama awq 32" << Damage([](const QString& d) {
             replace_in_config(d, "\"version\": \"gemm\"", "\"version\": \"gemv\"");
           })
        << "config.json's quantization_config is AWQ in AutoAWQ's \"gemv\" layout, which Quire "
           "does not run";
    QTest::newRow("AWQ groups unlike the config's")
        << "llama awq 32" << Damage([](const QString& d) {
             replace_in_config(d, "\"group_size\": 32", "\"group_size\": 64");
           })
        << "model.layers.0.self_attn.q_proj (AWQ): qzeros has 4 groups of 32 inputs, but "
           "quantization_config's group_size is 64";
    QTest::newRow("3-bit GPTQ")
        << "llama gptq:8"
        << Damage([](const QString& d) { replace_in_config(d, "\"bits\": 8", "\"bits\": 3"); })
        << "quantization_config is 3-bit GPTQ, which Quire does not run; Quire runs 4- and 8-bit "
           "GPTQ";
  }

  void eachProblemNamesItsField() {
    QFETCH(QString, spec);
    QFETCH(Damage, damage);
    QFETCH(QString, message);
    const QString dir =
        root_.filePath(QString::fromLatin1(QTest::currentDataTag()).replace(u' ', u'-'));
    engine::modelgen::write_random_model(spec_of(spec), dir.toStdString());
    damage(dir);
    const Run run = run_cli(
        {QStringLiteral("logits"), dir, QStringLiteral("--tokens"), QStringLiteral("1,2,3")});
    QCOMPARE(run.exit_code, 2);
    QVERIFY2(run.err.contains(message), qPrintable(run.err));
    QCOMPARE(run.err.count(u'\n'), 1);  // one line
  }
};

QUIRE_TEST(QuantizedModelsTest)
#include "test_quantized_models.moc"
