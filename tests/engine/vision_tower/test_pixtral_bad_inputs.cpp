// A Pixtral tower or Mistral 3 projector Quire cannot run is refused with a
// message that names the tensor or key and what to do; describe_vision()
// keeps it as the reason the model cannot see images.

#include <QTemporaryDir>
#include <QTest>
#include <stdexcept>

#include "bad_model_support.h"
#include "pixtral_test_support.h"
#include "quire/engine/io/model_tensors.h"
#include "quire/engine/io/safetensors_file.h"
#include "quire/engine/io/safetensors_writer.h"
#include "quire/engine/model_error.h"
#include "quire/engine/modelgen/random_model.h"
#include "quire/engine/vision/pixtral_vision_encoder.h"
#include "quire/engine/vision/vision_tower_summary.h"
#include "test_main.h"
#include "vision_test_support.h"

using namespace quire::engine;
using quire::test::pixtral_spec;
using quire::test::set_config;

namespace {

// The message PixtralVisionEncoder::load() throws, or "" when it loads.
std::string pixtral_load_error(const std::filesystem::path& model) {
  try {
    vision::PixtralVisionEncoder::load(model);
  } catch (const ModelError& error) {
    return error.what();
  }
  return {};
}

#define QUIRE_EXPECT_PART(text, part)                         \
  QVERIFY2(std::string(text).find(part) != std::string::npos, \
           ("\"" + std::string(part) + "\" not in: " + std::string(text)).c_str())

const std::string kPixtralTower = "vision_tower.";
const std::string kPixtralLayer1 = "vision_tower.transformer.layers.1.";

}  // namespace

class PixtralBadInputTest : public QObject {
  Q_OBJECT

  QTemporaryDir root_;
  int models_ = 0;

  std::filesystem::path fresh_model(bool projector_bias = false) {
    modelgen::RandomModelSpec spec = pixtral_spec("bf16", "language_model.model.", 23);
    spec.vision.projector_bias = projector_bias;
    const std::filesystem::path path =
        root_.filePath(QStringLiteral("bad%1").arg(++models_)).toStdString();
    modelgen::write_random_model(spec, path);
    return path;
  }

  static QString qdir(const std::filesystem::path& path) {
    return QString::fromStdString(path.string());
  }

  // Drops tensor `name` from model.safetensors.
  static void drop(const std::filesystem::path& model, const std::string& name) {
    quire::test::rewrite_tensors(
        qdir(model), [&](const io::TensorInfo& info, auto&) { return info.name != name; });
  }

 private slots:
  void initTestCase() { QVERIFY(root_.isValid()); }

  void goodModelLoads() { QCOMPARE(pixtral_load_error(fresh_model()), std::string()); }

  void missingTensorIsNamed() {
    const std::filesystem::path model = fresh_model();
    const std::string missing = kPixtralLayer1 + "feed_forward.up_proj.weight";
    drop(model, missing);
    const std::string error = pixtral_load_error(model);
    QCOMPARE(error, model.string() + ": the vision side has no tensor " + missing +
                        "; the download is incomplete or does not match config.json's "
                        "vision_config");
    // The description keeps the same reason, and no tower.
    const vision::VisionAvailability vision =
        vision::describe_vision(model, io::ModelTensors::open(model));
    QVERIFY(!vision.tower.has_value());
    QCOMPARE(vision.problem, error);
  }

  void noTowerAtAll() {
    const std::filesystem::path model = fresh_model();
    drop(model, kPixtralTower + "patch_conv.weight");
    QCOMPARE(pixtral_load_error(model),
             model.string() +
                 ": config.json describes a Pixtral vision tower, but the files hold neither "
                 "vision_tower.patch_conv.weight nor model.vision_tower.patch_conv.weight; the "
                 "download is incomplete, or holds only the language model");
  }

