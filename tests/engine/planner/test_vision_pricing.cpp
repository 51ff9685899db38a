// A Gemma 3 model's vision tower as placement_request prices it, from a
// random directory written by modelgen, and a text-only model beside it.
// The expected figures are worked out below from what the encoder holds
// (docs/vision.md, "Memory"), then checked against the bytes the encoder
// really allocates while it loads and reads an image.

#include <QTemporaryDir>
#include <QTest>
#include <vector>

#include "allocation_counter.h"
#include "quire/engine/modelgen/random_model.h"
#include "quire/engine/planner/planner.h"
#include "quire/engine/runtime/model_runtime.h"
#include "quire/engine/vision/gemma3_image_scratch.h"
#include "quire/engine/vision/gemma3_vision_encoder.h"
#include "quire/kernels/cpu/thread_pool.h"
#include "test_main.h"

using namespace quire::engine;
namespace kernels = quire::kernels;

namespace {

// A SigLIP tower of width 64 (4 heads of 16), MLP 96, 2 layers, 56 x 56
// images in patches of 14 (16 patches), pooled to 4 tokens of a 128-wide
// text model; every tensor FP16.
modelgen::RandomModelSpec gemma3_spec(bool multimodal) {
  modelgen::RandomModelSpec spec = modelgen::default_spec("gemma3");
  spec.layers = 2;
  spec.hidden = 128;
  spec.multimodal = multimodal;
  spec.vision.hidden = 64;
  spec.vision.intermediate = 96;
  spec.vision.heads = 4;
  spec.vision.layers = 2;
  spec.vision.image_size = 56;
  spec.vision.patch_size = 14;
  spec.vision.tokens_per_image = 4;
  return spec;
}

// Parameters of that tower. Kept in their FP16 (2 bytes) once loaded: the
// patch convolution 64 x 3 x 14 x 14 = 37,632; per layer q, k, v and out
// 4 x 64 x 64 = 16,384 and fc1, fc2 2 x 64 x 96 = 12,288; the projection
// 64 x 128 = 8,192. Widened to FP32 (4 bytes): the patch bias 64 and the
// position embedding 16 x 64 = 1,024; per layer two LayerNorms 2 x 128,
// four attention biases 4 x 64, fc1's bias 96 and fc2's 64 (672); the post
// LayerNorm 128 and the projector's norm 64.
constexpr std::int64_t kKeptParameters = 37632 + 2 * (16384 + 12288) + 8192;  // 103,168
constexpr std::int64_t kWidenedParameters = 64 + 1024 + 2 * 672 + 128 + 64;   // 2,624
constexpr std::int64_t kFileBytes = 2 * (kKeptParameters + kWidenedParameters);
constexpr std::int64_t kMemoryBytes = 2 * kKeptParameters + 4 * kWidenedParameters;  // 216,832

// Floats held at once while one image is read, P = 16 patches, H = 64,
// I = 96, D = 16, X = 3 x 56 x 56 = 9,408 pixel values, T = 4, E = 128:
//   patch embedding  X + X (the gathered patches) + P*H         = 19,840
//   tower's end      X + 8*P*H + P*I + 4*P*D + P*P              = 20,416
//   projector        X + P*H + T*H + max(2*H, T*E)              = 11,200
constexpr std::int64_t kScratchBytes = 4 * (9408 + 8 * 16 * 64 + 16 * 96 + 4 * 16 * 16 + 16 * 16);

kernels::DeviceInfo gpu(std::int64_t free_bytes) {
  kernels::DeviceInfo device;
  device.index = 0;
  device.name = "GPU";
  device.total_bytes = free_bytes;
  device.free_bytes = free_bytes;
  return device;
}

}  // namespace

class VisionPricingTest : public QObject {
  Q_OBJECT

  QTemporaryDir root_;

  std::filesystem::path write(const char* name, bool multimodal) {
    const std::filesystem::path path = root_.filePath(QString::fromLatin1(name)).toStdString();
    modelgen::write_random_model(gemma3_spec(multimodal), path);
    return path;
  }

 private slots:
  void initTestCase() { QVERIFY(root_.isValid()); }

  void aGemma3TowerIsPricedFromItsConfigAndTensors() {
    const ModelDescription model = ModelDescription::open(write("gemma3-vision", true));
    QVERIFY(model.vision.tower);
    const vision::VisionTowerSummary& tower = *model.vision.tower;
    QCOMPARE(tower.bytes, kFileBytes);
    QCOMPARE(tower.memory_bytes, kMemoryBytes);
    QCOMPARE(tower.scratch_bytes, kScratchBytes);

    RuntimeOptions options;
    options.cache_tokens = 1024;
    const std::vector<kernels::DeviceInfo> devices{gpu(8 * kGiB)};
    PlacementRequest request = placement_request(model, devices, options);
    QVERIFY(request.vision_tower);
    QCOMPARE(request.vision_tower->name, std::string("SigLIP tower, Gemma 3 projector"));
    QCOMPARE(request.vision_tower->weight_bytes, kMemoryBytes);
    QCOMPARE(request.vision_tower->scratch_bytes, kScratchBytes);
    // Host memory is asked for the tower even with the cache on the device.
    QVERIFY(request.host);
    QCOMPARE(request.host->reserve_bytes, options.host_reserve_bytes);

    request.host = PlanHost{kGiB + kMemoryBytes + kScratchBytes, kGiB};
    PlacementPlan plan = plan_placement(request);
    QVERIFY(plan.fits);
    QVERIFY(plan.vision_tower->fits);
    QCOMPARE(plan.vision_tower->usable, kMemoryBytes + kScratchBytes);
    request.host->free_bytes -= 1;
    plan = plan_placement(request);
    QVERIFY(plan.fits);
    QVERIFY(!plan.vision_tower->fits);
    QVERIFY(plan.vision_tower->problem.starts_with(
        "images cannot be read: the vision tower (SigLIP tower, Gemma 3 projector) needs 1 MiB "
        "of host memory"));
  }

