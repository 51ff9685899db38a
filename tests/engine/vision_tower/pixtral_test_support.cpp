#include "pixtral_test_support.h"

#include <QProcess>
#include <QString>
#include <cmath>
#include <fstream>

namespace quire::test {

engine::modelgen::RandomModelSpec pixtral_spec(const char* format, const char* text_prefix,
                                               std::uint64_t seed) {
  engine::modelgen::RandomModelSpec spec = engine::modelgen::default_spec("mistral");
  spec.format = engine::modelgen::parse_format(format);
  spec.seed = seed;
  spec.layers = 2;
  spec.multimodal = true;
  spec.text_prefix = text_prefix;
  spec.vision.hidden = 64;
  spec.vision.intermediate = 96;
  spec.vision.heads = 4;
  spec.vision.layers = 2;
  spec.vision.image_size = 112;
  spec.vision.patch_size = 14;
  spec.vision.spatial_merge_size = 2;
  return spec;
}

std::vector<float> pixtral_pixels(int channels, int height, int width, std::uint32_t seed) {
  // A smooth pattern per channel plus a small hash-like ripple, within
  // [-1, 1] as normalized pixels are, different along rows and columns.
  std::vector<float> pixels(std::size_t(channels) * std::size_t(height) * std::size_t(width));
  std::size_t i = 0;
  for (int c = 0; c < channels; ++c) {
    for (int y = 0; y < height; ++y) {
      for (int x = 0; x < width; ++x) {
        const double wave = std::sin(0.17 * (x + 1) * (c + 1) + 0.29 * y * (seed % 5 + 1));
        const double ripple = std::cos(double((x * 13 + y * 29 + c * 5 + seed) % 19));
        pixels[i++] = static_cast<float>(0.8 * wave + 0.2 * ripple);
      }
    }
  }
  return pixels;
}

std::vector<double> pixtral_reference(const std::filesystem::path& model,
                                      const std::vector<float>& pixels, int height, int width) {
  const std::filesystem::path input = model / "pixels.f32";
  const std::filesystem::path output = model / "reference.f64";
  {
    std::ofstream file(input, std::ios::binary);
    file.write(reinterpret_cast<const char*>(pixels.data()),
               std::streamsize(pixels.size() * sizeof(float)));
  }
  QProcess python;
  python.start(
      QStringLiteral(QUIRE_PYTHON),
      {QStringLiteral(QUIRE_TEST_TOOLS_DIR "/reference_vision.py"),
       QString::fromStdString(model.string()), QString::fromStdString(input.string()),
       QString::fromStdString(output.string()), QString::number(height), QString::number(width)});
  if (!python.waitForFinished(300000) || python.exitCode() != 0) {
    qWarning("reference_vision.py failed: %s", python.readAllStandardError().constData());
    return {};
  }
  std::ifstream file(output, std::ios::binary);
  std::vector<double> values;
  double value = 0.0;
  while (file.read(reinterpret_cast<char*>(&value), sizeof(value)))
    values.push_back(value);
  return values;
}

}  // namespace quire::test