  void shapeDisagreesWithConfig() {
    const std::filesystem::path model = fresh_model();
    set_config(model, "vision_config", "intermediate_size", "128");
    const std::string error = pixtral_load_error(model);
    QUIRE_EXPECT_PART(error, "vision_tower.transformer.layers.0.feed_forward.gate_proj.weight");
    QUIRE_EXPECT_PART(error, "[128, 64]");
    QUIRE_EXPECT_PART(error, "[96, 64]");
  }

  void moreLayersThanConfigured() {
    const std::filesystem::path model = fresh_model();
    set_config(model, "vision_config", "num_hidden_layers", "1");
    QCOMPARE(pixtral_load_error(model),
             model.string() + ": the files hold " + kPixtralLayer1 +
                 "attention_norm.weight, but vision_config.num_hidden_layers is 1; config.json "
                 "does not match the vision tower's weights");
  }

  void quantizedTowerIsRefused() {
    const std::filesystem::path model = fresh_model();
    const std::string weight = kPixtralLayer1 + "attention.q_proj.weight";
    quire::test::rewrite_tensors(
        qdir(model), [&](const io::TensorInfo& info, auto&) { return info.name != weight; });
    // A quantized format stores codes under another name.
    {
      const std::filesystem::path path = model / "model.safetensors";
      io::SafetensorsWriter writer;
      const io::SafetensorsFile file = io::SafetensorsFile::open(path);
      for (const io::TensorInfo& info : file.tensors())
        writer.add(info.name, info.dtype, info.shape, file.data(info));
      const std::vector<std::byte> codes(64 * 16);
      writer.add(kPixtralLayer1 + "attention.q_proj.qweight", quire::kernels::DType::I32, {16, 16},
                 codes);
      writer.write(model / "model.safetensors.new");
    }
    std::filesystem::rename(model / "model.safetensors.new", model / "model.safetensors");
    QUIRE_EXPECT_PART(pixtral_load_error(model),
                      kPixtralLayer1 + "attention.q_proj is quantized (" + kPixtralLayer1 +
                          "attention.q_proj.qweight); Quire runs the vision tower from FP16, BF16 "
                          "or FP32 weights");
  }

  void projectorBiasFlagMustMatch() {
    const std::filesystem::path without = fresh_model(false);
    set_config(without, "", "multimodal_projector_bias", "true");
    QCOMPARE(pixtral_load_error(without),
             without.string() +
                 ": the vision side has no tensor multi_modal_projector.linear_1.bias; "
                 "config.json's multimodal_projector_bias is true, but the files hold no "
                 "projector biases");
    const std::filesystem::path with = fresh_model(true);
    set_config(with, "", "multimodal_projector_bias", "false");
    QCOMPARE(pixtral_load_error(with),
             with.string() +
                 ": the files hold multi_modal_projector.linear_1.bias, but config.json's "
                 "multimodal_projector_bias is false (or absent); config.json does not match "
                 "the projector's weights");
  }

  void badConfigKeysAreNamed_data() {
    QTest::addColumn<QString>("object");
    QTest::addColumn<QString>("key");
    QTest::addColumn<QString>("value");
    QTest::addColumn<QString>("message");
    QTest::newRow("feature layers as a list")
        << ""
        << "vision_feature_layer"
        << "[-1, -2]"
        << "config.json: vision_feature_layer is [-1,-2]; Quire takes one layer's output (a whole "
           "number), not a list of layers";
    QTest::newRow("feature layer beyond the tower")
        << ""
        << "vision_feature_layer"
        << "3"
        << "config.json: vision_feature_layer must be a whole number from -3 to 2, not 3";
    QTest::newRow("gate activation")
        << "vision_config"
        << "hidden_act"
        << "\"relu\""
        << "config.json: vision_config.hidden_act is \"relu\"; Quire runs Pixtral towers with "
           "silu, gelu, gelu_pytorch_tanh or gelu_new";
    QTest::newRow("projector activation")
        << ""
        << "projector_hidden_act"
        << "\"silu\""
        << "config.json: projector_hidden_act is \"silu\"; Quire runs the Mistral 3 projector "
           "with gelu, gelu_pytorch_tanh or gelu_new";
    QTest::newRow("head_dim")
        << "vision_config"
        << "head_dim"
        << "32"
        << "config.json: vision_config.head_dim (32) is not hidden_size / num_attention_heads "
           "(16), which Pixtral's attention uses";
    QTest::newRow("tower type")
        << "vision_config"
        << "model_type"
        << "\"siglip_vision_model\""
        << "config.json: vision_config.model_type is \"siglip_vision_model\"; Mistral 3's vision "
           "tower is Pixtral (model_type pixtral)";
    QTest::newRow("image size and merge")
        << "vision_config"
        << "image_size"
        << "98"
        << "config.json: vision_config.image_size (98) is not a multiple of patch_size x "
           "spatial_merge_size (28)";
  }

