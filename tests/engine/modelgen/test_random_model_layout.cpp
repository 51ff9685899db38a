// Generated model directories read back through the engine's own readers, for
// every architecture and weight format: files, config.json, tokenizer, tensor
// names, dtypes and shapes, and the EXL2/GPTQ layer layouts.

#include <QTemporaryDir>
#include <QTest>
#include <algorithm>
#include <numeric>
#include <set>

#include "modelgen_test_support.h"
#include "quire/engine/formats/exl2_layout.h"
#include "quire/engine/formats/gptq_layout.h"
#include "quire/engine/io/model_tensors.h"
#include "quire/engine/model/model_config.h"
#include "quire/engine/model_error.h"
#include "quire/engine/modelgen/random_model.h"
#include "quire/engine/runtime/model_description.h"
#include "quire/engine/tokenizer/tokenizer.h"
#include "test_main.h"

using namespace quire::engine;
using modelgen::RandomModelSpec;
using modelgen::WeightFormat;
using quire::test::ModelVariant;
namespace fs = std::filesystem;

namespace {

formats::TensorView view(const io::ModelTensors& tensors, const std::string& name) {
  const io::ModelTensors::Located located = tensors.get(name);
  return {located.info->dtype, located.info->shape, tensors.data(name)};
}

std::optional<formats::TensorView> optional_view(const io::ModelTensors& tensors,
                                                 const std::string& name) {
  if (!tensors.contains(name)) return std::nullopt;
  return view(tensors, name);
}

}  // namespace

class RandomModelLayoutTest : public QObject {
  Q_OBJECT

 private:
  QTemporaryDir root_;
  std::vector<ModelVariant> variants_ = quire::test::model_variants();

  fs::path dir_of(int index) const {
    return fs::path(root_.path().toStdString()) / ("model" + std::to_string(index));
  }

  void add_rows() {
    QTest::addColumn<int>("index");
    for (std::size_t i = 0; i < variants_.size(); ++i) {
      QTest::newRow(variants_[i].name.c_str()) << int(i);
    }
  }

 private slots:
  void initTestCase() {
    QVERIFY(root_.isValid());
    for (std::size_t i = 0; i < variants_.size(); ++i) {
      modelgen::write_random_model(variants_[i].spec, dir_of(int(i)));
    }
  }

  void holdsTheFilesOfADownloadedModel_data() { add_rows(); }
  void holdsTheFilesOfADownloadedModel() {
    QFETCH(int, index);
    const RandomModelSpec& spec = variants_[std::size_t(index)].spec;
    std::set<std::string> expected = {"config.json", "generation_config.json",
                                      "tokenizer_config.json", "tokenizer.model"};
    if (spec.shards == 1) {
      expected.insert("model.safetensors");
    } else {
      expected.insert("model.safetensors.index.json");
      for (int shard = 1; shard <= spec.shards; ++shard) {
        expected.insert(
            QString::asprintf("model-%05d-of-%05d.safetensors", shard, spec.shards).toStdString());
      }
    }
    std::set<std::string> found;
    for (const auto& [name, bytes] : quire::test::directory_contents(dir_of(index))) {
      found.insert(name);
      QVERIFY2(!bytes.isEmpty(), name.c_str());
    }
    QCOMPARE(found, expected);
  }

