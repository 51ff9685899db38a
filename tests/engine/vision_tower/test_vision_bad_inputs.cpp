// A vision tower Quire cannot run is refused with a message that names the
// tensor or key and what to do; the model's description keeps the language
// model usable and says why it cannot see images.

#include <QFile>
#include <QTemporaryDir>
#include <QTest>
#include <stdexcept>

#include "bad_model_support.h"
#include "quire/engine/io/safetensors_file.h"
#include "quire/engine/io/safetensors_writer.h"
#include "quire/engine/model_error.h"
#include "quire/engine/modelgen/random_model.h"
#include "quire/engine/runtime/model_description.h"
#include "quire/engine/vision/gemma3_vision_encoder.h"
#include "test_main.h"
#include "vision_test_support.h"

using namespace quire::engine;
using quire::test::set_config;
using quire::test::vision_spec;

namespace {

// The message load() throws, or "" when it loads.
std::string load_error(const std::filesystem::path& model) {
  try {
    vision::Gemma3VisionEncoder::load(model);
  } catch (const ModelError& error) {
    return error.what();
  }
  return {};
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

#define QUIRE_VERIFY_CONTAINS(text, part) \
  QVERIFY2(contains((text), (part)), ("\"" + std::string(part) + "\" not in: " + (text)).c_str())

const std::string kTower = "vision_tower.vision_model.";

// Stores tensor `from` of model.safetensors under the name `to`, as a format
// that quantizes it would name its codes.
void rename_tensor(const std::filesystem::path& model, const std::string& from,
                   const std::string& to) {
  const std::filesystem::path path = model / "model.safetensors";
  io::SafetensorsWriter writer;
  {
    const io::SafetensorsFile file = io::SafetensorsFile::open(path);
    for (const io::TensorInfo& info : file.tensors())
      writer.add(info.name == from ? to : info.name, info.dtype, info.shape, file.data(info));
  }
  writer.write(path);
}

}  // namespace

class VisionBadInputTest : public QObject {
  Q_OBJECT

  QTemporaryDir root_;
  int models_ = 0;

  std::filesystem::path fresh_model() {
    const modelgen::RandomModelSpec spec = vision_spec("bf16", "language_model.model.", 21);
    return quire::test::write_vision_model(spec, root_.filePath(QString::number(++models_)));
  }

  static QString qdir(const std::filesystem::path& path) {
    return QString::fromStdString(path.string());
  }

 private slots:
  void initTestCase() { QVERIFY(root_.isValid()); }

  void goodModelLoads() { QCOMPARE(load_error(fresh_model()), std::string()); }

  // gemma-3-4b-it's config.json as published: SiglipVisionConfig's defaults
  // fill in the epsilon and the activation it leaves out.
  void publishedConfig() {
    QFile file(QStringLiteral(QUIRE_TEST_DATA_DIR "/configs/gemma-3-4b-it.json"));
    QVERIFY(file.open(QIODevice::ReadOnly));
    const std::optional<vision::Gemma3VisionConfig> config =
        vision::parse_gemma3_vision_config(file.readAll().toStdString(), "gemma-3-4b-it.json");
    QVERIFY(config.has_value());
    const vision::SiglipConfig& tower = config->tower;
    QCOMPARE(tower.hidden_size, 1152);
    QCOMPARE(tower.intermediate_size, 4304);
    QCOMPARE(tower.num_layers, 27);
    QCOMPARE(tower.num_heads, 16);
    QCOMPARE(tower.head_dim(), 72);
    QCOMPARE(tower.num_channels, 3);
    QCOMPARE(tower.image_size, 896);
    QCOMPARE(tower.patch_size, 14);
    QCOMPARE(tower.patches(), 4096);
    QCOMPARE(tower.layer_norm_eps, 1e-6);
    QCOMPARE(tower.activation, vision::Gelu::Tanh);
    QCOMPARE(config->tokens_per_image, 256);
    QCOMPARE(config->tokens_per_side(), 16);
    QCOMPARE(config->pool_kernel(), 4);
    QCOMPARE(config->text_hidden_size, 2560);
  }

  void missingTensor() {
    const std::filesystem::path model = fresh_model();
    const std::string name = kTower + "encoder.layers.1.mlp.fc2.bias";
    quire::test::rewrite_tensors(
        qdir(model), [&](const io::TensorInfo& info, auto&) { return info.name != name; });
    const std::string error = load_error(model);
    QUIRE_VERIFY_CONTAINS(error, "has no tensor " + name);
    QUIRE_VERIFY_CONTAINS(error, "incomplete");
    // The language model still opens; the description says why images cannot be seen.
    const ModelDescription description = ModelDescription::open(model);
    QVERIFY(!description.vision.tower.has_value());
    QUIRE_VERIFY_CONTAINS(description.vision.problem, name);
  }

