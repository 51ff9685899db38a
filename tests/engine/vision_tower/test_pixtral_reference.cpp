// Mistral Small 3.x's image embeddings (Pixtral tower, Mistral 3 projector)
// against tests/tools/reference_vision.py, whose reference_pixtral.py is a
// float64 numpy transcription of transformers' PixtralVisionModel and
// Mistral3MultiModalProjector, on random-weight directories of both
// checkpoint layouts and images of several non-square sizes.
//
// Tolerance: the largest difference at most 5e-6 of the largest reference
// value, as for Gemma 3 (test_vision_reference.cpp says why): the weights are
// exactly the files' values on both sides, so only FP32 rounding differs.

#include <QTemporaryDir>
#include <QTest>
#include <algorithm>
#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>

#include "pixtral_test_support.h"
#include "quire/engine/io/model_tensors.h"
#include "quire/engine/modelgen/random_model.h"
#include "quire/engine/vision/image_processor.h"
#include "quire/engine/vision/pixtral_vision_encoder.h"
#include "quire/engine/vision/vision_tower_summary.h"
#include "test_main.h"
#include "vision_test_support.h"

using namespace quire::engine;
using quire::test::pixtral_pixels;
using quire::test::pixtral_reference;
using quire::test::pixtral_spec;

namespace {

constexpr double kPixtralTolerance = 5e-6;

// max |engine - reference| / max |reference|
double largest_relative_difference(const std::vector<float>& engine,
                                   const std::vector<double>& reference) {
  double difference = 0.0;
  double scale = 0.0;
  for (std::size_t i = 0; i < reference.size(); ++i) {
    difference = std::max(difference, std::abs(double(engine[i]) - reference[i]));
    scale = std::max(scale, std::abs(reference[i]));
  }
  return difference / scale;
}

std::filesystem::path write_pixtral_model(const modelgen::RandomModelSpec& spec,
                                          const QString& dir) {
  const std::filesystem::path path = dir.toStdString();
  modelgen::write_random_model(spec, path);
  return path;
}

// A key of a written file against its expected value, naming both on failure.
#define QUIRE_JSON_EQ(actual, expected) \
  QVERIFY2((actual) == (expected), (#actual " is " + (actual).dump()).c_str())

nlohmann::json read_json(const std::filesystem::path& path) {
  std::ifstream file(path);
  return nlohmann::json::parse(file);
}

}  // namespace

class PixtralReferenceTest : public QObject {
  Q_OBJECT

  QTemporaryDir root_;

 private slots:
  void initTestCase() {
    if (QStringLiteral(QUIRE_PYTHON).isEmpty()) QFAIL("Python was not found at configure time");
    QVERIFY(root_.isValid());
  }

  void matchesReference_data() {
    QTest::addColumn<QString>("format");
    QTest::addColumn<QString>("prefix");
    QTest::addColumn<int>("height");
    QTest::addColumn<int>("width");
    QTest::addColumn<bool>("projectorBias");
    QTest::addColumn<QString>("configKey");  // "object/key=value", or empty
    const QString published = QStringLiteral("language_model.model.");
    const QString newer = QStringLiteral("model.language_model.");
    const QString none;
    // Wide and tall images: a 4 x 6 patch grid (2 x 3 tokens), 6 x 2 (3 x 1),
    // the largest 8 x 8 (4 x 4), and 8 x 2, whose rows reach the last
    // rotary row while the columns stay near the first.
    QTest::newRow("published, bf16, 56 x 84") << "bf16" << published << 56 << 84 << false << none;
    QTest::newRow("published, fp16, 84 x 28") << "fp16" << published << 84 << 28 << false << none;
    QTest::newRow("newer, bf16, 56 x 84") << "bf16" << newer << 56 << 84 << false << none;
    QTest::newRow("newer, fp16, 112 x 28") << "fp16" << newer << 112 << 28 << false << none;
    QTest::newRow("newer, bf16, 112 x 112") << "bf16" << newer << 112 << 112 << false << none;
    QTest::newRow("exl2 download, 28 x 56") << "exl2:5.0" << newer << 28 << 56 << false << none;
    QTest::newRow("projector biases") << "bf16" << published << 56 << 84 << true << none;
    QTest::newRow("gelu gate") << "bf16" << published << 84 << 56 << false
                               << QStringLiteral("vision_config/hidden_act=\"gelu\"");
    // The projector takes the first layer's output (hidden_states[-2]).
    QTest::newRow("feature layer -2")
        << "bf16" << newer << 56 << 84 << false << QStringLiteral("/vision_feature_layer=-2");
    QTest::newRow("rope theta 100") << "fp16" << published << 84 << 112 << false
                                    << QStringLiteral("vision_config/rope_theta=100.0");
    // The projector norm's epsilon is the text model's; large enough here
    // that taking another moves the output.
    QTest::newRow("projector norm epsilon") << "fp16" << published << 56 << 56 << false
                                            << QStringLiteral("text_config/rms_norm_eps=0.25");
    QTest::newRow("tanh projector")
        << "bf16" << newer << 56 << 84 << false
        << QStringLiteral("/projector_hidden_act=\"gelu_pytorch_tanh\"");
  }

  void matchesReference() {
    QFETCH(QString, format);
    QFETCH(QString, prefix);
    QFETCH(int, height);
    QFETCH(int, width);
    QFETCH(bool, projectorBias);
    QFETCH(QString, configKey);
    modelgen::RandomModelSpec spec = pixtral_spec(qPrintable(format), qPrintable(prefix), 13);
    spec.vision.projector_bias = projectorBias;
    const std::filesystem::path model =
        write_pixtral_model(spec, root_.filePath(QString::fromUtf8(QTest::currentDataTag())));
    if (!configKey.isEmpty()) {
      const QString object = configKey.section(u'/', 0, 0);
      const QString key = configKey.section(u'/', 1).section(u'=', 0, 0);
      const QString value = configKey.section(u'=', 1);
      quire::test::set_config(model, qPrintable(object), qPrintable(key), qPrintable(value));
    }

    const vision::PixtralVisionEncoder encoder = vision::PixtralVisionEncoder::load(model);
    const std::vector<float> pixels = pixtral_pixels(3, height, width, 7);
    quire::kernels::ThreadPool pool(2);
    const vision::ImageEmbeddings embeddings = encoder.embed(pool, {pixels, 3, height, width});
    const int tokens = (height / 28) * (width / 28);
    QCOMPARE(embeddings.tokens, tokens);
    QCOMPARE(embeddings.width, spec.hidden);
    QCOMPARE(embeddings.values.size(), std::size_t(tokens * spec.hidden));

    const std::vector<double> reference = pixtral_reference(model, pixels, height, width);
    QCOMPARE(reference.size(), embeddings.values.size());
    const double error = largest_relative_difference(embeddings.values, reference);
    qInfo("largest difference %.3g of the largest value", error);
    QVERIFY2(error <= kPixtralTolerance,
             qPrintable(QStringLiteral("relative error %1").arg(error)));
  }

  // An image through the directory's own processor (preprocessor_config.json
  // and processor_config.json as make-model writes them): the embeddings are
  // exactly as many as the [IMG] positions of its token layout.
  void processorAndTowerAgreeOnTokens() {
    const modelgen::RandomModelSpec spec = pixtral_spec("bf16", "language_model.model.", 5);
    const std::filesystem::path model =
        write_pixtral_model(spec, root_.filePath(QStringLiteral("processor")));
    const quire::vision::ProcessorConfig config = quire::vision::read_processor_config(model);
    const std::unique_ptr<quire::vision::ImageProcessor> processor =
        quire::vision::make_image_processor(config);
    quire::vision::RgbImage image;
    image.width = 150;
    image.height = 70;
    image.rgb.resize(std::size_t(image.width * image.height * 3));
    for (std::size_t i = 0; i < image.rgb.size(); ++i)
      image.rgb[i] = static_cast<std::uint8_t>((i * 37) % 251);
    const quire::vision::ProcessedImage processed = processor->process(image);
    QCOMPARE(processed.shape.size(), std::size_t(3));
    const int height = int(processed.shape[1]);
    const int width = int(processed.shape[2]);
    // 150 x 70 scaled to fit 112 is 112 x 52, rounded up to whole 28-pixel squares.
    QCOMPARE(width, 112);
    QCOMPARE(height, 56);

    const vision::PixtralVisionEncoder encoder = vision::PixtralVisionEncoder::load(model);
    quire::kernels::ThreadPool pool(2);
    const vision::ImageEmbeddings embeddings =
        encoder.embed(pool, {processed.pixel_values, 3, height, width});
    QCOMPARE(std::size_t(embeddings.tokens), processed.tokens.image_positions());
    QCOMPARE(embeddings.tokens, 8);
  }

  // The same image through one thread and through several.
  void threadsDoNotChangeTheResult() {
    const modelgen::RandomModelSpec spec = pixtral_spec("bf16", "model.language_model.", 3);
    const std::filesystem::path model =
        write_pixtral_model(spec, root_.filePath(QStringLiteral("threads")));
    const vision::PixtralVisionEncoder encoder = vision::PixtralVisionEncoder::load(model);
    const std::vector<float> pixels = pixtral_pixels(3, 84, 56, 9);
    quire::kernels::ThreadPool one(1);
    quire::kernels::ThreadPool three(3);
    QCOMPARE(encoder.embed(one, {pixels, 3, 84, 56}).values,
             encoder.embed(three, {pixels, 3, 84, 56}).values);
  }

  // describe_vision() says the directory can see images, and with what.
  void summaryNamesTheTower() {
    const modelgen::RandomModelSpec spec = pixtral_spec("bf16", "model.language_model.", 4);
    const std::filesystem::path model =
        write_pixtral_model(spec, root_.filePath(QStringLiteral("described")));
    const io::ModelTensors tensors = io::ModelTensors::open(model);
    const vision::VisionAvailability vision = vision::describe_vision(model, tensors);
    QVERIFY2(vision.tower.has_value(), vision.problem.c_str());
    const vision::VisionTowerSummary& tower = *vision.tower;
    QCOMPARE(tower.tower, std::string("Pixtral"));
    QCOMPARE(tower.projector, std::string("Mistral 3"));
    QCOMPARE(tower.image_size, 112);
    QVERIFY(tower.variable_size);
    QCOMPARE(tower.patch_size, 14);
    QCOMPARE(tower.layers, 2);
    QCOMPARE(tower.hidden_size, 64);
    QCOMPARE(tower.tokens_per_image, 16);  // 112 x 112: 4 x 4 squares of 28 pixels
    QCOMPARE(tower.dtype, quire::kernels::DType::BF16);
    QCOMPARE(tower.tensor_prefix, std::string("model.vision_tower."));
    // patch conv, ln_pre, 2 layers (2 norms, 4 projections, gate/up/down),
    // projector norm, merging layer, linear_1, linear_2
    const std::int64_t layer = 2 * 64 + 4 * 64 * 64 + 3 * 64 * 96;
    const std::int64_t parameters = 64 * 3 * 14 * 14 + 64 + 2 * layer + 64 + 64 * 64 * 4 +
                                    64 * spec.hidden + spec.hidden * spec.hidden;
    QCOMPARE(tower.parameters, parameters);
    QCOMPARE(tower.bytes, 2 * parameters);
    QVERIFY(vision.problem.empty());
  }

  // make-model's directory has the published layout: config.json's keys,
  // the processor's files, and the tensors under each layout's prefixes.
  void writtenDirectoryIsAsPublished_data() {
    QTest::addColumn<QString>("prefix");
    QTest::addColumn<QString>("tower");
    QTest::addColumn<QString>("projector");
    QTest::newRow("published") << "language_model.model."
                               << "vision_tower."
                               << "multi_modal_projector.";
    QTest::newRow("newer") << "model.language_model."
                           << "model.vision_tower."
                           << "model.multi_modal_projector.";
  }

  void writtenDirectoryIsAsPublished() {
    QFETCH(QString, prefix);
    QFETCH(QString, tower);
    QFETCH(QString, projector);
    const modelgen::RandomModelSpec spec = pixtral_spec("bf16", qPrintable(prefix), 6);
    const std::filesystem::path model = write_pixtral_model(
        spec,
        root_.filePath(QStringLiteral("layout ") + QString::fromUtf8(QTest::currentDataTag())));
    nlohmann::json config = read_json(model / "config.json");
    QUIRE_JSON_EQ(config["architectures"],
                  nlohmann::json::array({"Mistral3ForConditionalGeneration"}));
    QUIRE_JSON_EQ(config["model_type"], "mistral3");
    QUIRE_JSON_EQ(config["text_config"]["model_type"], "mistral");
    QUIRE_JSON_EQ(config["text_config"]["hidden_size"], spec.hidden);
    QUIRE_JSON_EQ(config["vision_config"]["model_type"], "pixtral");
    QUIRE_JSON_EQ(config["vision_config"]["hidden_act"], "silu");
    QUIRE_JSON_EQ(config["vision_config"]["image_size"], 112);
    QUIRE_JSON_EQ(config["spatial_merge_size"], 2);
    QUIRE_JSON_EQ(config["projector_hidden_act"], "gelu");
    QUIRE_JSON_EQ(config["multimodal_projector_bias"], false);
    QUIRE_JSON_EQ(config["vision_feature_layer"], -1);

    nlohmann::json preprocessor = read_json(model / "preprocessor_config.json");
    QUIRE_JSON_EQ(preprocessor["image_processor_type"], "PixtralImageProcessor");
    QUIRE_JSON_EQ(preprocessor["size"]["longest_edge"], 112);
    QUIRE_JSON_EQ(preprocessor["patch_size"], 14);
    QUIRE_JSON_EQ(preprocessor["resample"], 3);
    nlohmann::json processor = read_json(model / "processor_config.json");
    QUIRE_JSON_EQ(processor["processor_class"], "PixtralProcessor");
    QUIRE_JSON_EQ(processor["image_token"], "[IMG]");
    QUIRE_JSON_EQ(processor["image_break_token"], "[IMG_BREAK]");
    QUIRE_JSON_EQ(processor["image_end_token"], "[IMG_END]");
    QUIRE_JSON_EQ(processor["spatial_merge_size"], 2);

    const io::ModelTensors tensors = io::ModelTensors::open(model);
    for (const QString& name :
         {prefix + "embed_tokens.weight", prefix + "layers.1.mlp.down_proj.weight",
          tower + "patch_conv.weight", tower + "ln_pre.weight",
          tower + "transformer.layers.1.feed_forward.gate_proj.weight",
          tower + "transformer.layers.0.attention.o_proj.weight",
          projector + "patch_merger.merging_layer.weight", projector + "linear_2.weight"}) {
      QVERIFY2(tensors.contains(name.toStdString()), qPrintable(name));
    }
    QVERIFY(!tensors.contains((projector + "linear_1.bias").toStdString()));
  }

  void textOnlyMistralCannotSee() {
    const modelgen::RandomModelSpec spec = modelgen::default_spec("mistral");
    const std::filesystem::path model =
        write_pixtral_model(spec, root_.filePath(QStringLiteral("text only")));
    const io::ModelTensors tensors = io::ModelTensors::open(model);
    const vision::VisionAvailability vision = vision::describe_vision(model, tensors);
    QVERIFY(!vision.tower.has_value());
    QVERIFY(vision.problem.empty());
  }
};

QUIRE_TEST(PixtralReferenceTest)
#include "test_pixtral_reference.moc"
