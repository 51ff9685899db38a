// Qwen2.5-VL's logits after a prompt that holds an image against the
// independent reference: tests/tools/make_qwen_vision_fixture.py (PyTorch and
// numpy in float64, following transformers' Qwen2_5_VLModel: the tower and
// patch merger's rows over the image tokens, get_rope_index's positions,
// M-RoPE, causal attention) computed tests/data/reference/qwen25vl-vision-*.json
// from a model made by `quire-cli make-model` with the same arguments. Here
// the engine runs its own tower over the same patches and the prompt with
// the reference's positions, then decode steps whose tokens turn by slot +
// rope_delta; and the generator, given only the image's grid, continues the
// prompt greedily as the reference did (the reference's control, generated
// tokens turning by their slots, chooses other tokens, so the generator's
// delta is what the comparison sees).
//
// Tolerance: as the other golden fixtures, 2e-4 of the largest reference
// logit of the row plus 1e-5.

#include <QCryptographicHash>
#include <QFile>
#include <QProcess>
#include <QTemporaryDir>
#include <QTest>
#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "quire/engine/generator/generator.h"
#include "quire/engine/model/mrope_positions.h"
#include "quire/engine/vision/qwen25_vision_encoder.h"
#include "quire/kernels/cpu/cpu_backend.h"
#include "test_main.h"

using namespace quire;
using namespace quire::engine;

namespace {

constexpr double kQwenRelative = 2e-4;

struct QwenFixture {
  nlohmann::json json;
  std::vector<cache::TokenId> tokens;
  std::int32_t first = 0;
  std::int32_t count = 0;
  std::array<int, 3> grid{};
  std::vector<float> patches;
  std::vector<std::int32_t> rope_ids;  // [tokens][3]
  std::int32_t delta = 0;
};

QwenFixture read_qwen_fixture(const std::filesystem::path& path) {
  std::ifstream in(path);
  QwenFixture fixture;
  fixture.json = nlohmann::json::parse(in);
  const nlohmann::json& j = fixture.json;
  fixture.tokens = j.at("tokens").get<std::vector<cache::TokenId>>();
  const nlohmann::json& image = j.at("images").at(0);
  fixture.first = image.at("first").get<std::int32_t>();
  fixture.count = image.at("count").get<std::int32_t>();
  fixture.grid = image.at("grid_thw").get<std::array<int, 3>>();
  const auto shape = image.at("pixels").at("shape").get<std::array<std::int64_t, 2>>();
  const auto phase = image.at("pixels").at("phase").get<std::int64_t>();
  // vision_fixture_pixels.py's formula over the flat index: exact in float32.
  for (std::int64_t i = 0; i < shape[0] * shape[1]; ++i) {
    const std::int64_t numerator = (i * 40503 + phase * 7919 + 12345) % 65536;
    fixture.patches.push_back(static_cast<float>(double(numerator) / 32768.0 - 1.0));
  }
  const auto ids = j.at("position_ids").get<std::vector<std::vector<std::int32_t>>>();
  for (std::size_t p = 0; p < fixture.tokens.size(); ++p) {
    for (int axis = 0; axis < 3; ++axis)
      fixture.rope_ids.push_back(ids.at(std::size_t(axis)).at(p));
  }
  fixture.delta = j.at("rope_delta").get<std::int32_t>();
  return fixture;
}

std::string make_qwen_model(const QwenFixture& fixture, const QString& root, QString& why) {
  const QString dir = root + u'/' + QString::fromStdString(fixture.json.at("name"));
  QStringList arguments{QStringLiteral("make-model"), dir};
  for (const auto& argument : fixture.json.at("make_model"))
    arguments << QString::fromStdString(argument.get<std::string>());
  QProcess process;
  process.start(QStringLiteral(QUIRE_CLI_PATH), arguments);
  process.waitForFinished(300000);
  if (process.exitCode() != 0) {
    why = QString::fromUtf8(process.readAllStandardError());
    return {};
  }
  for (const auto& [name, digest] : fixture.json.at("sha256").items()) {
    QFile file(dir + u'/' + QString::fromStdString(name));
    if (!file.open(QIODevice::ReadOnly) ||
        QCryptographicHash::hash(file.readAll(), QCryptographicHash::Sha256)
                .toHex()
                .toStdString() != digest.get<std::string>()) {
      why = "make-model now writes a different " + QString::fromStdString(name) +
            "; regenerate the fixture with tests/tools/make_qwen_vision_fixture.py";
      return {};
    }
  }
  return dir.toStdString();
}

// Whether `got` lies within the bound of `want`; `worst` takes the largest
// difference relative to want's largest value.
bool close_to(std::span<const float> got, const nlohmann::json& want, double& worst) {
  const auto expected = want.get<std::vector<double>>();
  double scale = 0;
  for (const double value : expected)
    scale = std::max(scale, std::fabs(value));
  if (got.size() != expected.size()) return false;
  bool ok = true;
  for (std::size_t v = 0; v < expected.size(); ++v) {
    const double difference = std::fabs(double(got[v]) - expected[v]);
    worst = std::max(worst, difference / scale);
    ok = ok && difference <= kQwenRelative * scale + 1e-5;
  }
  return ok;
}

RuntimeOptions qwen_options(int step_tokens, int page_size) {
  RuntimeOptions options;
  options.cache_tokens = 1024;
  options.page_size = page_size;
  options.max_chunk_tokens = step_tokens;
  options.reserve_bytes = 0;
  return options;
}

}  // namespace

class QwenImageGoldenTest : public QObject {
  Q_OBJECT

  QTemporaryDir root_;

