// Qwen2.5-VL's and Mistral Small 3's vision sides as the model's
// description prices them: the weights once loaded and the host memory that
// reading the largest image takes (qwen25_image_scratch_bytes,
// pixtral_image_scratch_bytes), checked against the bytes the encoders
// really allocate, on small random directories written by modelgen; and the
// published towers' figures.

#include <QTemporaryDir>
#include <QTest>
#include <vector>

#include "allocation_counter.h"
#include "quire/engine/io/model_tensors.h"
#include "quire/engine/modelgen/random_model.h"
#include "quire/engine/vision/pixtral_image_scratch.h"
#include "quire/engine/vision/pixtral_vision_encoder.h"
#include "quire/engine/vision/qwen25_image_scratch.h"
#include "quire/engine/vision/qwen25_vision_encoder.h"
#include "quire/engine/vision/vision_tower_summary.h"
#include "quire/kernels/cpu/thread_pool.h"
#include "test_main.h"

using namespace quire::engine;
namespace kernels = quire::kernels;

namespace {

// The allocation counter sees the price's floats and a little more (the
// layers' vectors, the products' per-thread tiles, the window plan).
constexpr std::int64_t kSlack = 16 * 1024;

void expect_priced(std::int64_t measured, std::int64_t priced, const char* what) {
  qInfo("%s: measured %lld bytes, priced %lld", what, static_cast<long long>(measured),
        static_cast<long long>(priced));
  QVERIFY2(measured >= priced && measured <= priced + kSlack,
           qPrintable(QStringLiteral("%1: measured %2, priced %3")
                          .arg(QLatin1String(what))
                          .arg(measured)
                          .arg(priced)));
}

// The encoder `load` makes, and the bytes it holds once loaded.
template <class Load>
auto load_counted(Load load, std::int64_t& loaded) {
  quire::test::AllocationCounting counting;
  auto encoder = load();
  loaded = counting.live();
  return encoder;
}

// The most bytes live while `read` runs.
template <class Read>
std::int64_t peak_of(Read read) {
  quire::test::AllocationCounting counting;
  read();
  return counting.peak();
}

vision::VisionTowerSummary summary_of(const std::filesystem::path& path) {
  const vision::VisionAvailability availability =
      vision::describe_vision(path, io::ModelTensors::open(path));
  if (!availability.tower) qFatal("no tower: %s", availability.problem.c_str());
  return *availability.tower;
}

}  // namespace

class OtherVisionPricingTest : public QObject {
  Q_OBJECT

  QTemporaryDir root_;

 private slots:
  void initTestCase() { QVERIFY(root_.isValid()); }

  // A ViT of width 64 (4 heads of 16), MLP 96, 2 blocks (the second full),
  // windows of 56 pixels, merge 2, text width 128; a 4 x 8 patch image (one
  // frame).
  void qwen25IsPricedAsItAllocates() {
    modelgen::RandomModelSpec spec = modelgen::default_spec("qwen2_5_vl");
    spec.layers = 1;
    spec.hidden = 128;
    spec.multimodal = true;
    spec.vision.hidden = 64;
    spec.vision.intermediate = 96;
    spec.vision.heads = 4;
    spec.vision.layers = 2;
    spec.vision.window_size = 56;
    spec.vision.fullatt_blocks = {1};
    const std::filesystem::path path = root_.filePath(QStringLiteral("qwen25")).toStdString();
    modelgen::write_random_model(spec, path);
    std::optional<vision::Qwen25VisionConfig> config = vision::read_qwen25_vision_config(path);
    QVERIFY(config);

    kernels::ThreadPool pool(1);
    std::int64_t loaded = 0;
    const auto encoder =
        load_counted([&] { return vision::Qwen25VisionEncoder::load(path); }, loaded);
    const vision::VisionTowerSummary summary = summary_of(path);
    expect_priced(loaded, summary.memory_bytes, "Qwen2.5-VL weights");

    int tokens = 0;
    const std::int64_t peak = peak_of([&] {
      const std::vector<float> patches(std::size_t(32 * config->patch_values()), 0.25f);
      tokens = encoder.embed(pool, patches, {1, 4, 8}).tokens;
    });
    QCOMPARE(tokens, 8);
    expect_priced(peak, vision::qwen25_image_scratch_bytes(*config, 32), "Qwen2.5-VL image");
    // The description prices the largest image of the directory's budget:
    // modelgen writes the published preprocessor_config.json's 12,845,056
    // pixels, 65,536 patches.
    QCOMPARE(vision::qwen25_largest_image_patches(*config, 12845056), std::int64_t{65536});
    QCOMPARE(summary.scratch_bytes, vision::qwen25_image_scratch_bytes(*config, 65536));
    // Without the file, transformers' default budget (1,003,520 pixels).
    std::filesystem::remove(path / "preprocessor_config.json");
    QCOMPARE(summary_of(path).scratch_bytes, vision::qwen25_image_scratch_bytes(*config, 5120));
  }

