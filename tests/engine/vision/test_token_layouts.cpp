// What images become in the prompt for each family, worked out by hand from
// the processors' code, and the processors' handling of odd images.

#include <QTest>

#include "quire/engine/vision/gemma3_image_processor.h"
#include "quire/engine/vision/pil_resample.h"
#include "quire/engine/vision/pixtral_image_processor.h"
#include "quire/engine/vision/qwen2vl_image_processor.h"
#include "test_main.h"

using namespace quire::vision;

namespace {

std::string repeat(const std::string& text, int count) {
  std::string out;
  for (int i = 0; i < count; ++i)
    out += text;
  return out;
}

RgbImage solid(int width, int height, std::uint8_t value) {
  RgbImage image;
  image.width = width;
  image.height = height;
  image.rgb.assign(static_cast<std::size_t>(width) * static_cast<std::size_t>(height) * 3, value);
  return image;
}

QString image_error(const ImageProcessor& processor, const RgbImage& image) {
  try {
    processor.process(image);
  } catch (const ImageError& error) {
    return QString::fromUtf8(error.what());
  }
  return {};
}

const Normalization kClip{true,
                          1.0 / 255.0,
                          true,
                          {0.48145466, 0.4578275, 0.40821073},
                          {0.26862954, 0.26130258, 0.27577711}};
const Normalization kHalf{true, 1.0 / 255.0, true, {0.5, 0.5, 0.5}, {0.5, 0.5, 0.5}};

Qwen2VLOptions qwen25() {
  Qwen2VLOptions options;
  options.min_pixels = 3136;
  options.max_pixels = 12845056;
  return options;
}

}  // namespace

class TokenLayoutTest : public QObject {
  Q_OBJECT

 private slots:
  void gemma3_one_image_is_256_soft_tokens_between_markers() {
    const Gemma3ImageProcessor gemma(Gemma3Options{}, ResampleFilter::Bilinear, kHalf);
    const ImageTokenLayout layout = gemma.token_layout(640, 480);
    QCOMPARE(layout.image_positions(), std::size_t{256});
    QCOMPARE(layout.text(),
             "\n\n<start_of_image>" + repeat("<image_soft_token>", 256) + "<end_of_image>\n\n");
    QCOMPARE(layout.runs.size(), std::size_t{5});
    QVERIFY(layout.runs[2].image_positions);
    QVERIFY(!layout.runs[1].image_positions);
  }

  void gemma3_pan_and_scan_crops_as_the_processor_cuts_them() {
    Gemma3Options options;
    options.do_pan_and_scan = true;
    const Gemma3ImageProcessor gemma(options, ResampleFilter::Bilinear, kHalf);
    // 4:1 landscape: four crops of 400 along x.
    PanAndScanCrops crops = gemma.pan_and_scan(1600, 400);
    QCOMPARE(crops.count(), 4);
    QCOMPARE(crops.x_offsets, (std::vector<int>{0, 400, 800, 1200}));
    QCOMPARE(crops.crop_height, 400);
    // Portrait 10:3: three crops of ceil(1000 / 3) = 334 rows.
    crops = gemma.pan_and_scan(300, 1000);
    QCOMPARE(crops.y_offsets, (std::vector<int>{0, 334, 668}));
    QCOMPARE(crops.crop_width, 300);
    // Nearly square, or crops below the minimum size: none.
    QCOMPARE(gemma.pan_and_scan(1100, 1000).count(), 0);
    QCOMPARE(gemma.pan_and_scan(1000, 7).count(), 0);
    // 4:3 asks for two crops, but 200 columns are below the 256 minimum.
    QCOMPARE(gemma.pan_and_scan(400, 300).count(), 0);

    const std::string full =
        "\n\n<start_of_image>" + repeat("<image_soft_token>", 256) + "<end_of_image>\n\n";
    const ImageTokenLayout layout = gemma.token_layout(1600, 400);
    QCOMPARE(layout.text(), "Here is the original image " + full +
                                " and here are some crops to help you see better " + full + " " +
                                full + " " + full + " " + full);
    QCOMPARE(layout.image_positions(), std::size_t{5 * 256});

    // The last crop of the portrait image ends at the image's edge.
    const ProcessedImage processed = gemma.process(solid(300, 1000, 9));
    QCOMPARE(processed.num_crops, 3);
    QCOMPARE(processed.shape, (std::vector<std::size_t>{4, 3, 896, 896}));
  }

  void qwen_pads_one_token_per_merged_patch() {
    const Qwen2VLImageProcessor qwen(qwen25(), ResampleFilter::Bicubic, kClip);
    ImageTokenLayout layout = qwen.token_layout(896, 896);
    QCOMPARE(layout.image_positions(), std::size_t{1024});
    QCOMPARE(layout.text(), "<|vision_start|>" + repeat("<|image_pad|>", 1024) + "<|vision_end|>");
    // 1x1 grows to the minimum area: 56x56, a 4x4 grid, 4 merged tokens.
    layout = qwen.token_layout(1, 1);
    QCOMPARE(layout.image_positions(), std::size_t{4});
    const ResizedSize size = qwen_smart_resize(1, 1, 28, 3136, 12845056);
    QCOMPARE(size.width, 56);
    QCOMPARE(size.height, 56);
    // Python's round(): 42 / 28 = 1.5 rounds to even (2), 70 / 28 = 2.5 to 2.
    QCOMPARE(qwen_smart_resize(42, 70, 28, 3136, 12845056).width, 56);
    QCOMPARE(qwen_smart_resize(42, 70, 28, 3136, 12845056).height, 56);
  }

