// The processors against tests/tools/reference_image_preprocess.py, which
// follows transformers' slow image processors with NumPy and PIL: the
// resized 8-bit images must be byte for byte PIL's, the normalized floats
// within 1e-6 of NumPy's (the same float32 operations, so in practice equal),
// the shapes, grids, crops and token layouts equal.

#include <QDir>
#include <QFile>
#include <QTemporaryDir>
#include <QTest>
#include <cmath>
#include <cstring>
#include <nlohmann/json.hpp>

#include "python_tool.h"
#include "quire/engine/vision/image_processor.h"
#include "quire/engine/vision/pil_resample.h"
#include "quire/engine/vision/processor_config.h"
#include "test_main.h"

using namespace quire::vision;

namespace {

QByteArray read_bytes(const QString& path) {
  QFile file(path);
  if (!file.open(QIODevice::ReadOnly))
    throw std::runtime_error("cannot read " + path.toStdString());
  return file.readAll();
}

RgbImage read_rgb(const QString& path, int width, int height) {
  const QByteArray bytes = read_bytes(path);
  RgbImage image;
  image.width = width;
  image.height = height;
  image.rgb.assign(bytes.begin(), bytes.end());
  return image;
}

}  // namespace

class ProcessorReferenceTest : public QObject {
  Q_OBJECT

 private:
  QTemporaryDir dir_;
  nlohmann::json manifest_;
  std::map<std::string, RgbImage> inputs_;

  QString path(const QString& relative) const { return dir_.filePath(relative); }

  // Compares one model's processing of one case with the reference;
  // returns what differs, empty when all agrees.
  QString compare(const std::string& model, const ImageProcessor& processor,
                  const std::string& name, const nlohmann::json& expected) const {
    const RgbImage& input = inputs_.at(name);
    const QString where = QString::fromStdString(model + " " + name + ": ");
    if (expected.contains("error")) {
      try {
        processor.process(input);
      } catch (const ImageError&) {
        return {};
      }
      return where + "the reference refuses the image (" +
             QString::fromStdString(expected["error"].get<std::string>()) + "), Quire does not";
    }
    ProcessedImage actual;
    try {
      actual = processor.process(input);
    } catch (const std::exception& error) {
      return where + "refused: " + QString::fromUtf8(error.what());
    }
    if (actual.resized.size() != expected["resized"].size())
      return where + QStringLiteral("%1 resized images, the reference has %2")
                         .arg(actual.resized.size())
                         .arg(expected["resized"].size());
    const QByteArray resized =
        read_bytes(path(QString::fromStdString("out/" + model + "/" + name + ".resized")));
    qsizetype offset = 0;
    for (std::size_t i = 0; i < actual.resized.size(); ++i) {
      const RgbImage& image = actual.resized[i];
      if (image.width != expected["resized"][i][0] || image.height != expected["resized"][i][1])
        return where + QStringLiteral("resized image %1 is %2x%3, the reference's %4x%5")
                           .arg(i)
                           .arg(image.width)
                           .arg(image.height)
                           .arg(expected["resized"][i][0].get<int>())
                           .arg(expected["resized"][i][1].get<int>());
      const auto size = static_cast<qsizetype>(image.rgb.size());
      if (offset + size > resized.size()) return where + "the reference's resized file is short";
      for (qsizetype b = 0; b < size; ++b)
        if (static_cast<std::uint8_t>(resized[offset + b]) !=
            image.rgb[static_cast<std::size_t>(b)]) {
          const qsizetype pixel = b / 3;
          return where + QStringLiteral(
                             "resized image %1 differs first at x=%2 y=%3 channel %4: %5, PIL %6")
                             .arg(i)
                             .arg(pixel % image.width)
                             .arg(pixel / image.width)
                             .arg(b % 3)
                             .arg(image.rgb[static_cast<std::size_t>(b)])
                             .arg(static_cast<std::uint8_t>(resized[offset + b]));
        }
      offset += size;
    }
    if (actual.shape != expected["shape"].get<std::vector<std::size_t>>())
      return where + "pixel_values has another shape than the reference's";
    const QByteArray pixels =
        read_bytes(path(QString::fromStdString("out/" + model + "/" + name + ".pixels")));
    if (static_cast<std::size_t>(pixels.size()) != actual.pixel_values.size() * sizeof(float))
      return where + QStringLiteral("%1 floats, the reference has %2")
                         .arg(actual.pixel_values.size())
                         .arg(pixels.size() / 4);
    double worst = 0;
    std::size_t worst_at = 0;
    for (std::size_t i = 0; i < actual.pixel_values.size(); ++i) {
      float reference = 0;
      std::memcpy(&reference, pixels.constData() + i * sizeof(float), sizeof(float));
      const double difference = std::fabs(static_cast<double>(actual.pixel_values[i]) - reference);
      if (!(difference <= worst)) {
        worst = difference;
        worst_at = i;
      }
    }
    if (!(worst <= 1e-6))
      return where + QStringLiteral("pixel_values[%1] is %2 away from the reference")
                         .arg(worst_at)
                         .arg(worst);
    const std::array<int, 3> grid = expected["grid_thw"].get<std::array<int, 3>>();
    if (actual.grid_thw != grid) return where + "grid_thw differs from the reference's";
    if (actual.num_crops != expected["num_crops"].get<int>())
      return where + QStringLiteral("%1 crops, the reference takes %2")
                         .arg(actual.num_crops)
                         .arg(expected["num_crops"].get<int>());
    if (actual.tokens.text() != expected["text"].get<std::string>())
      return where + "the image's prompt text differs from the processor's";
    if (actual.tokens.image_positions() != expected["image_positions"].get<std::size_t>())
      return where + QStringLiteral("%1 image positions, the processor has %2")
                         .arg(actual.tokens.image_positions())
                         .arg(expected["image_positions"].get<std::size_t>());
    const ImageTokenLayout predicted = processor.token_layout(input.width, input.height);
    if (predicted.text() != actual.tokens.text())
      return where + "token_layout() of the size differs from process()'s layout";
    return {};
  }

