// Gemma 3's image embeddings against tests/tools/reference_vision.py, a
// float64 numpy transcription of transformers' SigLIP tower and Gemma 3
// projector, on random-weight directories of both checkpoint layouts.
//
// Tolerance: the largest difference at most 5e-6 of the largest reference
// value. The engine multiplies in FP32 (kernels::linear, sums of up to a few
// hundred products, 24-bit significands, about 1e-7 relative each) through
// two encoder layers, two LayerNorms each, a softmax and the projector's
// RMSNorm; the weights are exactly the files' FP16/BF16 values on both sides,
// so the only difference is FP32 rounding: 2e-7 to 6e-7 measured. The
// subtlest mistake tried, the tanh GELU where config.json asks for the exact
// one, moves the output by 1.2e-4 of its largest value, 24 times the
// tolerance; tokens out of order move it by order one.

#include <QTemporaryDir>
#include <QTest>
#include <algorithm>
#include <cmath>

#include "quire/engine/runtime/model_description.h"
#include "quire/engine/vision/gemma3_vision_encoder.h"
#include "test_main.h"
#include "vision_test_support.h"

using namespace quire::engine;
using quire::test::reference_embeddings;
using quire::test::test_pixels;
using quire::test::vision_spec;

namespace {

constexpr double kTolerance = 5e-6;

// max |engine - reference| / max |reference|
double relative_error(const std::vector<float>& engine, const std::vector<double>& reference) {
  double difference = 0.0;
  double scale = 0.0;
  for (std::size_t i = 0; i < reference.size(); ++i) {
    difference = std::max(difference, std::abs(double(engine[i]) - reference[i]));
    scale = std::max(scale, std::abs(reference[i]));
  }
  return difference / scale;
}

}  // namespace

