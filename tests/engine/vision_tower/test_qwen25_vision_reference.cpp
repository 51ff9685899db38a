// Qwen2.5-VL's image embeddings against tests/tools/reference_vision.py, a
// float64 numpy transcription of transformers'
// Qwen2_5_VisionTransformerPretrainedModel (patch embedding, 2D rotary
// positions, window attention with the window permutation and its reverse,
// RMSNorm blocks with a SiLU-gated MLP, the patch merger), on random-weight
// directories of both checkpoint layouts.
//
// Tolerance: the largest difference at most 5e-6 of the largest reference
// value, as for Gemma 3: both sides use exactly the files' FP16/BF16 values
// and the rotary tables' FP32 angles, so what is left is the engine's FP32
// rounding through two blocks and the merger.

#include <QTemporaryDir>
#include <QTest>
#include <algorithm>
#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <variant>

#include "quire/engine/io/model_tensors.h"
#include "quire/engine/vision/image_processor.h"
#include "quire/engine/vision/processor_config.h"
#include "quire/engine/vision/qwen25_vision_encoder.h"
#include "quire/engine/vision/vision_tower_summary.h"
#include "test_main.h"
#include "vision_test_support.h"

using namespace quire::engine;
using quire::test::qwen_vision_spec;
using quire::test::reference_qwen_embeddings;
using quire::test::test_patches;

namespace {

constexpr double kQwenTolerance = 5e-6;

// max |engine - reference| / max |reference|
double largest_qwen_difference(const std::vector<float>& engine,
                               const std::vector<double>& reference) {
  double difference = 0.0;
  double scale = 0.0;
  for (std::size_t i = 0; i < reference.size(); ++i) {
    difference = std::max(difference, std::abs(double(engine[i]) - reference[i]));
    scale = std::max(scale, std::abs(reference[i]));
  }
  return difference / scale;
}

}  // namespace

