// preprocessor_config.json and processor_config.json as the published model
// repositories write them, and the messages for files Quire cannot use.

#include <QTemporaryDir>
#include <QTest>
#include <fstream>

#include "quire/engine/model_error.h"
#include "quire/engine/vision/processor_config.h"
#include "test_main.h"

using namespace quire::vision;
using quire::engine::ModelError;

namespace {

// The message parse_processor_config throws, or "" when it accepts.
QString config_error(const char* preprocessor, const char* processor = "") {
  try {
    parse_processor_config(preprocessor, processor, "/models/m");
  } catch (const ModelError& error) {
    return QString::fromUtf8(error.what());
  }
  return {};
}

}  // namespace

class ProcessorConfigTest : public QObject {
  Q_OBJECT

 private slots:
  void gemma3_defaults_fill_nulls() {
    const ProcessorConfig config = parse_processor_config(
        R"({"image_processor_type": "Gemma3ImageProcessor", "do_pan_and_scan": null,
            "pan_and_scan_min_crop_size": null, "resample": 2, "size": {"height": 896, "width": 896},
            "image_mean": [0.5, 0.5, 0.5], "image_std": [0.5, 0.5, 0.5]})",
        R"({"image_seq_length": 256})", "/models/gemma");
    const auto& gemma = std::get<Gemma3Options>(config.family);
    QCOMPARE(gemma.width, 896);
    QCOMPARE(gemma.do_pan_and_scan, false);
    QCOMPARE(gemma.pan_and_scan_min_crop_size, 256);
    QCOMPARE(gemma.pan_and_scan_max_num_crops, 4);
    QCOMPARE(gemma.image_seq_length, 256);
    QVERIFY(config.resample == ResampleFilter::Bilinear);
  }

  void qwen_pixel_budget_from_size_or_min_max() {
    const ProcessorConfig qwen3 = parse_processor_config(
        R"({"image_processor_type": "Qwen2VLImageProcessorFast", "patch_size": 16,
            "size": {"longest_edge": 16777216, "shortest_edge": 65536}})",
        "", "/models/qwen3");
    const auto& options = std::get<Qwen2VLOptions>(qwen3.family);
    QCOMPARE(options.min_pixels, std::int64_t{65536});
    QCOMPARE(options.max_pixels, std::int64_t{16777216});
    QCOMPARE(options.patch_size, 16);
    QVERIFY(qwen3.resample == ResampleFilter::Bicubic);
    // CLIP's statistics are the Qwen processor's defaults.
    QCOMPARE(qwen3.normalization.mean[0], 0.48145466);

    // min_pixels and max_pixels win over size, as in transformers.
    const ProcessorConfig qwen25 = parse_processor_config(
        R"({"image_processor_type": "Qwen2_5_VLImageProcessor", "min_pixels": 3136,
            "max_pixels": 12845056, "size": {"shortest_edge": 1, "longest_edge": 2}})",
        "", "/models/qwen25");
    QCOMPARE(std::get<Qwen2VLOptions>(qwen25.family).min_pixels, std::int64_t{3136});
    QCOMPARE(std::get<Qwen2VLOptions>(qwen25.family).max_pixels, std::int64_t{12845056});
  }

  void pixtral_patch_is_processor_patch_times_merge() {
    const char* pre = R"({"image_processor_type": "PixtralImageProcessor",
        "patch_size": {"height": 14, "width": 14}, "size": {"longest_edge": 1540}})";
    const ProcessorConfig mistral = parse_processor_config(
        pre, R"({"patch_size": 14, "spatial_merge_size": 2})", "/models/mistral");
    const auto& options = std::get<PixtralOptions>(mistral.family);
    QCOMPARE(options.patch_height, 28);
    QCOMPARE(options.max_width, 1540);
    QCOMPARE(options.image_token, std::string("[IMG]"));
    // Without processor_config.json, the image processor's own patch size.
    const ProcessorConfig alone = parse_processor_config(pre, "", "/models/mistral");
    QCOMPARE(std::get<PixtralOptions>(alone.family).patch_width, 14);
  }

  void missing_file_says_the_model_cannot_take_images() {
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    try {
      read_processor_config(dir.path().toStdString());
      QFAIL("a directory without preprocessor_config.json was accepted");
    } catch (const ModelError& error) {
      const QString message = QString::fromUtf8(error.what());
      QVERIFY2(message.contains(QLatin1String("preprocessor_config.json is missing")),
               qPrintable(message));
      QVERIFY2(message.contains(QLatin1String("cannot take images")), qPrintable(message));
    }
  }

  void reads_both_files_from_a_directory() {
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    std::ofstream(dir.filePath(QStringLiteral("preprocessor_config.json")).toStdString())
        << R"({"image_processor_type": "PixtralImageProcessor", "size": {"longest_edge": 1024}})";
    std::ofstream(dir.filePath(QStringLiteral("processor_config.json")).toStdString())
        << R"({"patch_size": 16, "image_end_token": "[END]"})";
    const ProcessorConfig config = read_processor_config(dir.path().toStdString());
    QCOMPARE(std::get<PixtralOptions>(config.family).image_end_token, std::string("[END]"));
  }

  void invalid_files_are_named_with_the_problem() {
    QString message = config_error("{not json");
    QVERIFY2(
        message.contains(QLatin1String("/models/m/preprocessor_config.json is not valid JSON")),
        qPrintable(message));
    message = config_error(R"({"image_processor_type": "Gemma3ImageProcessor"})", "[1, 2]");
    QVERIFY2(message.contains(QLatin1String("processor_config.json is not a JSON object")),
             qPrintable(message));
    message = config_error(R"({"image_processor_type": "SiglipImageProcessor"})");
    QVERIFY2(message.contains(QLatin1String("\"SiglipImageProcessor\" is not supported")),
             qPrintable(message));
    QVERIFY2(message.contains(QLatin1String("Qwen2VLImageProcessor")), qPrintable(message));
    message = config_error("{}");
    QVERIFY2(message.contains(QLatin1String("(none named)")), qPrintable(message));
    message = config_error(R"({"image_processor_type": "Gemma3ImageProcessor", "resample": 0})");
    QVERIFY2(message.contains(QLatin1String("\"resample\" resampling filter 0 is not supported")),
             qPrintable(message));
    message = config_error(
        R"({"image_processor_type": "PixtralImageProcessor", "image_std": [0.5, 0, 0.5]})");
    QVERIFY2(message.contains(QLatin1String("holds a zero")), qPrintable(message));
    message = config_error(
        R"({"image_processor_type": "PixtralImageProcessor", "image_mean": [0.5, 0.5]})");
    QVERIFY2(
        message.contains(QLatin1String("\"image_mean\" must be a number or a list of 3 numbers")),
        qPrintable(message));
    message = config_error(R"({"image_processor_type": "Qwen2VLImageProcessor", "merge_size": 0})");
    QVERIFY2(message.contains(QLatin1String("\"merge_size\" is 0, outside 1..16")),
             qPrintable(message));
    message =
        config_error(R"({"image_processor_type": "Qwen2VLImageProcessor", "patch_size": 14.5})");
    QVERIFY2(message.contains(QLatin1String("\"patch_size\" must be a whole number")),
             qPrintable(message));
    message = config_error(
        R"({"image_processor_type": "Qwen2VLImageProcessor", "min_pixels": 10, "max_pixels": 5})");
    QVERIFY2(message.contains(QLatin1String("is above max_pixels (10 > 5)")), qPrintable(message));
    message = config_error(
        R"({"image_processor_type": "Gemma3ImageProcessor", "size": {"height": "896"}})");
    QVERIFY2(message.contains(QLatin1String("\"size.height\" must be a whole number")),
             qPrintable(message));
    message =
        config_error(R"({"image_processor_type": "Gemma3ImageProcessor", "do_resize": false})");
    QVERIFY2(message.contains(QLatin1String("\"do_resize\" is false")), qPrintable(message));
  }
};

QUIRE_TEST(ProcessorConfigTest)
#include "test_processor_config.moc"
