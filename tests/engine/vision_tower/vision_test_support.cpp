#include "vision_test_support.h"

#include <QDir>
#include <QFile>
#include <QProcess>
#include <QTest>
#include <cmath>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>

#include "quire/engine/modelgen/random_model.h"

namespace quire::test {

engine::modelgen::RandomModelSpec vision_spec(const char* format, const char* text_prefix,
                                              std::uint64_t seed) {
  engine::modelgen::RandomModelSpec spec = engine::modelgen::default_spec("gemma3");
  spec.format = engine::modelgen::parse_format(format);
  spec.seed = seed;
  spec.layers = 2;
  spec.sliding_window = 8;
  spec.multimodal = true;
  spec.text_prefix = text_prefix;
  spec.vision.hidden = 64;
  spec.vision.intermediate = 96;
  spec.vision.heads = 4;
  spec.vision.layers = 2;
  spec.vision.image_size = 56;
  spec.vision.patch_size = 14;
  spec.vision.tokens_per_image = 4;
  return spec;
}

std::filesystem::path write_vision_model(const engine::modelgen::RandomModelSpec& spec,
                                         const QString& dir) {
  const std::filesystem::path path = dir.toStdString();
  engine::modelgen::write_random_model(spec, path);
  return path;
}

std::vector<float> test_pixels(int channels, int size, std::uint32_t seed) {
  // A smooth pattern per channel plus a small hash-like ripple, within
  // [-1, 1] as normalized pixels are.
  std::vector<float> pixels(std::size_t(channels) * std::size_t(size) * std::size_t(size));
  std::size_t i = 0;
  for (int c = 0; c < channels; ++c) {
    for (int y = 0; y < size; ++y) {
      for (int x = 0; x < size; ++x) {
        const double wave = std::sin(0.21 * (x + 1) * (c + 1) + 0.13 * y * (seed % 7 + 1));
        const double ripple = std::cos(double((x * 31 + y * 17 + c * 7 + seed) % 23));
        pixels[i++] = static_cast<float>(0.8 * wave + 0.2 * ripple);
      }
    }
  }
  return pixels;
}

engine::modelgen::RandomModelSpec qwen_vision_spec(const char* format, const char* text_prefix,
                                                   std::uint64_t seed) {
  engine::modelgen::RandomModelSpec spec = engine::modelgen::default_spec("qwen2_5_vl");
  spec.format = engine::modelgen::parse_format(format);
  spec.seed = seed;
  spec.layers = 2;
  spec.text_prefix = text_prefix;
  spec.vision.hidden = 64;
  spec.vision.intermediate = 96;
  spec.vision.heads = 4;
  spec.vision.layers = 2;
  spec.vision.patch_size = 14;
  spec.vision.merge_size = 2;
  spec.vision.temporal_patch_size = 2;
  spec.vision.window_size = 112;
  spec.vision.fullatt_blocks = {1};
  return spec;
}

std::vector<float> test_patches(std::int64_t rows, std::int64_t values, std::uint32_t seed) {
  std::vector<float> patches(std::size_t(rows * values));
  std::size_t i = 0;
  for (std::int64_t r = 0; r < rows; ++r) {
    for (std::int64_t v = 0; v < values; ++v) {
      const double wave = std::sin(0.37 * double(r + 1) + 0.011 * double(v) * (seed % 5 + 1));
      const double ripple = std::cos(double((r * 29 + v * 13 + seed) % 19));
      patches[i++] = static_cast<float>(0.8 * wave + 0.2 * ripple);
    }
  }
  return patches;
}

namespace {

// Writes `input` beside the model, runs reference_vision.py with `extra`
// arguments after its three, and reads its float64 output.
std::vector<double> run_reference(const std::filesystem::path& model,
                                  const std::vector<float>& input_values,
                                  const QStringList& extra) {
  const std::filesystem::path input = model / "pixels.f32";
  const std::filesystem::path output = model / "reference.f64";
  {
    std::ofstream file(input, std::ios::binary);
    file.write(reinterpret_cast<const char*>(input_values.data()),
               std::streamsize(input_values.size() * sizeof(float)));
  }
  QProcess python;
  python.start(
      QStringLiteral(QUIRE_PYTHON),
      QStringList{QStringLiteral(QUIRE_TEST_TOOLS_DIR "/reference_vision.py"),
                  QString::fromStdString(model.string()), QString::fromStdString(input.string()),
                  QString::fromStdString(output.string())} +
          extra);
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

}  // namespace

std::vector<double> reference_embeddings(const std::filesystem::path& model,
                                         const std::vector<float>& pixels) {
  return run_reference(model, pixels, {});
}

std::vector<double> reference_qwen_embeddings(const std::filesystem::path& model,
                                              const std::vector<float>& patches,
                                              std::array<int, 3> grid_thw) {
  return run_reference(
      model, patches,
      {QString::number(grid_thw[0]), QString::number(grid_thw[1]), QString::number(grid_thw[2])});
}

void set_config(const std::filesystem::path& model, const char* object, const char* key,
                const char* value) {
  const std::filesystem::path path = model / "config.json";
  nlohmann::json config;
  {
    std::ifstream file(path);
    file >> config;
  }
  nlohmann::json& target = std::strlen(object) == 0 ? config : config[object];
  target[key] = nlohmann::json::parse(value);
  std::ofstream(path) << config.dump(2);
}

}  // namespace quire::test
