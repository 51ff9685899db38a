// A Qwen2.5-VL vision tower Quire cannot run is refused with a message that
// names the tensor or key and what to do; so are patches that do not fit
// their grid.

#include <QFile>
#include <QTemporaryDir>
#include <QTest>
#include <stdexcept>

#include "bad_model_support.h"
#include "quire/engine/io/model_tensors.h"
#include "quire/engine/model_error.h"
#include "quire/engine/modelgen/random_model.h"
#include "quire/engine/vision/qwen25_vision_encoder.h"
#include "quire/engine/vision/vision_tower_summary.h"
#include "test_main.h"
#include "vision_test_support.h"

using namespace quire::engine;
using quire::test::qwen_vision_spec;
using quire::test::set_config;

namespace {

// The message load() throws, or "" when it loads.
std::string qwen_load_error(const std::filesystem::path& model) {
  try {
    vision::Qwen25VisionEncoder::load(model);
  } catch (const ModelError& error) {
    return error.what();
  }
  return {};
}

// The message embed() throws for these patches, or "" when it takes them.
std::string embed_error(const vision::Qwen25VisionEncoder& encoder, std::size_t values,
                        std::array<int, 3> grid) {
  const std::vector<float> patches(values);
  quire::kernels::ThreadPool pool(1);
  try {
    encoder.embed(pool, patches, grid);
  } catch (const std::invalid_argument& error) {
    return error.what();
  }
  return {};
}

#define QWEN_VERIFY_CONTAINS(text, part)           \
  QVERIFY2((text).find(part) != std::string::npos, \
           ("\"" + std::string(part) + "\" not in: " + (text)).c_str())

const std::string kVisual = "visual.";

// The vision_config keys of Qwen/Qwen2.5-VL-7B-Instruct's config.json, with
// the top-level keys the tower's reader looks at.
constexpr const char* kPublishedConfig = R"({
  "architectures": ["Qwen2_5_VLForConditionalGeneration"],
  "hidden_size": 3584,
  "model_type": "qwen2_5_vl",
  "vision_config": {
    "depth": 32,
    "hidden_act": "silu",
    "hidden_size": 1280,
    "intermediate_size": 3420,
    "num_heads": 16,
    "in_chans": 3,
    "out_hidden_size": 3584,
    "patch_size": 14,
    "spatial_merge_size": 2,
    "spatial_patch_size": 14,
    "window_size": 112,
    "fullatt_block_indexes": [7, 15, 23, 31],
    "tokens_per_second": 2,
    "temporal_patch_size": 2
  },
  "rope_scaling": {"type": "mrope", "mrope_section": [16, 24, 24]},
  "vocab_size": 152064
})";

}  // namespace

class Qwen25VisionBadInputTest : public QObject {
  Q_OBJECT

  QTemporaryDir root_;
  int models_ = 0;

  std::filesystem::path fresh_qwen_model() {
    const modelgen::RandomModelSpec spec = qwen_vision_spec("bf16", "model.", 23);
    return quire::test::write_vision_model(spec,
                                           root_.filePath(QStringLiteral("q%1").arg(++models_)));
  }

  static QString as_qdir(const std::filesystem::path& path) {
    return QString::fromStdString(path.string());
  }

 private slots:
  void initTestCase() { QVERIFY(root_.isValid()); }

  void goodModelLoads() { QCOMPARE(qwen_load_error(fresh_qwen_model()), std::string()); }

  void publishedConfig() {
    const std::optional<vision::Qwen25VisionConfig> config =
        vision::parse_qwen25_vision_config(kPublishedConfig, "config.json");
    QVERIFY(config.has_value());
    QCOMPARE(config->depth, 32);
    QCOMPARE(config->hidden_size, 1280);
    QCOMPARE(config->intermediate_size, 3420);
    QCOMPARE(config->num_heads, 16);
    QCOMPARE(config->head_dim(), 80);
    QCOMPARE(config->in_channels, 3);
    QCOMPARE(config->patch_size, 14);
    QCOMPARE(config->spatial_merge_size, 2);
    QCOMPARE(config->temporal_patch_size, 2);
    QCOMPARE(config->patch_values(), 1176);
    QCOMPARE(config->window_size, 112);
    QCOMPARE(config->window_tokens(), 4);
    QCOMPARE(config->out_hidden_size, 3584);
    QCOMPARE(config->fullatt_block_indexes, (std::vector<int>{7, 15, 23, 31}));
    QVERIFY(config->full_attention(7));
    QVERIFY(!config->full_attention(8));
    QCOMPARE(config->activation, vision::QwenVisionActivation::Silu);
  }

  void otherModelsAreNotQwen() {
    QVERIFY(!vision::parse_qwen25_vision_config(
                 R"({"architectures": ["Qwen2ForCausalLM"], "hidden_size": 64})", "config.json")
                 .has_value());
  }

  void missingTensor() {
    const std::filesystem::path model = fresh_qwen_model();
    const std::string name = kVisual + "blocks.1.mlp.down_proj.bias";
    quire::test::rewrite_tensors(
        as_qdir(model), [&](const io::TensorInfo& info, auto&) { return info.name != name; });
    const std::string error = qwen_load_error(model);
    QWEN_VERIFY_CONTAINS(error, "has no tensor " + name);
    QWEN_VERIFY_CONTAINS(error, "incomplete");
    // The description keeps the reason.
    const vision::VisionAvailability vision =
        vision::describe_vision(model, io::ModelTensors::open(model));
    QVERIFY(!vision.tower.has_value());
    QWEN_VERIFY_CONTAINS(vision.problem, name);
  }