  void badConfigKeysAreNamed() {
    QFETCH(QString, object);
    QFETCH(QString, key);
    QFETCH(QString, value);
    QFETCH(QString, message);
    const std::filesystem::path model = fresh_model();
    set_config(model, qPrintable(object), qPrintable(key), qPrintable(value));
    QCOMPARE(pixtral_load_error(model), (model / message.toStdString()).string());
  }

  void badPixelsAreRefused_data() {
    QTest::addColumn<int>("channels");
    QTest::addColumn<int>("height");
    QTest::addColumn<int>("width");
    QTest::addColumn<int>("values");
    QTest::addColumn<QString>("message");
    const QString sides = QStringLiteral(
        "the Pixtral tower takes images whose height and width are multiples of 28 (patch_size 14 "
        "x spatial_merge_size 2) up to 112 pixels; the %1 pixel tensor's %2 is not; preprocess the "
        "image with the model's processor first");
    QTest::newRow("height not whole squares")
        << 3 << 42 << 56 << 3 * 42 * 56 << sides.arg(QStringLiteral("3 x 42 x 56"), "height");
    QTest::newRow("wider than image_size")
        << 3 << 56 << 140 << 3 * 56 * 140 << sides.arg(QStringLiteral("3 x 56 x 140"), "width");
    QTest::newRow("one channel") << 1 << 56 << 56 << 56 * 56
                                 << QStringLiteral(
                                        "the Pixtral tower takes 3 channels, not the 1 "
                                        "of a 1 x 56 x 56 pixel tensor");
    QTest::newRow("values missing") << 3 << 56 << 56 << 100
                                    << QStringLiteral(
                                           "a 3 x 56 x 56 pixel tensor holds 9408 "
                                           "values, not 100");
  }

  void badPixelsAreRefused() {
    QFETCH(int, channels);
    QFETCH(int, height);
    QFETCH(int, width);
    QFETCH(int, values);
    QFETCH(QString, message);
    static const std::filesystem::path model = fresh_model();
    const vision::PixtralVisionEncoder encoder = vision::PixtralVisionEncoder::load(model);
    const std::vector<float> pixels(std::size_t(values), 0.25f);
    quire::kernels::ThreadPool pool(1);
    try {
      encoder.embed(pool, {pixels, channels, height, width});
      QFAIL("embed() took the pixels");
    } catch (const std::invalid_argument& error) {
      QCOMPARE(QString::fromUtf8(error.what()), message);
    }
  }

  void loadWithoutPixtralSaysSo() {
    modelgen::RandomModelSpec spec = modelgen::default_spec("mistral");
    const std::filesystem::path model = root_.filePath(QStringLiteral("text")).toStdString();
    modelgen::write_random_model(spec, model);
    QCOMPARE(pixtral_load_error(model),
             model.string() +
                 ": this model cannot see images (config.json describes no Pixtral vision tower); "
                 "choose a Mistral3ForConditionalGeneration download");
  }
};

QUIRE_TEST(PixtralBadInputTest)
#include "test_pixtral_bad_inputs.moc"