  void check_model(const std::string& model) {
    const ProcessorConfig config =
        read_processor_config(path(QString::fromStdString("models/" + model)).toStdString());
    const auto processor = make_image_processor(config);
    const auto& results = manifest_["results"][model];
    QVERIFY2(!results.empty(), "the reference processed no images");
    QStringList failures;
    for (const auto& [name, expected] : results.items()) {
      const QString failure = compare(model, *processor, name, expected);
      if (!failure.isEmpty()) failures << failure;
    }
    QVERIFY2(failures.isEmpty(), qPrintable(failures.join(QLatin1Char('\n'))));
    qInfo("%s: %d images as the reference processes them", model.c_str(), int(results.size()));
  }

 private slots:
  void initTestCase() {
    QVERIFY(dir_.isValid());
    const QString failure =
        quire::test::run_python_tool(QStringLiteral("reference_image_preprocess.py"),
                                     {QStringLiteral("preprocess"), dir_.path()}, 300000,
                                     QStringLiteral("python3-numpy and python3-pil"));
    QVERIFY2(failure.isEmpty(), qPrintable(failure));
    manifest_ =
        nlohmann::json::parse(read_bytes(path(QStringLiteral("manifest.json"))).toStdString());
    for (const auto& entry : manifest_["cases"]) {
      const auto name = entry["name"].get<std::string>();
      inputs_[name] = read_rgb(path(QString::fromStdString("inputs/" + name + ".rgb")),
                               entry["width"].get<int>(), entry["height"].get<int>());
    }
  }

  // Every PIL filter, downscaling and upscaling, narrow and tiny targets.
  void resize_matches_pil_for_every_filter() {
    QStringList failures;
    for (const auto& entry : manifest_["resize"]) {
      const RgbImage& input = inputs_.at(entry["case"].get<std::string>());
      const int width = entry["width"].get<int>();
      const int height = entry["height"].get<int>();
      const ResampleFilter filter = resample_filter_from_pil(entry["resample"].get<int>());
      const RgbImage actual = resize_like_pil(input, width, height, filter);
      const QByteArray expected =
          read_bytes(path(QString::fromStdString("resize/" + entry["file"].get<std::string>())));
      const bool equal =
          actual.width == width && actual.height == height &&
          static_cast<std::size_t>(expected.size()) == actual.rgb.size() &&
          std::memcmp(expected.constData(), actual.rgb.data(), actual.rgb.size()) == 0;
      if (!equal) failures << QString::fromStdString(entry["file"].get<std::string>());
    }
    QVERIFY2(failures.isEmpty(),
             qPrintable(QStringLiteral("differ from PIL: ") + failures.join(QLatin1String(", "))));
  }

  void gemma3() { check_model("gemma3"); }
  void gemma3_pan_and_scan() { check_model("gemma3_pan_and_scan"); }
  void qwen2_5_vl() { check_model("qwen2_5_vl"); }
  void qwen3_vl() { check_model("qwen3_vl"); }
  void pixtral() { check_model("pixtral"); }
  void mistral_small_3_1() { check_model("mistral_small_3_1"); }
};

QUIRE_TEST(ProcessorReferenceTest)
#include "test_processor_reference.moc"
