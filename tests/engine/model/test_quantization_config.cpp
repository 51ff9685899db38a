// quantization_config as GPTQ, AutoAWQ and compressed-tensors write it: the
// keys read, compressed-tensors' inferences (strategy from group_size,
// actorder aliases), which config group targets a layer, and malformed keys.

#include <QTest>
#include <string>

#include "quire/engine/model/model_config.h"
#include "quire/engine/model_error.h"
#include "test_main.h"

using namespace quire::engine;

namespace {

ModelConfig with_quantization(const std::string& quantization) {
  return parse_model_config(R"({
    "architectures": ["LlamaForCausalLM"], "hidden_size": 128, "num_hidden_layers": 2,
    "num_attention_heads": 4, "num_key_value_heads": 2, "intermediate_size": 256,
    "vocab_size": 320, "quantization_config": )" +
                                quantization + "}",
                            "config.json");
}

// llm-compressor's W4A16 for Qwen3-MoE: every Linear but lm_head and the routers.
const char* kW4a16 = R"({
  "quant_method": "compressed-tensors", "format": "pack-quantized",
  "quantization_status": "compressed",
  "config_groups": {
    "group_0": {"targets": ["Linear"], "input_activations": null,
                "weights": {"num_bits": 4, "type": "int", "symmetric": true,
                            "strategy": "group", "group_size": 128, "actorder": "static"}},
    "group_1": {"targets": ["re:.*down_proj$"],
                "weights": {"num_bits": 8, "symmetric": false, "group_size": -1,
                            "actorder": true}}},
  "ignore": ["lm_head", "re:.*mlp.gate$"]})";

}  // namespace

class QuantizationConfigTest : public QObject {
  Q_OBJECT

 private slots:
  void readsCompressedTensorsGroups() {
    const QuantizationConfig q = with_quantization(kW4a16).quantization;
    QCOMPARE(q.method, std::string("compressed-tensors"));
    QCOMPARE(q.format, std::string("pack-quantized"));
    QCOMPARE(q.status, std::string("compressed"));
    QCOMPARE(q.groups.size(), std::size_t(2));
    const CompressedTensorsArgs& w4 = *q.groups[0].weights;
    QCOMPARE(w4.num_bits, 4);
    QCOMPARE(w4.strategy, std::string("group"));
    QCOMPARE(w4.group_size, 128);
    QCOMPARE(w4.actorder, std::string("weight"));  // "static" is its alias
    QVERIFY(!q.groups[0].input_activations);
    // Unwritten keys take compressed-tensors' defaults and inferences.
    const CompressedTensorsArgs& w8 = *q.groups[1].weights;
    QCOMPARE(w8.type, std::string("int"));
    QCOMPARE(w8.strategy, std::string("channel"));  // group_size -1
    QCOMPARE(w8.actorder, std::string("group"));    // true
    QVERIFY(!w8.symmetric);
  }

  // compressed-tensors' matching: "Linear" takes every projection, "re:"
  // patterns match from the start of the name, "ignore" wins over targets,
  // and the first group that targets a layer is its group.
  void findsTheGroupOfEachLayer_data() {
    QTest::addColumn<QString>("layer");
    QTest::addColumn<QString>("group");
    QTest::newRow("an attention projection") << "model.layers.0.self_attn.q_proj"
                                             << "group_0";
    QTest::newRow("an expert's down_proj") << "model.layers.3.mlp.experts.7.down_proj"
                                           << "group_0";
    QTest::newRow("lm_head") << "lm_head"
                             << "";
    QTest::newRow("a router") << "model.layers.3.mlp.gate"
                              << "";
    QTest::newRow("gate_proj is not the router") << "model.layers.3.mlp.gate_proj"
                                                 << "group_0";
  }

  void findsTheGroupOfEachLayer() {
    QFETCH(QString, layer);
    QFETCH(QString, group);
    const QuantizationConfig q = with_quantization(kW4a16).quantization;
    const CompressedTensorsGroup* found = q.group_for(layer.toStdString());
    QCOMPARE(found ? QString::fromStdString(found->name) : QString(), group);
  }

  void patternsMatchFromTheStartOfTheName() {
    const QuantizationConfig q = with_quantization(R"({"quant_method": "compressed-tensors",
      "config_groups": {"g": {"targets": ["re:layers\\.1\\."], "weights": {"num_bits": 4}}}})")
                                     .quantization;
    QVERIFY(q.group_for("layers.1.mlp.up_proj") != nullptr);
    QVERIFY(q.group_for("model.layers.1.mlp.up_proj") == nullptr);
  }

  void readsGptqAndAwqKeys() {
    const QuantizationConfig gptq =
        with_quantization(
            R"({"quant_method": "gptq", "bits": 8, "group_size": 128, "checkpoint_format": "gptq_v2"})")
            .quantization;
    QCOMPARE(gptq.bits, 8);
    QCOMPARE(gptq.group_size, 128);
    QCOMPARE(gptq.checkpoint_format, std::string("gptq_v2"));
    const QuantizationConfig awq =
        with_quantization(R"({"quant_method": "awq", "zero_point": true, "group_size": -1,
                              "bits": 4, "version": "GEMM", "modules_to_not_convert": ["gate"]})")
            .quantization;
    QCOMPARE(awq.version, std::string("gemm"));
    QCOMPARE(awq.group_size, -1);
    QVERIFY(awq.zero_point);
    QCOMPARE(awq.modules_not_converted, std::vector<std::string>{"gate"});
    // AutoAWQ's own spelling.
    const QuantizationConfig own =
        with_quantization(R"({"quant_method": "awq", "w_bit": 4, "q_group_size": 64})")
            .quantization;
    QCOMPARE(own.bits, 4);
    QCOMPARE(own.group_size, 64);
    // EXL2's fractional bits are not GPTQ's.
    QCOMPARE(with_quantization(R"({"quant_method": "exl2", "bits": 4.65})").quantization.bits, 0);
  }

  void malformedKeysNameTheField_data() {
    QTest::addColumn<QString>("quantization");
    QTest::addColumn<QString>("message");
    QTest::newRow("bits as text") << R"({"quant_method": "gptq", "bits": "4"})"
                                  << "quantization_config.bits must be a whole number";
    QTest::newRow("targets not a list")
        << R"({"quant_method": "compressed-tensors", "config_groups": {"g": {"targets": 3}}})"
        << "quantization_config.config_groups.g.targets must be a list of module names";
    QTest::newRow("num_bits a fraction")
        << R"({"quant_method": "compressed-tensors",
              "config_groups": {"g": {"weights": {"num_bits": 4.5}}}})"
        << "quantization_config.config_groups.g.weights.num_bits must be a whole number";
    // A plain string: moc misreads a parenthesis inside a raw string.
    QTest::newRow("a broken pattern")
        << "{\"quant_method\": \"compressed-tensors\", \"ignore\": [\"re:(unclosed\"]}"
        << "quantization_config.ignore holds \"re:(unclosed\"";
    QTest::newRow("actorder a number")
        << R"({"quant_method": "compressed-tensors",
              "config_groups": {"g": {"weights": {"actorder": 2}}}})"
        << "quantization_config.config_groups.g.weights.actorder must be";
  }

  void malformedKeysNameTheField() {
    QFETCH(QString, quantization);
    QFETCH(QString, message);
    try {
      with_quantization(quantization.toStdString());
      QFAIL("no ModelError");
    } catch (const ModelError& error) {
      QVERIFY2(QString(error.what()).contains(message), error.what());
    }
  }
};

QUIRE_TEST(QuantizationConfigTest)
#include "test_quantization_config.moc"