  void check(const QwenFixture& fixture) {
    QString why;
    const std::string model = make_qwen_model(fixture, root_.path(), why);
    QVERIFY2(!model.empty(), qPrintable(why));
    const auto description =
        std::make_shared<const ModelDescription>(ModelDescription::open(model));
    kernels::ThreadPool pool(2);
    const std::vector<float> rows = engine::vision::Qwen25VisionEncoder::load(model)
                                        .embed(pool, fixture.patches, fixture.grid)
                                        .values;
    auto image = std::make_shared<PromptImage>();
    std::vector<std::uint8_t> bytes(fixture.patches.size() * sizeof(float));
    std::memcpy(bytes.data(), fixture.patches.data(), bytes.size());
    image->digest = image_digest(bytes);
    image->positions = fixture.count;
    image->grid_t = fixture.grid[0];
    image->grid_h = fixture.grid[1] / 2;
    image->grid_w = fixture.grid[2] / 2;
    image->embed = [rows] { return rows; };
    std::vector<cache::TokenId> prompt = fixture.tokens;
    const std::vector<cache::TokenId> ids = image_position_ids(image->digest, fixture.count);
    std::copy(ids.begin(), ids.end(), prompt.begin() + fixture.first);

    // The engine's own get_rope_index agrees with the reference's.
    const std::vector<std::int32_t> layout(fixture.tokens.begin(), fixture.tokens.end());
    const MropeImageGrid merged{image->grid_t, image->grid_h, image->grid_w};
    const MropePositions own = mrope_positions(
        layout, fixture.json.at("image_token").get<std::int32_t>(), std::span(&merged, 1));
    QCOMPARE(own.ids, fixture.rope_ids);
    QCOMPARE(own.delta, fixture.delta);

    // The prompt in one step, then a decode step per greedy token but the
    // last, each turning by its slot plus rope_delta.
    const auto greedy = fixture.json.at("greedy").get<std::vector<cache::TokenId>>();
    const auto length = static_cast<std::int32_t>(prompt.size());
    std::vector<cache::PageIndex> pages;
    for (int p = 0; p * 16 < length + int(greedy.size()); ++p)
      pages.push_back(p);
    {
      kernels::CpuBackend backend;
      ModelRuntime runtime(description, backend, qwen_options(length, 16));
      const ForwardPass::EmbeddedRows given{fixture.first, fixture.count, rows.data()};
      ForwardPass::Sequence sequence{pages, prompt, 0, true};
      sequence.embedded = std::span(&given, 1);
      sequence.rope_positions = fixture.rope_ids;
      const ForwardPass::Result result = runtime.forward().run(std::span(&sequence, 1));
      const auto positions = fixture.json.at("positions").get<std::vector<int>>();
      double worst = 0;
      for (std::size_t i = 0; i < positions.size(); ++i) {
        QVERIFY2(close_to(result.row(0, positions[i]), fixture.json.at("logits").at(i), worst),
                 qPrintable(QString("prompt position %1: off by %2 of the largest logit")
                                .arg(positions[i])
                                .arg(worst)));
      }
      qInfo("prompt: largest difference %.2e of the largest logit", worst);
      const nlohmann::json& decode = fixture.json.at("greedy_logits");
      QCOMPARE(decode.size() + 1, greedy.size());
      worst = 0;
      for (std::size_t k = 0; k < decode.size(); ++k) {
        const std::int32_t slot = length + std::int32_t(k);
        const std::int32_t id = slot + fixture.delta;
        const std::vector<std::int32_t> turns{id, id, id};
        ForwardPass::Sequence step{pages, std::span(&greedy[k], 1), slot, true};
        step.rope_positions = turns;
        const ForwardPass::Result next = runtime.forward().run(std::span(&step, 1));
        QVERIFY2(close_to(next.row(0, 0), decode.at(k), worst),
                 qPrintable(
                     QString("decode step %1: off by %2 of the largest logit").arg(k).arg(worst)));
      }
      qInfo("decode: largest difference %.2e of the largest logit", worst);
    }

    // The generator, in steps of 12 tokens over pages of 8, with the
    // image's grid alone: the prompt's positions and the reply's delta are
    // its own.
    QVERIFY(fixture.json.at("greedy_slots").get<std::vector<cache::TokenId>>() != greedy);
    kernels::CpuBackend backend;
    ModelRuntime runtime(description, backend, qwen_options(12, 8));
    const Tokenizer tokenizer = Tokenizer::load(model);
    GeneratorConfig one_at_a_time;
    one_at_a_time.max_batch_size = 1;
    Generator generator(runtime, tokenizer, one_at_a_time);
    JobRequest request;
    request.prompt = prompt;
    request.images.push_back({fixture.first, image});
    request.sampling = SamplingSettings::greedy_settings();
    request.max_new_tokens = static_cast<int>(greedy.size());
    request.stop_at_eos = false;
    JobResult result;
    request.on_done = [&](const JobResult& done) { result = done; };
    generator.submit(std::move(request));
    generator.run_until_idle();
    QVERIFY2(result.error.empty(), result.error.c_str());
    QCOMPARE(result.tokens, greedy);
  }

 private slots:
  void matchesTheReference() {
    const std::filesystem::path path =
        std::filesystem::path(QUIRE_TEST_DATA_DIR) / "reference" / "qwen25vl-vision-fp16.json";
    try {
      check(read_qwen_fixture(path));
    } catch (const std::exception& error) {
      QFAIL(error.what());
    }
  }
};

QUIRE_TEST(QwenImageGoldenTest)
#include "test_qwen25_golden.moc"