class VisionReferenceTest : public QObject {
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
    QTest::addColumn<int>("imageSize");
    QTest::addColumn<int>("tokens");
    QTest::addColumn<QString>("activation");
    const QString published = QStringLiteral("language_model.model.");
    const QString newer = QStringLiteral("model.language_model.");
    const QString tanh = QStringLiteral("gelu_pytorch_tanh");
    QTest::newRow("published layout, bf16") << "bf16" << published << 56 << 4 << tanh;
    QTest::newRow("published layout, fp16") << "fp16" << published << 56 << 4 << tanh;
    QTest::newRow("newer layout, bf16") << "bf16" << newer << 56 << 4 << tanh;
    QTest::newRow("newer layout, fp16") << "fp16" << newer << 56 << 4 << tanh;
    // exllamav2 quantizes the language model and leaves the tower FP16.
    QTest::newRow("exl2 download") << "exl2:5.0" << newer << 56 << 4 << tanh;
    // A 6 x 6 patch grid pooled in squares of 2 to 3 x 3 tokens, and in one
    // square of 6 to a single token.
    QTest::newRow("9 tokens of 36 patches") << "bf16" << published << 84 << 9 << tanh;
    QTest::newRow("1 token of 36 patches") << "fp16" << newer << 84 << 1 << tanh;
    QTest::newRow("exact gelu") << "bf16" << published << 56 << 4 << QStringLiteral("gelu");
  }

  void matchesReference() {
    QFETCH(QString, format);
    QFETCH(QString, prefix);
    QFETCH(int, imageSize);
    QFETCH(int, tokens);
    QFETCH(QString, activation);
    modelgen::RandomModelSpec spec = vision_spec(qPrintable(format), qPrintable(prefix), 11);
    spec.vision.image_size = imageSize;
    spec.vision.tokens_per_image = tokens;
    const std::filesystem::path model = quire::test::write_vision_model(
        spec, root_.filePath(QString::fromUtf8(QTest::currentDataTag())));
    if (activation != QStringLiteral("gelu_pytorch_tanh")) {
      const std::string value = "\"" + activation.toStdString() + "\"";
      quire::test::set_config(model, "vision_config", "hidden_act", value.c_str());
    }

    const vision::Gemma3VisionEncoder encoder = vision::Gemma3VisionEncoder::load(model);
    QCOMPARE(encoder.config().tokens_per_image, tokens);
    const std::vector<float> pixels = test_pixels(3, imageSize, 5);
    quire::kernels::ThreadPool pool(2);
    const vision::ImageEmbeddings embeddings =
        encoder.embed(pool, {pixels, 3, imageSize, imageSize});
    QCOMPARE(embeddings.tokens, tokens);
    QCOMPARE(embeddings.width, spec.hidden);
    QCOMPARE(embeddings.values.size(), std::size_t(tokens * spec.hidden));

    const std::vector<double> reference = reference_embeddings(model, pixels);
    QCOMPARE(reference.size(), embeddings.values.size());
    const double error = relative_error(embeddings.values, reference);
    qInfo("largest difference %.3g of the largest value", error);
    QVERIFY2(error <= kTolerance, qPrintable(QStringLiteral("relative error %1").arg(error)));
  }

  // The same image through one thread and through several: the products
  // split work by output columns, so the sums are the same.
  void threadsDoNotChangeTheResult() {
    const modelgen::RandomModelSpec spec = vision_spec("bf16", "language_model.model.", 3);
    const std::filesystem::path model =
        quire::test::write_vision_model(spec, root_.filePath(QStringLiteral("threads")));
    const vision::Gemma3VisionEncoder encoder = vision::Gemma3VisionEncoder::load(model);
    const std::vector<float> pixels = test_pixels(3, 56, 9);
    quire::kernels::ThreadPool one(1);
    quire::kernels::ThreadPool three(3);
    QCOMPARE(encoder.embed(one, {pixels, 3, 56, 56}).values,
             encoder.embed(three, {pixels, 3, 56, 56}).values);
  }

  // The model's description says whether it can see images, and with what.
  void descriptionNamesTheTower() {
    const modelgen::RandomModelSpec spec = vision_spec("bf16", "model.language_model.", 4);
    const std::filesystem::path model =
        quire::test::write_vision_model(spec, root_.filePath(QStringLiteral("described")));
    const ModelDescription description = ModelDescription::open(model);
    QVERIFY2(description.vision.tower.has_value(), description.vision.problem.c_str());
    const vision::VisionTowerSummary& tower = *description.vision.tower;
    QCOMPARE(tower.tower, std::string("SigLIP"));
    QCOMPARE(tower.projector, std::string("Gemma 3"));
    QCOMPARE(tower.image_size, 56);
    QCOMPARE(tower.patch_size, 14);
    QCOMPARE(tower.layers, 2);
    QCOMPARE(tower.hidden_size, 64);
    QCOMPARE(tower.tokens_per_image, 4);
    QCOMPARE(tower.dtype, quire::kernels::DType::BF16);
    QCOMPARE(tower.tensor_prefix, std::string("model.vision_tower.vision_model."));
    // patch embedding, positions, 2 layers, post norm, projection, norm
    const std::int64_t layer = 4 * 64 + 4 * (64 * 64 + 64) + 2 * 64 * 96 + 96 + 64;
    const std::int64_t parameters =
        (64 * 3 * 14 * 14 + 64) + 16 * 64 + 2 * layer + 2 * 64 + 64 * spec.hidden + 64;
    QCOMPARE(tower.parameters, parameters);
    QCOMPARE(tower.bytes, 2 * parameters);
    QVERIFY(description.vision.problem.empty());
  }

  void textModelsCannotSee() {
    modelgen::RandomModelSpec spec = modelgen::default_spec("gemma3");
    spec.sliding_window = 8;
    const std::filesystem::path model =
        quire::test::write_vision_model(spec, root_.filePath(QStringLiteral("text only")));
    const ModelDescription description = ModelDescription::open(model);
    QVERIFY(!description.vision.tower.has_value());
    QVERIFY(description.vision.problem.empty());
  }
};

QUIRE_TEST(VisionReferenceTest)
#include "test_vision_reference.moc"
