// Any bytes as an attached image file: decode_image must return an image
// within its limits or refuse with a message, and whatever it returns goes
// through each processor family (configured small, so a run stays fast):
// the processor must prepare it or refuse it with ImageError, and what it
// prepares must agree with itself (shapes, buffer sizes, the token layout
// predicted from the size alone).

#include <QCoreApplication>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <vector>

#include "quire/app/images/decode_image.h"
#include "quire/engine/vision/image_processor.h"
#include "quire/engine/vision/processor_config.h"

using namespace quire::vision;

namespace {

std::vector<std::unique_ptr<ImageProcessor>> small_processors() {
  std::vector<std::unique_ptr<ImageProcessor>> out;
  out.push_back(make_image_processor(parse_processor_config(
      R"({"image_processor_type": "Gemma3ImageProcessor", "size": {"height": 32, "width": 32},
          "do_pan_and_scan": true, "pan_and_scan_min_crop_size": 4, "image_seq_length": 16})",
      "", "fuzz-gemma3")));
  out.push_back(make_image_processor(parse_processor_config(
      R"({"image_processor_type": "Qwen2VLImageProcessor", "min_pixels": 784, "max_pixels": 12544})",
      "", "fuzz-qwen")));
  out.push_back(make_image_processor(parse_processor_config(
      R"({"image_processor_type": "PixtralImageProcessor", "size": {"longest_edge": 64}})",
      R"({"patch_size": 8, "spatial_merge_size": 2})", "fuzz-pixtral")));
  return out;
}

std::size_t product(const std::vector<std::size_t>& shape) {
  std::size_t n = 1;
  for (std::size_t d : shape)
    n *= d;
  return n;
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int* argc, char*** argv) {
  // Qt finds its image format plugins (JPEG, WebP) through the application.
  static QCoreApplication application(*argc, *argv);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const std::vector<std::unique_ptr<ImageProcessor>> processors = small_processors();
  quire::images::ImageLimits limits;
  limits.max_bytes = 1 << 20;
  limits.max_pixels = 1 << 20;
  RgbImage image;
  try {
    image = quire::images::decode_image(
        QByteArray(reinterpret_cast<const char*>(data), static_cast<qsizetype>(size)), limits);
  } catch (const quire::images::DecodeError& error) {
    if (error.what()[0] == '\0') std::abort();
    return 0;
  }
  check_rgb_image(image);
  if (std::int64_t{image.width} * image.height > limits.max_pixels) std::abort();
  for (const auto& processor : processors) {
    ProcessedImage processed;
    try {
      processed = processor->process(image);
    } catch (const ImageError&) {
      continue;
    }
    if (processed.pixel_values.size() != product(processed.shape)) std::abort();
    if (processed.resized.empty()) std::abort();
    for (const RgbImage& resized : processed.resized)
      check_rgb_image(resized);
    if (processed.tokens.image_positions() == 0) std::abort();
    if (processor->token_layout(image.width, image.height).text() != processed.tokens.text())
      std::abort();
  }
  return 0;
}