  void qwen_refuses_aspect_ratios_above_200() {
    const Qwen2VLImageProcessor qwen(qwen25(), ResampleFilter::Bicubic, kClip);
    const QString message = image_error(qwen, solid(1200, 4, 0));
    QVERIFY2(message.contains(QLatin1String("1200x4 pixels, an aspect ratio above 200:1")),
             qPrintable(message));
    QVERIFY(image_error(qwen, solid(800, 4, 0)).isEmpty());
  }

  void qwen_patches_are_ordered_block_by_block() {
    // Patch 1, merge 2, two time steps, no rescaling: each row is one pixel's
    // three channels, each repeated twice, and rows go 2x2 block by block.
    Qwen2VLOptions options;
    options.patch_size = 1;
    options.merge_size = 2;
    options.temporal_patch_size = 2;
    options.min_pixels = 1;
    options.max_pixels = 100;
    const Qwen2VLImageProcessor qwen(options, ResampleFilter::Bicubic,
                                     Normalization{false, 1.0, false, {}, {}});
    RgbImage image;
    image.width = 4;
    image.height = 2;
    for (int i = 0; i < 24; ++i)
      image.rgb.push_back(static_cast<std::uint8_t>(i));
    const ProcessedImage processed = qwen.process(image);
    QCOMPARE(processed.grid_thw, (std::array<int, 3>{1, 2, 4}));
    QCOMPARE(processed.shape, (std::vector<std::size_t>{8, 6}));
    const int order[8][2] = {{0, 0}, {0, 1}, {1, 0}, {1, 1}, {0, 2}, {0, 3}, {1, 2}, {1, 3}};
    for (int row = 0; row < 8; ++row) {
      const int pixel = order[row][0] * 4 + order[row][1];
      for (int c = 0; c < 3; ++c)
        for (int t = 0; t < 2; ++t)
          QCOMPARE(processed.pixel_values[static_cast<std::size_t>(row * 6 + c * 2 + t)],
                   float(pixel * 3 + c));
    }
    QCOMPARE(processed.tokens.image_positions(), std::size_t{2});
  }

  void pixtral_rows_end_in_breaks_and_the_last_in_end() {
    const PixtralImageProcessor pixtral(PixtralOptions{}, ResampleFilter::Bicubic, kClip);
    ImageTokenLayout layout = pixtral.token_layout(40, 20);
    QCOMPARE(layout.text(), repeat("[IMG]", 3) + "[IMG_BREAK]" + repeat("[IMG]", 3) + "[IMG_END]");
    QCOMPARE(layout.image_positions(), std::size_t{6});
    layout = pixtral.token_layout(1, 1);
    QCOMPARE(layout.text(), std::string("[IMG][IMG_END]"));
    // Fitted within 1024: 2000x1500 becomes 1024x768, 64x48 patches.
    const ResizedSize size = pixtral_resize_size(2000, 1500, PixtralOptions{});
    QCOMPARE(size.width, 1024);
    QCOMPARE(size.height, 768);
    QCOMPARE(pixtral.token_layout(2000, 1500).image_positions(), std::size_t{64 * 48});
  }

  void pixtral_refuses_images_that_shrink_to_nothing() {
    const PixtralImageProcessor pixtral(PixtralOptions{}, ResampleFilter::Bicubic, kClip);
    const QString message = image_error(pixtral, solid(3000, 1, 0));
    QVERIFY2(message.contains(QLatin1String("one side shrinks to nothing")), qPrintable(message));
  }

  void invalid_images_are_refused_with_their_problem() {
    const PixtralImageProcessor pixtral(PixtralOptions{}, ResampleFilter::Bicubic, kClip);
    QString message = image_error(pixtral, RgbImage{});
    QVERIFY2(message.contains(QLatin1String("the image is empty (0x0 pixels)")),
             qPrintable(message));
    RgbImage short_buffer = solid(4, 4, 0);
    short_buffer.rgb.pop_back();
    message = image_error(pixtral, short_buffer);
    QVERIFY2(message.contains(QLatin1String("holds 47 bytes where 4x4 RGB pixels need 48")),
             qPrintable(message));
    QVERIFY_THROWS_EXCEPTION(ImageError,
                             resize_like_pil(solid(4, 4, 0), 0, 4, ResampleFilter::Bicubic));
    QVERIFY_THROWS_EXCEPTION(ImageError, resample_filter_from_pil(0));
  }

  void resizing_to_the_same_size_copies_and_one_axis_resizes_alone() {
    RgbImage image = solid(5, 3, 0);
    for (std::size_t i = 0; i < image.rgb.size(); ++i)
      image.rgb[i] = static_cast<std::uint8_t>(i * 17);
    const RgbImage same = resize_like_pil(image, 5, 3, ResampleFilter::Bicubic);
    QCOMPARE(same.rgb, image.rgb);
    // Only the width changes: rows stay independent of each other.
    const RgbImage wider = resize_like_pil(image, 9, 3, ResampleFilter::Bilinear);
    QCOMPARE(wider.height, 3);
    QCOMPARE(wider.rgb.size(), std::size_t{9 * 3 * 3});
  }

  void normalization_follows_numpy_float32() {
    QCOMPARE(kHalf.apply(255, 0), 1.0f);
    QCOMPARE(kHalf.apply(0, 2), -1.0f);
    // (float(128 / 255) - float(0.48145466)) / float(0.26862954), in float32.
    const float x = static_cast<float>(128.0 * (1.0 / 255.0));
    QCOMPARE(kClip.apply(128, 0), (x - 0.48145466f) / 0.26862954f);
  }
};

QUIRE_TEST(TokenLayoutTest)
#include "test_token_layouts.moc"
