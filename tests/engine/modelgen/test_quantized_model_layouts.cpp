// make-model's integer formats in the layouts their tools write: tensor
// names, dtypes and shapes as llm-compressor (compressed-tensors'
// pack-quantized and naive-quantized), AutoAWQ (GEMM) and GPTQModel (8-bit)
// save them, which tensors stay dense and in what dtype, and config.json's
// quantization_config key for key.

#include <QFile>
#include <QTemporaryDir>
#include <QTest>
#include <cstring>
#include <map>
#include <nlohmann/json.hpp>

#include "quire/engine/io/model_tensors.h"
#include "quire/engine/modelgen/random_model.h"
#include "quire/engine/modelgen/random_model_spec.h"
#include "test_main.h"

using namespace quire::engine;
using quire::kernels::DType;
using Json = nlohmann::json;

namespace {

struct Expected {
  DType dtype;
  std::vector<std::int64_t> shape;
};
using Layer = std::map<std::string, Expected>;

modelgen::RandomModelSpec spec_of(const std::string& architecture, const std::string& format) {
  modelgen::RandomModelSpec spec = modelgen::default_spec(architecture);
  spec.format = modelgen::parse_format(format);
  return spec;
}

// The tensors whose names start with `prefix`, by the rest of their names.
Layer tensors_of(const io::ModelTensors& tensors, const std::string& prefix) {
  Layer layer;
  for (const std::string_view name : tensors.names()) {
    if (!name.starts_with(prefix)) continue;
    const auto info = tensors.get(name).info;
    layer[std::string(name.substr(prefix.size()))] = {info->dtype, info->shape};
  }
  return layer;
}

void compare(const Layer& actual, const Layer& expected) {
  QCOMPARE(actual.size(), expected.size());
  for (const auto& [name, want] : expected) {
    const auto found = actual.find(name);
    QVERIFY2(found != actual.end(), name.c_str());
    QCOMPARE(found->second.dtype, want.dtype);
    QCOMPARE(found->second.shape, want.shape);
  }
}

Json config_of(const std::filesystem::path& dir) {
  QFile file(QString::fromStdString((dir / "config.json").string()));
  if (!file.open(QIODevice::ReadOnly)) return nullptr;
  return Json::parse(file.readAll().toStdString());
}

}  // namespace

class QuantizedModelLayoutsTest : public QObject {
  Q_OBJECT

  QTemporaryDir root_;

  std::filesystem::path write(const modelgen::RandomModelSpec& spec, const std::string& name) {
    const std::filesystem::path dir = std::filesystem::path(root_.path().toStdString()) / name;
    modelgen::write_random_model(spec, dir);
    return dir;
  }

 private slots:
  // One Llama projection (q_proj: 128 inputs, 128 outputs) in each format.
  void projectionTensorsAsTheToolsWriteThem_data() {
    QTest::addColumn<QString>("format");
    QTest::addColumn<int>("groupSize");  // -1: the scheme's own
    QTest::addColumn<bool>("actorder");
    QTest::newRow("w4a16 groups of 32, actorder") << "w4a16" << 32 << true;
    QTest::newRow("w4a16-asym groups of 64") << "w4a16-asym" << 64 << false;
    QTest::newRow("w8a16 per channel") << "w8a16" << -1 << false;
    QTest::newRow("int8 per channel") << "int8" << -1 << false;
    QTest::newRow("awq groups of 32") << "awq" << 32 << false;
    QTest::newRow("gptq:8") << "gptq:8" << -1 << false;
  }

  void projectionTensorsAsTheToolsWriteThem() {
    QFETCH(QString, format);
    QFETCH(int, groupSize);
    QFETCH(bool, actorder);
    modelgen::RandomModelSpec spec = spec_of("llama", format.toStdString());
    if (groupSize >= 0) spec.group_size = groupSize;
    spec.actorder = actorder;
    const std::filesystem::path dir = write(spec, QTest::currentDataTag());
    const io::ModelTensors tensors = io::ModelTensors::open(dir);
    Layer expected;
    if (format == "w4a16") {
      expected = {{"weight_packed", {DType::I32, {128, 16}}},
                  {"weight_scale", {DType::BF16, {128, 4}}},
                  {"weight_shape", {DType::I64, {2}}},
                  {"weight_g_idx", {DType::I32, {128}}}};
    } else if (format == "w4a16-asym") {
      expected = {{"weight_packed", {DType::I32, {128, 16}}},
                  {"weight_scale", {DType::BF16, {128, 2}}},
                  {"weight_shape", {DType::I64, {2}}},
                  {"weight_zero_point", {DType::I32, {16, 2}}}};
    } else if (format == "w8a16") {
      expected = {{"weight_packed", {DType::I32, {128, 32}}},
                  {"weight_scale", {DType::BF16, {128, 1}}},
                  {"weight_shape", {DType::I64, {2}}}};
    } else if (format == "int8") {
      expected = {{"weight", {DType::I8, {128, 128}}}, {"weight_scale", {DType::BF16, {128, 1}}}};
    } else if (format == "awq") {
      expected = {{"qweight", {DType::I32, {128, 16}}},
                  {"qzeros", {DType::I32, {4, 16}}},
                  {"scales", {DType::F16, {4, 128}}}};
    } else {
      // GPTQModel, 8 bits in groups of 32 (make-model's GPTQ default), and
      // the zero bias GPTQ tools write on every projection.
      expected = {{"qweight", {DType::I32, {32, 128}}},
                  {"qzeros", {DType::I32, {4, 32}}},
                  {"scales", {DType::F16, {4, 128}}},
                  {"g_idx", {DType::I32, {128}}},
                  {"bias", {DType::F16, {128}}}};
    }
    compare(tensors_of(tensors, "model.layers.0.self_attn.q_proj."), expected);
    // The weights' values: weight_shape holds [out, in].
    if (format.startsWith("w")) {
      const std::span<const std::byte> shape =
          tensors.data("model.layers.0.self_attn.q_proj.weight_shape");
      std::int64_t values[2] = {};
      std::memcpy(values, shape.data(), sizeof(values));
      QCOMPARE(values[0], std::int64_t(128));
      QCOMPARE(values[1], std::int64_t(128));
    }
    // What the tools leave dense: embeddings and norms in the model's dtype
    // (BF16 for llm-compressor, FP16 for AutoAWQ and GPTQModel).
    const DType dense = format == "awq" || format == "gptq:8" ? DType::F16 : DType::BF16;
    QCOMPARE(tensors.get("model.embed_tokens.weight").info->dtype, dense);
    QCOMPARE(tensors.get("model.norm.weight").info->dtype, dense);
    const Json config = config_of(dir);
    QCOMPARE(config["torch_dtype"].get<std::string>(),
             std::string(dense == DType::BF16 ? "bfloat16" : "float16"));
  }