class Qwen25VisionReferenceTest : public QObject {
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
    QTest::addColumn<int>("frames");
    QTest::addColumn<int>("rows");
    QTest::addColumn<int>("columns");
    QTest::addColumn<int>("windowSize");
    const QString published = QStringLiteral("model.");
    const QString newer = QStringLiteral("model.language_model.");
    // 12 x 20 patches are 6 x 10 tokens: windows of 4 x 4 tokens leave
    // 2-token strips at the bottom and the right (6 windows, 4 of them cut).
    QTest::newRow("uneven windows, published, bf16") << "bf16" << published << 1 << 12 << 20 << 112;
    QTest::newRow("uneven windows, newer, fp16") << "fp16" << newer << 1 << 12 << 20 << 112;
    // 16 x 8 patches are 8 x 4 tokens: whole windows, where transformers
    // pads a window of nothing on each side and drops it again.
    QTest::newRow("whole windows, newer, bf16") << "bf16" << newer << 1 << 16 << 8 << 112;
    // 18 x 16 = 288 patches: the full-attention layers take their queries in
    // two blocks (kQwenQueryBlock, 256 rows).
    QTest::newRow("two query blocks, published, fp16")
        << "fp16" << published << 1 << 18 << 16 << 112;
    // Smaller than one window: windowed and full attention see the same.
    QTest::newRow("one window, published, fp16") << "fp16" << published << 1 << 4 << 6 << 112;
    // Windows of 2 x 2 tokens over 5 x 7 tokens (10 x 14 patches), taller than wide too.
    QTest::newRow("small windows, published") << "bf16" << published << 1 << 10 << 14 << 56;
    QTest::newRow("small windows, tall") << "fp16" << newer << 1 << 18 << 6 << 56;
    // Two frames (a video's grid): full attention stays inside each frame.
    QTest::newRow("two frames") << "bf16" << published << 2 << 6 << 8 << 56;
    // exllamav2 quantizes the language model and leaves the tower FP16.
    QTest::newRow("exl2 download") << "exl2:5.0" << published << 1 << 12 << 20 << 112;
  }

  void matchesReference() {
    QFETCH(QString, format);
    QFETCH(QString, prefix);
    QFETCH(int, frames);
    QFETCH(int, rows);
    QFETCH(int, columns);
    QFETCH(int, windowSize);
    modelgen::RandomModelSpec spec = qwen_vision_spec(qPrintable(format), qPrintable(prefix), 17);
    spec.vision.window_size = windowSize;
    const std::filesystem::path model = quire::test::write_vision_model(
        spec, root_.filePath(QString::fromUtf8(QTest::currentDataTag())));

    const vision::Qwen25VisionEncoder encoder = vision::Qwen25VisionEncoder::load(model);
    QCOMPARE(encoder.config().window_size, windowSize);
    const std::array<int, 3> grid{frames, rows, columns};
    const std::int64_t patches = std::int64_t(frames) * rows * columns;
    const std::vector<float> values =
        test_patches(patches, encoder.config().patch_values(), std::uint32_t(rows + columns));
    quire::kernels::ThreadPool pool(2);
    const vision::ImageEmbeddings embeddings = encoder.embed(pool, values, grid);
    QCOMPARE(embeddings.tokens, int(patches / 4));
    QCOMPARE(embeddings.width, spec.hidden);
    QCOMPARE(embeddings.values.size(), std::size_t(embeddings.tokens * spec.hidden));

    const std::vector<double> reference = reference_qwen_embeddings(model, values, grid);
    QCOMPARE(reference.size(), embeddings.values.size());
    const double error = largest_qwen_difference(embeddings.values, reference);
    qInfo("largest difference %.3g of the largest value", error);
    QVERIFY2(error <= kQwenTolerance, qPrintable(QStringLiteral("relative error %1").arg(error)));
  }

  // The same patches through one thread and through several.
  void threadsDoNotChangeTheResult() {
    const modelgen::RandomModelSpec spec = qwen_vision_spec("bf16", "model.", 5);
    const std::filesystem::path model =
        quire::test::write_vision_model(spec, root_.filePath(QStringLiteral("threads")));
    const vision::Qwen25VisionEncoder encoder = vision::Qwen25VisionEncoder::load(model);
    const std::vector<float> values = test_patches(12 * 20, encoder.config().patch_values(), 3);
    quire::kernels::ThreadPool one(1);
    quire::kernels::ThreadPool three(3);
    QCOMPARE(encoder.embed(one, values, {1, 12, 20}).values,
             encoder.embed(three, values, {1, 12, 20}).values);
  }

  // The processor's output goes straight in: as many embeddings as the
  // prompt has image positions for the image.
  void takesTheProcessorsOutput() {
    const modelgen::RandomModelSpec spec = qwen_vision_spec("bf16", "model.", 6);
    const std::filesystem::path model =
        quire::test::write_vision_model(spec, root_.filePath(QStringLiteral("processor")));
    const auto processor =
        quire::vision::make_image_processor(quire::vision::read_processor_config(model));
    quire::vision::RgbImage image{100, 60, std::vector<std::uint8_t>(100 * 60 * 3)};
    for (std::size_t i = 0; i < image.rgb.size(); ++i)
      image.rgb[i] = static_cast<std::uint8_t>((i * 37) % 251);
    const quire::vision::ProcessedImage processed = processor->process(image);
    const vision::Qwen25VisionEncoder encoder = vision::Qwen25VisionEncoder::load(model);
    quire::kernels::ThreadPool pool(2);
    const vision::ImageEmbeddings embeddings =
        encoder.embed(pool, processed.pixel_values, processed.grid_thw);
    QCOMPARE(std::size_t(embeddings.tokens), processed.tokens.image_positions());
    QCOMPARE(embeddings.values.size(), std::size_t(embeddings.tokens) * std::size_t(spec.hidden));
    const std::vector<double> reference =
        reference_qwen_embeddings(model, processed.pixel_values, processed.grid_thw);
    QCOMPARE(reference.size(), embeddings.values.size());
    QVERIFY(largest_qwen_difference(embeddings.values, reference) <= kQwenTolerance);
  }

  // make-model's directory has the published files' layout: the language
  // model's keys at the top level, vision_config, M-RoPE's rope_scaling, the
  // vision token ids at the top of the vocabulary, the published
  // preprocessor_config.json, and the tensors under their published names.
  void writtenDirectoryIsAsPublished() {
    const modelgen::RandomModelSpec spec = qwen_vision_spec("bf16", "model.", 8);
    const std::filesystem::path model =
        quire::test::write_vision_model(spec, root_.filePath(QStringLiteral("published")));
    std::ifstream file(model / "config.json");
    const nlohmann::ordered_json config = nlohmann::ordered_json::parse(file);
    QCOMPARE(config["architectures"][0].get<std::string>(),
             std::string("Qwen2_5_VLForConditionalGeneration"));
    QCOMPARE(config["model_type"].get<std::string>(), std::string("qwen2_5_vl"));
    QCOMPARE(config["hidden_size"].get<int>(), 128);
    QCOMPARE(config["vision_start_token_id"].get<int>(), spec.vocab - 5);
    QCOMPARE(config["image_token_id"].get<int>(), spec.vocab - 2);
    QCOMPARE(config["rope_scaling"].dump(),
             std::string(R"({"type":"mrope","mrope_section":[4,6,6]})"));
    QCOMPARE(config["vision_config"].dump(),
             std::string(R"({"depth":2,"hidden_act":"silu","hidden_size":64,)"
                         R"("intermediate_size":96,"num_heads":4,"in_chans":3,)"
                         R"("out_hidden_size":128,"patch_size":14,"spatial_merge_size":2,)"
                         R"("spatial_patch_size":14,"window_size":112,)"
                         R"("fullatt_block_indexes":[1],"tokens_per_second":2,)"
                         R"("temporal_patch_size":2})"));
    QVERIFY(!config.contains("text_config"));
    const quire::vision::ProcessorConfig processor_config =
        quire::vision::read_processor_config(model);
    QVERIFY(std::holds_alternative<quire::vision::Qwen2VLOptions>(processor_config.family));
    const auto& processor = std::get<quire::vision::Qwen2VLOptions>(processor_config.family);
    QCOMPARE(processor.min_pixels, std::int64_t(3136));
    QCOMPARE(processor.max_pixels, std::int64_t(12845056));
    QCOMPARE(processor.patch_size, 14);
    QCOMPARE(processor.merge_size, 2);
    QCOMPARE(processor.temporal_patch_size, 2);
    const io::ModelTensors tensors = io::ModelTensors::open(model);
    for (const char* name : {"model.embed_tokens.weight", "model.layers.1.self_attn.q_proj.bias",
                             "lm_head.weight", "visual.patch_embed.proj.weight",
                             "visual.blocks.1.attn.qkv.bias", "visual.merger.mlp.2.weight"}) {
      QVERIFY2(tensors.contains(name), name);
    }
  }

  // The model's description names the tower; tokens per image depend on the image.
  void descriptionNamesTheTower() {
    const modelgen::RandomModelSpec spec = qwen_vision_spec("bf16", "model.language_model.", 4);
    const std::filesystem::path model =
        quire::test::write_vision_model(spec, root_.filePath(QStringLiteral("described")));
    const vision::VisionAvailability vision =
        vision::describe_vision(model, io::ModelTensors::open(model));
    QVERIFY2(vision.tower.has_value(), vision.problem.c_str());
    const vision::VisionTowerSummary& tower = *vision.tower;
    QCOMPARE(tower.tower, std::string("Qwen2.5-VL ViT"));
    QCOMPARE(tower.projector, std::string("patch merger"));
    QCOMPARE(tower.image_size, 0);
    QCOMPARE(tower.patch_size, 14);
    QCOMPARE(tower.merge_size, 2);
    QCOMPARE(tower.layers, 2);
    QCOMPARE(tower.hidden_size, 64);
    QCOMPARE(tower.tokens_per_image, 0);
    QCOMPARE(tower.dtype, quire::kernels::DType::BF16);
    QCOMPARE(tower.tensor_prefix, std::string("model.visual."));
    // patch embedding; per block two norms, qkv, proj, gate, up, down; merger
    const std::int64_t block =
        2 * 64 + (3 * 64 * 64 + 3 * 64) + (64 * 64 + 64) + 2 * (96 * 64 + 96) + (64 * 96 + 64);
    const std::int64_t merger = 64 + (256 * 256 + 256) + (spec.hidden * 256 + spec.hidden);
    const std::int64_t parameters = 64 * 3 * 2 * 14 * 14 + 2 * block + merger;
    QCOMPARE(tower.parameters, parameters);
    QCOMPARE(tower.bytes, 2 * parameters);
    QVERIFY(vision.problem.empty());
  }
};

QUIRE_TEST(Qwen25VisionReferenceTest)
#include "test_qwen25_vision_reference.moc"
