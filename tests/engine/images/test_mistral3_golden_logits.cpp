// Logits after Mistral Small 3 prompts that hold images against the
// independent reference: tests/tools/mistral3_fixture_case.py (PyTorch,
// float64, following transformers' PixtralProcessor and Mistral3Model)
// computed the mistral3-vision-* fixtures of tests/data/reference
// (tests/tools/make_vision_fixtures.sh) from models made by
// `quire-cli make-model` with the same arguments and pixel tensors given by
// a formula (vision_fixture.h). Here the engine runs the same prompt with
// its own Pixtral tower's rows, one run of [IMG] positions per row of the
// merged patch grid, [IMG_BREAK] and [IMG_END] read from the table, and
// causal attention. The reference's control without images is matched by
// the engine run without them and differs from the real logits by far more
// than the tolerance; rows given in the wrong order miss the reference too.
// Then the generator, whose prefill chunks end inside the images' rows,
// continues greedily as the reference did.
//
// Tolerance: as the text fixtures (test_golden_logits.cpp), 2e-4 of the
// largest reference logit of the row plus 1e-5.

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
#include "quire/engine/vision/pixtral_vision_encoder.h"
#include "quire/kernels/cpu/cpu_backend.h"
#include "test_main.h"
#include "vision_fixture.h"

using namespace quire;
using namespace quire::engine;