  void configMatchesTheSpec_data() { add_rows(); }
  void configMatchesTheSpec() {
    QFETCH(int, index);
    const RandomModelSpec& spec = variants_[std::size_t(index)].spec;
    const ModelConfig config = load_model_config(dir_of(index));
    const std::map<std::string, std::string> classes = {{"llama", "LlamaForCausalLM"},
                                                        {"mistral", "MistralForCausalLM"},
                                                        {"qwen2", "Qwen2ForCausalLM"}};
    QCOMPARE(config.architecture, classes.at(spec.architecture));
    QCOMPARE(config.hidden_size, std::int64_t{spec.hidden});
    QCOMPARE(config.num_layers, spec.layers);
    QCOMPARE(config.num_heads, spec.heads);
    QCOMPARE(config.num_kv_heads, spec.kv_heads);
    QCOMPARE(config.head_dim, spec.head_dim != 0 ? spec.head_dim : spec.hidden / spec.heads);
    QCOMPARE(config.intermediate_size, std::int64_t{spec.intermediate});
    QCOMPARE(config.vocab_size, std::int64_t{spec.vocab});
    QCOMPARE(config.rms_norm_eps, 1e-5);
    QCOMPARE(config.rope_theta, spec.rope_theta);
    QCOMPARE(config.max_position_embeddings, spec.max_position_embeddings);
    QCOMPARE(int(config.rope_scaling.type), int(spec.rope_scaling.type));
    if (spec.rope_scaling.type != modelgen::RopeScalingSpec::Type::None) {
      QCOMPARE(config.rope_scaling.factor, spec.rope_scaling.factor);
    }
    if (spec.rope_scaling.type == modelgen::RopeScalingSpec::Type::Llama3) {
      QCOMPARE(config.rope_scaling.factor, 8.0);
      QCOMPARE(config.rope_scaling.low_freq_factor, 1.0);
      QCOMPARE(config.rope_scaling.high_freq_factor, 4.0);
      QCOMPARE(config.rope_scaling.original_max_position_embeddings, std::int64_t{64});
    }
    QCOMPARE(config.tie_word_embeddings,
             spec.tie_embeddings.value_or(spec.format.kind != WeightFormat::EXL2));
    QCOMPARE(config.attention_bias, spec.architecture == "qwen2");
    QCOMPARE(config.torch_dtype,
             std::string(spec.format.kind == WeightFormat::BF16 ? "bfloat16" : "float16"));
    const std::vector<int> windows(std::size_t(spec.layers), spec.sliding_window.value_or(0));
    QCOMPARE(config.sliding_windows, windows);
    switch (spec.format.kind) {
      case WeightFormat::EXL2:
        QCOMPARE(config.quantization.method, std::string("exl2"));
        break;
      case WeightFormat::GPTQ:
        QCOMPARE(config.quantization.method, std::string("gptq"));
        QCOMPARE(config.quantization.checkpoint_format,
                 std::string(spec.gptq_v2 ? "gptq_v2" : "gptq"));
        break;
      default:
        QVERIFY(config.quantization.method.empty());
    }
  }

  void tokenizerLoads_data() { add_rows(); }
  void tokenizerLoads() {
    QFETCH(int, index);
    const RandomModelSpec& spec = variants_[std::size_t(index)].spec;
    const Tokenizer tokenizer = Tokenizer::load(dir_of(index));
    QCOMPARE(tokenizer.vocab_size(), spec.vocab);
    QCOMPARE(tokenizer.bos(), std::optional<std::int32_t>(1));
    QCOMPARE(tokenizer.eos(), std::vector<std::int32_t>{2});
    QVERIFY(tokenizer.adds_bos());
    const std::string text = "The quick brown fox, 42 times.";
    const std::vector<std::int32_t> ids = tokenizer.encode(text, true);
    QCOMPARE(ids.front(), 1);
    QVERIFY(std::all_of(ids.begin(), ids.end(), [&](std::int32_t id) { return id < spec.vocab; }));
    QCOMPARE(tokenizer.decode(ids), text);
  }

  void tensorsHaveTheExpectedDtypesAndShapes_data() { add_rows(); }
  void tensorsHaveTheExpectedDtypesAndShapes() {
    QFETCH(int, index);
    const RandomModelSpec& spec = variants_[std::size_t(index)].spec;
    const io::ModelTensors tensors = io::ModelTensors::open(dir_of(index));
    QCOMPARE(int(tensors.files().size()), spec.shards);
    const auto expected = quire::test::expected_tensors(spec);
    std::set<std::string> names;
    for (const std::string_view name : tensors.names())
      names.insert(std::string(name));
    std::set<std::string> expected_names;
    for (const auto& [name, tensor] : expected)
      expected_names.insert(name);
    QCOMPARE(names, expected_names);
    for (const auto& [name, tensor] : expected) {
      std::vector<std::int64_t> shape = tensor.shape;
      std::replace(shape.begin(), shape.end(), quire::test::kAny, io::ModelTensors::kAnyDim);
      try {
        tensors.require(name, {tensor.dtype}, shape);
      } catch (const ModelError& error) {
        QFAIL(error.what());
      }
    }
  }