  // On a CPU device that is the machine's memory the tower is priced there.
  void onTheMachinesMemoryTheTowerIsPricedOnItsDevice() {
    const ModelDescription model = ModelDescription::open(write("gemma3-vision-cpu", true));
    kernels::DeviceInfo cpu = gpu(64 * kGiB);
    cpu.name = "CPU";
    cpu.host_memory = true;
    RuntimeOptions options;
    options.cache_tokens = 1024;
    const std::vector<kernels::DeviceInfo> devices{cpu};
    const PlacementRequest request = placement_request(model, devices, options);
    QVERIFY(request.devices.front().host_memory);
    const PlacementPlan plan = plan_placement(request);
    const DevicePlacement& device = plan.devices.front();
    QCOMPARE(plan.vision_tower->usable, device.free_after - device.reserve);
  }

  void aTextOnlyModelPricesNothing() {
    const ModelDescription model = ModelDescription::open(write("gemma3-text", false));
    QVERIFY(!model.vision.tower);
    QVERIFY(model.vision.problem.empty());
    RuntimeOptions options;
    options.cache_tokens = 1024;
    const std::vector<kernels::DeviceInfo> devices{gpu(8 * kGiB)};
    const PlacementRequest request = placement_request(model, devices, options);
    QVERIFY(!request.vision_tower);
    QVERIFY(!request.host);  // as before: only an offloaded cache asks for it
    const PlacementPlan plan = plan_placement(request);
    QVERIFY(!plan.vision_tower);
    QVERIFY(describe_plan(plan).find("vision") == std::string::npos);
  }

  // gemma-3-4b-it's tower: 896 x 896 images in patches of 14 (4,096
  // patches), width 1152, MLP 4304, 16 heads of 72, 256 tokens of a
  // 2560-wide text model. The tower's end is the peak: 2,408,448 pixel
  // values + 8 x 4,718,592 + 17,629,184 + 4 x 294,912 + 16,777,216 =
  // 75,743,232 floats, 288.9 MiB.
  void thePublishedTowerNeedsAbout289MiBPerImage() {
    vision::Gemma3VisionConfig config;
    config.tower.hidden_size = 1152;
    config.tower.intermediate_size = 4304;
    config.tower.num_heads = 16;
    config.tower.num_layers = 27;
    config.tower.image_size = 896;
    config.tower.patch_size = 14;
    config.tokens_per_image = 256;
    config.text_hidden_size = 2560;
    QCOMPARE(vision::gemma3_image_scratch_bytes(config), std::int64_t{302972928});
  }

  // What the encoder really holds: its weights once loaded, and its peak
  // while it reads one image (the pixel tensor made inside the count). The
  // price leaves out small things: the layers' vector and the products'
  // per-thread tiles, so the measured figures may exceed it by a little.
  void thePriceIsWhatTheEncoderAllocates() {
    const std::filesystem::path path = write("gemma3-vision-measured", true);
    kernels::ThreadPool pool(1);
    std::int64_t loaded = 0;
    std::optional<vision::Gemma3VisionEncoder> encoder;
    {
      quire::test::AllocationCounting counting;
      encoder.emplace(vision::Gemma3VisionEncoder::load(path));
      loaded = counting.live();
    }
    QVERIFY2(loaded >= kMemoryBytes && loaded <= kMemoryBytes + 4096,
             qPrintable(QString::number(loaded)));
    std::int64_t peak = 0;
    {
      quire::test::AllocationCounting counting;
      const std::vector<float> values(3 * 56 * 56, 0.25f);
      const vision::PixelTensor pixels{values, 3, 56, 56};
      const vision::ImageEmbeddings embeddings = encoder->embed(pool, pixels);
      QCOMPARE(embeddings.values.size(), std::size_t(4 * 128));
      peak = counting.peak();
    }
    qInfo("loaded %lld bytes (priced %lld), peak %lld bytes (priced %lld)",
          static_cast<long long>(loaded), static_cast<long long>(kMemoryBytes),
          static_cast<long long>(peak), static_cast<long long>(kScratchBytes));
    QVERIFY2(peak >= kScratchBytes && peak <= kScratchBytes + 4096,
             qPrintable(QStringLiteral("peak %1, priced %2").arg(peak).arg(kScratchBytes)));
  }
};

QUIRE_TEST(VisionPricingTest)
#include "test_vision_pricing.moc"