namespace mistral3_golden {

struct Run {
  std::int32_t first = 0;
  std::int32_t count = 0;
};

struct Image {
  int height = 0;
  int width = 0;
  std::vector<Run> runs;  // one per row of [IMG]
  std::vector<float> pixels;
};

struct Fixture {
  std::string name;
  std::vector<std::string> make_model;
  std::map<std::string, std::string> sha256;
  std::vector<cache::TokenId> tokens;
  std::int32_t image_token = 0;
  std::vector<Image> images;
  std::vector<std::size_t> positions;
  std::vector<std::vector<double>> logits;
  std::vector<std::vector<double>> logits_text;
  std::vector<cache::TokenId> greedy;
};

Fixture read_fixture(const std::filesystem::path& path) {
  std::ifstream file(path);
  const nlohmann::json json = nlohmann::json::parse(file);
  Fixture fixture;
  fixture.name = json.at("name").get<std::string>();
  fixture.make_model = json.at("make_model").get<std::vector<std::string>>();
  fixture.sha256 = json.at("sha256").get<std::map<std::string, std::string>>();
  fixture.tokens = json.at("tokens").get<std::vector<cache::TokenId>>();
  fixture.image_token = json.at("image_token").get<std::int32_t>();
  for (const auto& entry : json.at("images")) {
    Image image;
    image.height = entry.at("height").get<int>();
    image.width = entry.at("width").get<int>();
    for (const auto& run : entry.at("runs"))
      image.runs.push_back({run.at(0).get<std::int32_t>(), run.at(1).get<std::int32_t>()});
    const auto& pixels = entry.at("pixels");
    if (pixels.at("formula").get<std::string>() != test::kVisionFixturePixelFormula)
      throw std::runtime_error(path.string() + ": another pixel formula");
    image.pixels = test::vision_fixture_pixels(pixels.at("shape").get<std::array<int, 3>>(),
                                               pixels.at("phase").get<std::int64_t>());
    // Every run is [IMG] tokens, followed by [IMG_BREAK] or [IMG_END].
    for (const Run& run : image.runs) {
      for (std::int32_t p = run.first; p < run.first + run.count; ++p) {
        if (fixture.tokens.at(std::size_t(p)) != fixture.image_token)
          throw std::runtime_error(path.string() + ": a run holds a token other than [IMG]");
      }
      if (fixture.tokens.at(std::size_t(run.first + run.count)) == fixture.image_token)
        throw std::runtime_error(path.string() + ": a run ends before its [IMG] tokens do");
    }
    fixture.images.push_back(std::move(image));
  }
  fixture.positions = json.at("positions").get<std::vector<std::size_t>>();
  fixture.logits = json.at("logits").get<std::vector<std::vector<double>>>();
  fixture.logits_text = json.at("logits_text").get<std::vector<std::vector<double>>>();
  fixture.greedy = json.at("greedy").get<std::vector<cache::TokenId>>();
  if (fixture.logits.size() != fixture.positions.size() ||
      fixture.logits_text.size() != fixture.positions.size())
    throw std::runtime_error(path.string() + ": one row of logits per position");
  return fixture;
}

// The model a fixture was computed from, made again; empty after a failure
// (reported in `why`).
std::string make_model(const Fixture& fixture, const QString& root, QString& why) {
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

// The prompt as the engine takes it: each row of [IMG] a run of
// content-keyed ids with its slice of the tower's rows.
struct Inputs {
  std::vector<cache::TokenId> tokens;
  std::vector<std::vector<float>> rows;  // per image, [tokens, hidden]
  std::vector<ForwardPass::EmbeddedRows> given;
  std::vector<PromptImagePlacement> placements;
};

Inputs inputs_of(const Fixture& fixture, const std::filesystem::path& model,
                 kernels::ThreadPool& pool, std::int64_t hidden, bool reversed_rows) {
  const quire::engine::vision::PixtralVisionEncoder encoder =
      quire::engine::vision::PixtralVisionEncoder::load(model);
  Inputs inputs;
  inputs.tokens = fixture.tokens;
  for (std::size_t i = 0; i < fixture.images.size(); ++i) {
    const Image& image = fixture.images[i];
    inputs.rows.push_back(
        encoder
            .embed(pool,
                   quire::engine::vision::PixelTensor{image.pixels, 3, image.height, image.width})
            .values);
  }
  for (std::size_t i = 0; i < fixture.images.size(); ++i) {
    const Image& image = fixture.images[i];
    const std::vector<float>& rows = inputs.rows[i];
    std::int64_t offset = 0;
    for (std::size_t r = 0; r < image.runs.size(); ++r) {
      const Run& run = image.runs[r];
      const Run& source = image.runs[reversed_rows ? image.runs.size() - 1 - r : r];
      std::int64_t source_offset = 0;
      for (const Run& before : image.runs) {
        if (&before == &source) break;
        source_offset += before.count;
      }
      const float* values = rows.data() + source_offset * hidden;
      inputs.given.push_back({run.first, run.count, values});
      auto row = std::make_shared<PromptImage>();
      std::vector<std::uint8_t> bytes(image.pixels.size() * sizeof(float) + sizeof(r));
      std::memcpy(bytes.data(), image.pixels.data(), image.pixels.size() * sizeof(float));
      std::memcpy(bytes.data() + image.pixels.size() * sizeof(float), &r, sizeof(r));
      row->digest = image_digest(bytes);
      row->positions = run.count;
      row->embed = [values, count = run.count, hidden] {
        return std::vector<float>(values, values + std::int64_t(count) * hidden);
      };
      const std::vector<cache::TokenId> ids = image_position_ids(row->digest, run.count);
      std::copy(ids.begin(), ids.end(), inputs.tokens.begin() + run.first);
      inputs.placements.push_back({run.first, row});
      offset += run.count;
    }
    if (offset * hidden != static_cast<std::int64_t>(rows.size())) {
      throw std::runtime_error("the tower gave " + std::to_string(rows.size() / hidden) +
                               " rows for " + std::to_string(offset) + " [IMG] positions");
    }
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

}  // namespace mistral3_golden

class Mistral3GoldenLogitsTest : public QObject {
  Q_OBJECT

  QTemporaryDir root_;

  // Logits of the whole prompt in one step, with or without image rows.
  static ForwardPass::Result run_prompt(const std::shared_ptr<const ModelDescription>& description,
                                        std::span<const cache::TokenId> tokens,
                                        std::span<const ForwardPass::EmbeddedRows> given,
                                        std::vector<cache::PageIndex>& pages) {
    kernels::CpuBackend backend;
    const auto step = static_cast<int>(tokens.size());
    ModelRuntime runtime(description, backend, mistral3_golden::options(step, 16));
    ForwardPass::Sequence sequence{pages, tokens, 0, true};
    sequence.window_pages = pages;
    sequence.embedded = given;
    return runtime.forward().run(std::span(&sequence, 1));
  }

  void check(const mistral3_golden::Fixture& fixture) {
    QString why;
    const std::string model = mistral3_golden::make_model(fixture, root_.path(), why);
    QVERIFY2(!model.empty(), qPrintable(why));
    const auto description =
        std::make_shared<const ModelDescription>(ModelDescription::open(model));
    QCOMPARE(std::string(description->architecture->name),
             std::string("Mistral3ForConditionalGeneration"));
    const double relative = 2e-4;
    const std::int64_t hidden = description->config.hidden_size;
    kernels::ThreadPool pool(2);
    const mistral3_golden::Inputs inputs =
        mistral3_golden::inputs_of(fixture, model, pool, hidden, false);
    std::vector<cache::PageIndex> pages;
    for (int p = 0; p * 16 < int(fixture.tokens.size()); ++p)
      pages.push_back(p);

    // With the images' rows, and with none (every id read from the table).
    for (const bool images : {true, false}) {
      const ForwardPass::Result result =
          images ? run_prompt(description, inputs.tokens, inputs.given, pages)
                 : run_prompt(description, fixture.tokens, {}, pages);
      const auto& expected = images ? fixture.logits : fixture.logits_text;
      double worst = 0;
      for (std::size_t i = 0; i < fixture.positions.size(); ++i) {
        QVERIFY2(mistral3_golden::within(result.row(0, int(fixture.positions[i])), expected[i],
                                         relative, worst),
                 qPrintable(QString("%1, position %2: off by %3 of the largest logit")
                                .arg(images ? "with images" : "without images")
                                .arg(fixture.positions[i])
                                .arg(worst)));
      }
      qInfo("%s: largest difference %.2e of the largest logit", images ? "with images" : "without",
            worst);
    }
    // The controls: the images move the reference's logits far beyond the
    // bound, and so do their rows given in the wrong order.
    double apart = 0;
    for (std::size_t i = 0; i < fixture.positions.size(); ++i) {
      std::vector<float> text(fixture.logits_text[i].begin(), fixture.logits_text[i].end());
      mistral3_golden::within(text, fixture.logits[i], relative, apart);
    }
    QVERIFY2(apart > 20 * relative, qPrintable(QString("the images move logits by %1").arg(apart)));
    const mistral3_golden::Inputs reversed =
        mistral3_golden::inputs_of(fixture, model, pool, hidden, true);
    const ForwardPass::Result wrong =
        run_prompt(description, reversed.tokens, reversed.given, pages);
    double misplaced = 0;
    for (std::size_t i = 0; i < fixture.positions.size(); ++i)
      mistral3_golden::within(wrong.row(0, int(fixture.positions[i])), fixture.logits[i], relative,
                              misplaced);
    QVERIFY2(misplaced > 20 * relative,
             qPrintable(QString("rows in reverse order move logits by only %1").arg(misplaced)));

    // The generator, in steps of 5 tokens over pages of 8 (chunks end inside
    // the images' rows, which causal attention allows), continues greedily.
    kernels::CpuBackend backend;
    ModelRuntime runtime(description, backend, mistral3_golden::options(5, 8));
    const Tokenizer tokenizer = Tokenizer::load(model);
    GeneratorConfig one_at_a_time;
    one_at_a_time.max_batch_size = 1;
    Generator generator(runtime, tokenizer, one_at_a_time);
    JobRequest request;
    request.prompt = inputs.tokens;
    request.images = inputs.placements;
    request.sampling = SamplingSettings::greedy_settings();
    request.max_new_tokens = static_cast<int>(fixture.greedy.size());
    request.stop_at_eos = false;
    JobResult result;
    request.on_done = [&](const JobResult& done) { result = done; };
    generator.submit(std::move(request));
    generator.run_until_idle();
    QVERIFY2(result.error.empty(), result.error.c_str());
    QCOMPARE(result.tokens, fixture.greedy);
  }

 private slots:
  void matchesTheReference_data() {
    QTest::addColumn<QString>("path");
    int cases = 0;
    const std::filesystem::path dir = std::filesystem::path(QUIRE_TEST_DATA_DIR) / "reference";
    for (const auto& entry : std::filesystem::directory_iterator(dir)) {
      const std::string name = entry.path().filename().string();
      if (!name.starts_with("mistral3-vision-") || !name.ends_with(".json")) continue;
      QTest::newRow(name.c_str()) << QString::fromStdString(entry.path().string());
      ++cases;
    }
    QVERIFY(cases >= 2);
  }

  void matchesTheReference() {
    QFETCH(QString, path);
    try {
      check(mistral3_golden::read_fixture(path.toStdString()));
    } catch (const std::exception& error) {
      QFAIL(error.what());
    }
  }
};

QUIRE_TEST(Mistral3GoldenLogitsTest)
#include "test_mistral3_golden_logits.moc"
