// Logits after prompts that hold images against the independent reference:
// tests/tools/reference_forward.py (PyTorch, float64, following transformers'
// Gemma3ForConditionalGeneration) computed the gemma3-vision-* fixtures of
// tests/data/reference (tests/tools/make_vision_fixtures.sh) from models made
// by `quire-cli make-model` with the same arguments and pixel tensors given
// by a formula (vision_fixture.h). Here the engine runs the same prompt: its
// own tower's rows at the image positions, the positions of each image
// attending both ways. The reference's causal control (no blocks) is matched
// by the engine run without them, and differs from the real logits by far
// more than the tolerance, so the blocks are what the comparison checks.
// Then the generator, whose prefill chunks must keep each image whole,
// continues the prompt greedily as the reference did.
//
// Tolerance: as the text fixtures (test_golden_logits.cpp), 2e-4 of the
// largest reference logit of the row plus 1e-5 (5e-4 for EXL2 weights).

#include <QCryptographicHash>
#include <QFile>
#include <QProcess>
#include <QTemporaryDir>
#include <QTest>
#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>

#include "quire/engine/generator/generator.h"
#include "quire/engine/vision/gemma3_vision_encoder.h"
#include "quire/kernels/cpu/cpu_backend.h"
#include "test_main.h"
#include "vision_fixture.h"

using namespace quire;
using namespace quire::engine;

namespace {

std::filesystem::path fixtures_dir() {
  return std::filesystem::path(QUIRE_TEST_DATA_DIR) / "reference";
}

// The model a fixture was computed from, made again; empty after a failure
// (reported with QFAIL's message in `why`).
std::string make_model(const test::VisionFixture& fixture, const QString& root, QString& why) {
  const QString dir = root + u'/' + QString::fromStdString(fixture.name);
  QStringList arguments{QStringLiteral("make-model"), dir};
  for (const std::string& argument : fixture.make_model)
    arguments << QString::fromStdString(argument);
  QProcess process;
  process.start(QStringLiteral(QUIRE_CLI_PATH), arguments);
  process.waitForFinished(300000);
  if (process.exitCode() != 0) {
    why = QString::fromUtf8(process.readAllStandardError());
    return {};
  }
  for (const auto& [name, digest] : fixture.sha256) {
    QFile file(dir + u'/' + QString::fromStdString(name));
    if (!file.open(QIODevice::ReadOnly) ||
        QCryptographicHash::hash(file.readAll(), QCryptographicHash::Sha256)
                .toHex()
                .toStdString() != digest) {
      why = "make-model now writes a different " + QString::fromStdString(name) +
            "; regenerate the fixtures with tests/tools/make_vision_fixtures.sh";
      return {};
    }
  }
  return dir.toStdString();
}

struct ImageInputs {
  std::vector<cache::TokenId> tokens;  // image runs as content-keyed ids
  std::vector<std::vector<float>> rows;
  std::vector<ForwardPass::EmbeddedRows> given;
  std::vector<cache::TokenRange> blocks;
  std::vector<std::shared_ptr<PromptImage>> images;
};

ImageInputs image_inputs(const test::VisionFixture& fixture, const std::filesystem::path& model,
                         kernels::ThreadPool& pool) {
  const engine::vision::Gemma3VisionEncoder encoder =
      engine::vision::Gemma3VisionEncoder::load(model);
  ImageInputs inputs;
  inputs.tokens.assign(fixture.tokens.begin(), fixture.tokens.end());
  for (const test::VisionFixtureImage& image : fixture.images) {
    inputs.rows.push_back(
        encoder
            .embed(pool, engine::vision::PixelTensor{image.pixels, image.shape[0], image.shape[1],
                                                     image.shape[2]})
            .values);
    auto prompt_image = std::make_shared<PromptImage>();
    std::vector<std::uint8_t> bytes(image.pixels.size() * sizeof(float));
    std::memcpy(bytes.data(), image.pixels.data(), bytes.size());
    prompt_image->digest = image_digest(bytes);
    prompt_image->positions = static_cast<int>(image.count);
    prompt_image->both_ways = true;
    prompt_image->embed = [rows = inputs.rows.back()] { return rows; };
    const std::vector<cache::TokenId> ids =
        image_position_ids(prompt_image->digest, prompt_image->positions);
    std::copy(ids.begin(), ids.end(), inputs.tokens.begin() + std::ptrdiff_t(image.first));
    inputs.images.push_back(std::move(prompt_image));
    const auto first = static_cast<std::int32_t>(image.first);
    const auto count = static_cast<std::int32_t>(image.count);
    inputs.blocks.push_back({first, first + count});
  }
  for (std::size_t i = 0; i < fixture.images.size(); ++i) {
    inputs.given.push_back({static_cast<std::int32_t>(fixture.images[i].first),
                            static_cast<std::int32_t>(fixture.images[i].count),
                            inputs.rows[i].data()});
  }
  return inputs;
}

RuntimeOptions options(int step_tokens, int page_size) {
  RuntimeOptions options;
  options.cache_tokens = 1024;
  options.page_size = page_size;
  options.max_chunk_tokens = step_tokens;
  options.reserve_bytes = 0;
  return options;
}

// The largest difference from `want` relative to its largest value, and
// whether every value lies within the bound.
bool within(std::span<const float> got, const std::vector<double>& want, double relative,
            double& worst) {
  double scale = 0;
  for (const double value : want)
    scale = std::max(scale, std::fabs(value));
  bool ok = got.size() == want.size();
  for (std::size_t v = 0; ok && v < want.size(); ++v) {
    const double difference = std::fabs(double(got[v]) - want[v]);
    worst = std::max(worst, difference / scale);
    ok = difference <= relative * scale + 1e-5;
  }
  return ok;
}

}  // namespace