  void quantizedTower() {
    const std::filesystem::path model = fresh_model();
    const std::string key = kTower + "encoder.layers.0.self_attn.k_proj";
    rename_tensor(model, key + ".weight", key + ".q_weight");
    const std::string error = load_error(model);
    QUIRE_VERIFY_CONTAINS(error, key + " is quantized (" + key + ".q_weight)");
    QUIRE_VERIFY_CONTAINS(error, "FP16, BF16 or FP32");
  }

  void noTowerAtAll() {
    const std::filesystem::path model = fresh_model();
    quire::test::rewrite_tensors(qdir(model), [&](const io::TensorInfo& info, auto&) {
      return !info.name.starts_with(kTower);
    });
    const std::string error = load_error(model);
    QUIRE_VERIFY_CONTAINS(error, "neither " + kTower + "embeddings.patch_embedding.weight nor");
    QUIRE_VERIFY_CONTAINS(error, "holds only the language model");
  }

  void wrongShape() {
    const std::filesystem::path model = fresh_model();
    const std::string name = kTower + "embeddings.position_embedding.weight";
    quire::test::rewrite_tensors(qdir(model), [&](const io::TensorInfo& info, auto& shape) {
      if (info.name == name) shape = {15, 64};
      return true;
    });
    const std::string error = load_error(model);
    QUIRE_VERIFY_CONTAINS(error, name);
    QUIRE_VERIFY_CONTAINS(error, "[15, 64]");
    QUIRE_VERIFY_CONTAINS(error, "[16, 64]");
  }

  void configWiderThanWeights() {
    const std::filesystem::path model = fresh_model();
    set_config(model, "vision_config", "hidden_size", "128");
    const std::string error = load_error(model);
    QUIRE_VERIFY_CONTAINS(error, kTower + "embeddings.patch_embedding.weight");
    QUIRE_VERIFY_CONTAINS(error, "[128, 3, 14, 14]");
    QUIRE_VERIFY_CONTAINS(error, "[64, 3, 14, 14]");
  }

  void configWithFewerLayers() {
    const std::filesystem::path model = fresh_model();
    set_config(model, "vision_config", "num_hidden_layers", "1");
    const std::string error = load_error(model);
    QUIRE_VERIFY_CONTAINS(error, kTower + "encoder.layers.1.layer_norm1.weight");
    QUIRE_VERIFY_CONTAINS(error, "vision_config.num_hidden_layers is 1");
  }

  void configWithMoreLayers() {
    const std::filesystem::path model = fresh_model();
    set_config(model, "vision_config", "num_hidden_layers", "3");
    QUIRE_VERIFY_CONTAINS(load_error(model), "has no tensor " + kTower + "encoder.layers.2.");
  }

  void unknownActivation() {
    const std::filesystem::path model = fresh_model();
    set_config(model, "vision_config", "hidden_act", "\"relu\"");
    QUIRE_VERIFY_CONTAINS(load_error(model), "vision_config.hidden_act is \"relu\"");
  }

  void otherTower() {
    const std::filesystem::path model = fresh_model();
    set_config(model, "vision_config", "model_type", "\"clip_vision_model\"");
    QUIRE_VERIFY_CONTAINS(load_error(model), "Gemma 3's vision tower is SigLIP");
  }

  void tokensThatDoNotTileTheGrid() {
    const std::filesystem::path model = fresh_model();
    set_config(model, "", "mm_tokens_per_image", "9");  // 3 x 3 on a 4 x 4 grid
    QUIRE_VERIFY_CONTAINS(load_error(model), "mm_tokens_per_image (9) must be the square");
  }

  void headsThatDoNotDivide() {
    const std::filesystem::path model = fresh_model();
    set_config(model, "vision_config", "num_attention_heads", "3");
    QUIRE_VERIFY_CONTAINS(load_error(model),
                          "vision_config.num_attention_heads (3) does not divide hidden_size");
  }

  void textModelCannotSee() {
    modelgen::RandomModelSpec spec = modelgen::default_spec("gemma3");
    spec.sliding_window = 8;
    const std::filesystem::path model = root_.filePath(QStringLiteral("text")).toStdString();
    modelgen::write_random_model(spec, model);
    QUIRE_VERIFY_CONTAINS(load_error(model), "this model cannot see images");
  }

  void wrongPixelShape() {
    const vision::Gemma3VisionEncoder encoder = vision::Gemma3VisionEncoder::load(fresh_model());
    const std::vector<float> pixels(3 * 28 * 28);
    quire::kernels::ThreadPool pool(1);
    try {
      encoder.embed(pool, {pixels, 3, 28, 28});
      QFAIL("a 28 x 28 image was taken by a 56 x 56 tower");
    } catch (const std::invalid_argument& error) {
      QCOMPARE(std::string(error.what()),
               std::string("the vision tower takes 3 x 56 x 56 pixel values, not 3 x 28 x 28; "
                           "preprocess the image with the model's processor first"));
    }
    const std::vector<float> short_pixels(3 * 56 * 56 - 1);
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument, encoder.embed(pool, {short_pixels, 3, 56, 56}));
  }
};

QUIRE_TEST(VisionBadInputTest)
#include "test_vision_bad_inputs.moc"