  void wrongShape() {
    const std::filesystem::path model = fresh_qwen_model();
    const std::string name = kVisual + "blocks.0.attn.qkv.weight";
    quire::test::rewrite_tensors(as_qdir(model), [&](const io::TensorInfo& info, auto& shape) {
      if (info.name == name) shape = {96, 128};
      return true;
    });
    const std::string error = qwen_load_error(model);
    QWEN_VERIFY_CONTAINS(error, name);
    QWEN_VERIFY_CONTAINS(error, "[96, 128]");
    QWEN_VERIFY_CONTAINS(error, "[192, 64]");
  }

  void noTowerAtAll() {
    const std::filesystem::path model = fresh_qwen_model();
    quire::test::rewrite_tensors(as_qdir(model), [&](const io::TensorInfo& info, auto&) {
      return !info.name.starts_with(kVisual);
    });
    const std::string error = qwen_load_error(model);
    QWEN_VERIFY_CONTAINS(error, "neither visual.patch_embed.proj.weight nor model.visual.");
    QWEN_VERIFY_CONTAINS(error, "holds only the language model");
  }

  void configWithFewerBlocks() {
    const std::filesystem::path model = fresh_qwen_model();
    set_config(model, "vision_config", "depth", "1");
    set_config(model, "vision_config", "fullatt_block_indexes", "[0]");
    const std::string error = qwen_load_error(model);
    QWEN_VERIFY_CONTAINS(error, kVisual + "blocks.1.norm1.weight");
    QWEN_VERIFY_CONTAINS(error, "vision_config.depth is 1");
  }

  void configWithMoreBlocks() {
    const std::filesystem::path model = fresh_qwen_model();
    set_config(model, "vision_config", "depth", "3");
    QWEN_VERIFY_CONTAINS(qwen_load_error(model), "has no tensor " + kVisual + "blocks.2.");
  }

  void patchEmbeddingOfAnotherTemporalSize() {
    const std::filesystem::path model = fresh_qwen_model();
    set_config(model, "vision_config", "temporal_patch_size", "1");
    const std::string error = qwen_load_error(model);
    QWEN_VERIFY_CONTAINS(error, kVisual + "patch_embed.proj.weight");
    QWEN_VERIFY_CONTAINS(error, "[64, 3, 1, 14, 14]");
    QWEN_VERIFY_CONTAINS(error, "[64, 3, 2, 14, 14]");
  }

  void outputWiderThanTheLanguageModel() {
    const std::filesystem::path model = fresh_qwen_model();
    set_config(model, "vision_config", "out_hidden_size", "256");
    QWEN_VERIFY_CONTAINS(qwen_load_error(model),
                         "vision_config.out_hidden_size (256) is not the language model's "
                         "hidden_size (128)");
  }

  void fullAttentionBeyondDepth() {
    const std::filesystem::path model = fresh_qwen_model();
    set_config(model, "vision_config", "fullatt_block_indexes", "[1, 2]");
    QWEN_VERIFY_CONTAINS(qwen_load_error(model),
                         "vision_config.fullatt_block_indexes holds 2, which is not a block");
  }

  void unknownActivation() {
    const std::filesystem::path model = fresh_qwen_model();
    set_config(model, "vision_config", "hidden_act", "\"relu\"");
    QWEN_VERIFY_CONTAINS(qwen_load_error(model), "vision_config.hidden_act is \"relu\"");
  }

  void headsThatDoNotFitTheRotaryEmbedding() {
    const std::filesystem::path model = fresh_qwen_model();
    set_config(model, "vision_config", "num_heads", "8");  // heads of 8 are fine
    QCOMPARE(qwen_load_error(model), std::string());
    set_config(model, "vision_config", "num_heads", "32");  // heads of 2
    QWEN_VERIFY_CONTAINS(qwen_load_error(model),
                         "vision_config.num_heads (32) must divide hidden_size (64) into heads "
                         "whose width is a multiple of 4");
  }

  void windowSmallerThanAToken() {
    const std::filesystem::path model = fresh_qwen_model();
    set_config(model, "vision_config", "window_size", "20");
    QWEN_VERIFY_CONTAINS(qwen_load_error(model), "vision_config.window_size (20) must be at least");
  }

  void textModelCannotSee() {
    modelgen::RandomModelSpec spec = modelgen::default_spec("qwen2");
    const std::filesystem::path model = root_.filePath(QStringLiteral("qwen text")).toStdString();
    modelgen::write_random_model(spec, model);
    QWEN_VERIFY_CONTAINS(qwen_load_error(model), "this model cannot see images");
  }

  void patchesThatDoNotFitTheGrid() {
    const vision::Qwen25VisionEncoder encoder =
        vision::Qwen25VisionEncoder::load(fresh_qwen_model());
    QCOMPARE(embed_error(encoder, 4 * 6 * 1176, {1, 4, 6}), std::string());
    QCOMPARE(embed_error(encoder, 4 * 6 * 1176 - 1, {1, 4, 6}),
             std::string("grid_thw (1, 4, 6) is 24 patches of 1176 values (28224), not 28223 "
                         "values"));
    QCOMPARE(embed_error(encoder, 3 * 6 * 1176, {1, 3, 6}),
             std::string("the vision tower takes a grid of whole 2 x 2 merge blocks, not grid_thw "
                         "(1, 3, 6); preprocess the image with the model's processor"));
    QWEN_VERIFY_CONTAINS(embed_error(encoder, 0, {0, 4, 6}), "not grid_thw (0, 4, 6)");
  }
};

QUIRE_TEST(Qwen25VisionBadInputTest)
#include "test_qwen25_vision_bad_inputs.moc"