class ImageGoldenLogitsTest : public QObject {
  Q_OBJECT

  QTemporaryDir root_;

  // One fixture, with QVERIFY's early returns (called from a test function).
  void check(const test::VisionFixture& fixture) {
    QString why;
    const std::string model = make_model(fixture, root_.path(), why);
    QVERIFY2(!model.empty(), qPrintable(why));
    const auto description =
        std::make_shared<const ModelDescription>(ModelDescription::open(model));
    const bool exl2 = std::any_of(fixture.make_model.begin(), fixture.make_model.end(),
                                  [](const std::string& a) { return a.starts_with("exl2"); });
    const double relative = exl2 ? 5e-4 : 2e-4;
    kernels::ThreadPool pool(2);
    const ImageInputs inputs = image_inputs(fixture, model, pool);

    const auto step = static_cast<int>(fixture.tokens.size());
    std::vector<cache::PageIndex> pages;
    for (int p = 0; p * 16 < step; ++p)
      pages.push_back(p);
    for (const bool both_ways : {true, false}) {
      kernels::CpuBackend backend;
      ModelRuntime runtime(description, backend, options(step, 16));
      ForwardPass::Sequence sequence{pages, inputs.tokens, 0, true};
      // Layers with a sliding window keep their pages in the window pool
      // (a model with both kinds of layer): there the same page numbers.
      sequence.window_pages = pages;
      sequence.embedded = inputs.given;
      if (both_ways) sequence.both_ways = inputs.blocks;
      const ForwardPass::Result result = runtime.forward().run(std::span(&sequence, 1));
      const auto& expected = both_ways ? fixture.logits : fixture.logits_causal;
      double worst = 0;
      for (std::size_t i = 0; i < fixture.positions.size(); ++i) {
        QVERIFY2(within(result.row(0, int(fixture.positions[i])), expected[i], relative, worst),
                 qPrintable(QString("%1 attention, position %2: off by %3 of the largest logit")
                                .arg(both_ways ? "both-ways" : "causal")
                                .arg(fixture.positions[i])
                                .arg(worst)));
      }
      qInfo("%s: largest difference %.2e of the largest logit", both_ways ? "both ways" : "causal",
            worst);
    }
    // The control: the blocks move the reference's logits far beyond the bound.
    double apart = 0;
    for (std::size_t i = 0; i < fixture.positions.size(); ++i) {
      std::vector<float> causal(fixture.logits_causal[i].begin(), fixture.logits_causal[i].end());
      within(causal, fixture.logits[i], relative, apart);
    }
    QVERIFY2(apart > 20 * relative, qPrintable(QString("the blocks move logits by %1").arg(apart)));

    // The generator, in steps of 12 tokens and pages of 8, where chunks would
    // end inside an image (the second image of the two-image prompt, at
    // 22..25, spans a page boundary), continues greedily as the reference did.
    if (fixture.greedy.empty()) return;
    kernels::CpuBackend backend;
    ModelRuntime runtime(description, backend, options(12, 8));
    const Tokenizer tokenizer = Tokenizer::load(model);
    GeneratorConfig one_at_a_time;
    one_at_a_time.max_batch_size = 1;  // steps of 12 tokens hold one job
    Generator generator(runtime, tokenizer, one_at_a_time);
    JobRequest request;
    request.prompt = inputs.tokens;
    for (std::size_t i = 0; i < inputs.images.size(); ++i) {
      request.images.push_back(
          {static_cast<std::int32_t>(fixture.images[i].first), inputs.images[i]});
    }
    request.sampling = SamplingSettings::greedy_settings();
    request.max_new_tokens = static_cast<int>(fixture.greedy.size());
    request.stop_at_eos = false;
    JobResult result;
    request.on_done = [&](const JobResult& done) { result = done; };
    generator.submit(std::move(request));
    generator.run_until_idle();
    QVERIFY2(result.error.empty(), result.error.c_str());
    QCOMPARE(result.tokens,
             std::vector<cache::TokenId>(fixture.greedy.begin(), fixture.greedy.end()));
  }

 private slots:
  void matchesTheReference_data() {
    QTest::addColumn<QString>("path");
    int cases = 0;
    for (const auto& entry : std::filesystem::directory_iterator(fixtures_dir())) {
      const std::string name = entry.path().filename().string();
      if (!name.starts_with("gemma3-vision-") || !name.ends_with(".json")) continue;
      QTest::newRow(name.c_str()) << QString::fromStdString(entry.path().string());
      ++cases;
    }
    QVERIFY(cases >= 2);
  }

  void matchesTheReference() {
    QFETCH(QString, path);
    const test::VisionFixture fixture = test::read_vision_fixture(path.toStdString());
    try {
      check(fixture);
    } catch (const std::exception& error) {
      QFAIL(error.what());
    }
  }
};

QUIRE_TEST(ImageGoldenLogitsTest)
#include "test_image_golden_logits.moc"