  // llm-compressor's quantization_config for W4A16_ASYM with group actorder:
  // every key its QuantizationArgs writes, lm_head and the routers ignored.
  void compressedTensorsConfigIsLlmCompressors() {
    modelgen::RandomModelSpec spec = spec_of("qwen3_moe", "w4a16-asym");
    spec.group_size = 32;
    spec.actorder = true;
    const Json quantization = config_of(write(spec, "qwen3moe"))["quantization_config"];
    const Json expected = Json::parse(R"({
      "config_groups": {"group_0": {
        "input_activations": null, "output_activations": null, "targets": ["Linear"],
        "weights": {"actorder": "group", "block_structure": null, "dynamic": false,
                    "group_size": 32, "num_bits": 4, "observer": "minmax",
                    "observer_kwargs": {}, "strategy": "group", "symmetric": false,
                    "type": "int"}}},
      "format": "pack-quantized", "global_compression_ratio": null,
      "ignore": ["lm_head", "re:.*mlp.gate$"], "kv_cache_scheme": null,
      "quant_method": "compressed-tensors", "quantization_status": "compressed"})");
    QCOMPARE(quantization.dump(), expected.dump());
    // Routers stay BF16 [experts, hidden]; experts are packed.
    const io::ModelTensors tensors =
        io::ModelTensors::open(root_.path().toStdString() + "/qwen3moe");
    QCOMPARE(tensors.get("model.layers.0.mlp.gate.weight").info->dtype, DType::BF16);
    QVERIFY(tensors.contains("model.layers.0.mlp.experts.1.up_proj.weight_packed"));
  }

  void naiveInt8ConfigIsPerChannel() {
    const Json quantization =
        config_of(write(spec_of("llama", "int8"), "int8"))["quantization_config"];
    QCOMPARE(quantization["format"].get<std::string>(), std::string("naive-quantized"));
    const Json& weights = quantization["config_groups"]["group_0"]["weights"];
    QCOMPARE(weights["num_bits"].get<int>(), 8);
    QCOMPARE(weights["strategy"].get<std::string>(), std::string("channel"));
    QVERIFY(weights["group_size"].is_null());
    QVERIFY(weights["symmetric"].get<bool>());
  }

  // AwqConfig.to_transformers_dict, and Mixtral's router left out as
  // AutoAWQ's Mixtral class leaves it.
  void awqConfigIsAutoAwqs() {
    modelgen::RandomModelSpec spec = spec_of("mixtral", "awq");
    spec.group_size = 64;
    const std::filesystem::path dir = write(spec, "mixtral-awq");
    const Json expected = Json::parse(R"({"quant_method": "awq", "zero_point": true,
      "group_size": 64, "bits": 4, "version": "gemm", "modules_to_not_convert": ["gate"]})");
    QCOMPARE(config_of(dir)["quantization_config"].dump(), expected.dump());
    const io::ModelTensors tensors = io::ModelTensors::open(dir);
    QCOMPARE(tensors.get("model.layers.0.block_sparse_moe.gate.weight").info->dtype, DType::F16);
    QVERIFY(tensors.contains("model.layers.0.block_sparse_moe.experts.0.w1.qweight"));
    // A channel-wise AWQ model writes group_size -1.
    spec = spec_of("llama", "awq");
    spec.group_size = 0;
    QCOMPARE(config_of(write(spec, "awq-channel"))["quantization_config"]["group_size"].get<int>(),
             -1);
  }

  void gptqConfigSaysItsBits() {
    const Json quantization =
        config_of(write(spec_of("llama", "gptq:8"), "gptq8"))["quantization_config"];
    QCOMPARE(quantization["bits"].get<int>(), 8);
    QCOMPARE(quantization["quant_method"].get<std::string>(), std::string("gptq"));
  }
};

QUIRE_TEST(QuantizedModelLayoutsTest)
#include "test_quantized_model_layouts.moc"