  // Qwen2.5-VL-7B's tower at its published budget (12,845,056 pixels):
  // 65,536 patches of 1,176 values, width 1280, MLP 3420, 16 heads of 80,
  // 16,384 tokens of 3,584. In floats: 2 x 77,070,336 (input, regrouped) +
  // 131,072 + 10,485,760 (rotary) + 587,202,560 (7 x R x H) + 448,266,240
  // (gate, up) + 20,971,520 + 16,777,216 (attention) + 32,768 + 83,886,080
  // (merger inner) + 117,440,512 (its output twice) = 1,439,334,400 floats,
  // 5.36 GiB.
  void thePublishedQwenTowerPricesItsLargestImage() {
    vision::Qwen25VisionConfig config;
    config.hidden_size = 1280;
    config.intermediate_size = 3420;
    config.num_heads = 16;
    config.out_hidden_size = 3584;
    const std::int64_t patches = vision::qwen25_largest_image_patches(config, 12845056);
    QCOMPARE(patches, std::int64_t{65536});
    QCOMPARE(vision::qwen25_image_scratch_bytes(config, patches), std::int64_t{5757337600});
  }

  // Pixtral of width 64 (4 heads of 16), MLP 96, 2 layers, images up to
  // 112 pixels in patches of 14, merge 2: the largest is 8 x 8 patches.
  void pixtralIsPricedAsItAllocates() {
    modelgen::RandomModelSpec spec = modelgen::default_spec("mistral");
    spec.layers = 1;
    spec.multimodal = true;
    spec.vision.hidden = 64;
    spec.vision.intermediate = 96;
    spec.vision.heads = 4;
    spec.vision.layers = 2;
    spec.vision.image_size = 112;
    spec.vision.patch_size = 14;
    spec.vision.spatial_merge_size = 2;
    const std::filesystem::path path = root_.filePath(QStringLiteral("pixtral")).toStdString();
    modelgen::write_random_model(spec, path);
    std::optional<vision::Mistral3VisionConfig> config = vision::read_mistral3_vision_config(path);
    QVERIFY(config);
    QCOMPARE(vision::pixtral_largest_image_patches(*config), std::int64_t{64});

    kernels::ThreadPool pool(1);
    std::int64_t loaded = 0;
    const auto encoder =
        load_counted([&] { return vision::PixtralVisionEncoder::load(path); }, loaded);
    const vision::VisionTowerSummary summary = summary_of(path);
    expect_priced(loaded, summary.memory_bytes, "Pixtral weights");

    int tokens = 0;
    const std::int64_t peak = peak_of([&] {
      const std::vector<float> values(3 * 112 * 112, 0.25f);
      tokens = encoder.embed(pool, vision::PixelTensor{values, 3, 112, 112}).tokens;
    });
    QCOMPARE(tokens, 16);
    expect_priced(peak, summary.scratch_bytes, "Pixtral image");
  }

  // Mistral Small 3.1's encoder: 1540-pixel images in patches of 14 (110 x
  // 110 = 12,100 patches of 588 values), width 1024, MLP 4096, 16 heads of
  // 64, 3,025 tokens of 5,120. A layer is the peak: 7,114,800 + 8 x
  // 12,390,400 + 4,646,400 + 146,410,000 (the scores) + 99,123,200 =
  // 356,417,600 floats, 1.33 GiB.
  void thePublishedPixtralPricesItsLargestImage() {
    vision::Mistral3VisionConfig config;
    config.tower.hidden_size = 1024;
    config.tower.intermediate_size = 4096;
    config.tower.num_heads = 16;
    config.tower.image_size = 1540;
    config.tower.patch_size = 14;
    config.text_hidden_size = 5120;
    const std::int64_t patches = vision::pixtral_largest_image_patches(config);
    QCOMPARE(patches, std::int64_t{12100});
    QCOMPARE(vision::pixtral_image_scratch_bytes(config, patches), std::int64_t{1425670400});
  }
};

QUIRE_TEST(OtherVisionPricingTest)
#include "test_other_vision_pricing.moc"