  void quantizedLayersDescribeCleanly_data() { add_rows(); }
  void quantizedLayersDescribeCleanly() {
    QFETCH(int, index);
    const RandomModelSpec& spec = variants_[std::size_t(index)].spec;
    if (spec.format.kind != WeightFormat::EXL2 && spec.format.kind != WeightFormat::GPTQ) {
      QSKIP("dense weights");
    }
    const io::ModelTensors tensors = io::ModelTensors::open(dir_of(index));
    for (const quire::test::ExpectedLinear& linear : quire::test::expected_linears(spec)) {
      const std::string& key = linear.key;
      const formats::LinearShape shape{linear.in, linear.out};
      if (spec.format.kind == WeightFormat::GPTQ) {
        if (linear.head) continue;  // FP16
        const formats::GptqTensors parts{
            view(tensors, key + ".qweight"), view(tensors, key + ".qzeros"),
            view(tensors, key + ".scales"), optional_view(tensors, key + ".g_idx"),
            optional_view(tensors, key + ".bias")};
        const formats::GptqLayout layout = describe_gptq(key, parts, {4, spec.gptq_v2}, shape);
        QCOMPARE(layout.group_size, spec.gptq_group_size);
        QCOMPARE(layout.exact_zeros, spec.gptq_v2);
        // Act-order: a g_idx that is not k / group_size, with every group used.
        QCOMPARE(layout.g_idx.empty(), !spec.gptq_act_order);
        if (spec.gptq_act_order) {
          QVERIFY(!std::is_sorted(layout.g_idx.begin(), layout.g_idx.end()));
          QCOMPARE(std::set<std::int32_t>(layout.g_idx.begin(), layout.g_idx.end()).size(),
                   std::size_t(layout.groups));
        }
        continue;
      }
      const formats::Exl2Tensors parts{
          view(tensors, key + ".q_weight"), view(tensors, key + ".q_invperm"),
          view(tensors, key + ".q_scale"),  view(tensors, key + ".q_scale_max"),
          view(tensors, key + ".q_groups"), optional_view(tensors, key + ".bias")};
      const formats::Exl2Layout layout = describe_exl2(key, parts, shape);
      std::set<int> widths;
      for (const quire::kernels::Exl2Group& group : layout.groups)
        widths.insert(group.bits);
      if (linear.head) {
        QCOMPARE(widths, std::set<int>{spec.exl2_head_bits});
      } else {
        QVERIFY2(widths.size() > 1, key.c_str());
        QVERIFY(std::abs(layout.bits_per_weight() - spec.format.exl2_bits) < 0.5);
      }
      std::vector<std::int32_t> identity(layout.perm.size());
      std::iota(identity.begin(), identity.end(), 0);
      QVERIFY2(layout.perm != identity, key.c_str());
    }
  }

  // The runtime's own description of a model directory accepts every variant.
  void runtimeDescribesTheModel_data() { add_rows(); }
  void runtimeDescribesTheModel() {
    QFETCH(int, index);
    const RandomModelSpec& spec = variants_[std::size_t(index)].spec;
    const ModelDescription model = ModelDescription::open(dir_of(index));
    QCOMPARE(int(model.layers.size()), spec.layers);
    QCOMPARE(model.head_tied, spec.tie_embeddings.value_or(spec.format.kind != WeightFormat::EXL2));
    const LinearFormat expected = spec.format.kind == WeightFormat::EXL2   ? LinearFormat::Exl2
                                  : spec.format.kind == WeightFormat::GPTQ ? LinearFormat::Gptq
                                                                           : LinearFormat::Dense;
    for (const LayerDescription& layer : model.layers) {
      layer.for_each_linear(
          [&](const LinearDescription& linear) { QCOMPARE(int(linear.format), int(expected)); });
      QCOMPARE(layer.q.has_bias, spec.architecture == "qwen2");
    }
  }
};

QUIRE_TEST(RandomModelLayoutTest)
#include "test_random_model_layout.moc"
