// The values of generated models: reproducible to the byte, different per
// seed, drawn from the documented distributions, and the same underlying
// weights in every format.

#include <QCryptographicHash>
#include <QTemporaryDir>
#include <QTest>
#include <cmath>

#include "modelgen_test_support.h"
#include "quire/engine/formats/exl2_layout.h"
#include "quire/engine/io/model_tensors.h"
#include "quire/engine/modelgen/random_model.h"
#include "quire/engine/modelgen/random_stream.h"
#include "quire/kernels/cpu/linear.h"
#include "test_main.h"

using namespace quire::engine;
using modelgen::RandomModelSpec;
namespace fs = std::filesystem;

namespace {

// SHA-256 of the default spec's model.safetensors.
constexpr const char* kDefaultModelSha256 =
    "4bd3c450c226169c0a0fdb20d3f7859b18ddbbeece292a843d736148b3e9a92d";

RandomModelSpec spec_of(const std::string& architecture, const std::string& format) {
  RandomModelSpec spec;
  spec.architecture = architecture;
  spec.format = modelgen::parse_format(format);
  return spec;
}

}  // namespace

class RandomModelValuesTest : public QObject {
  Q_OBJECT

 private:
  QTemporaryDir root_;
  int next_ = 0;

  fs::path write(const RandomModelSpec& spec) {
    const fs::path dir = fs::path(root_.path().toStdString()) / ("m" + std::to_string(next_++));
    modelgen::write_random_model(spec, dir);
    return dir;
  }

 private slots:
  void initTestCase() { QVERIFY(root_.isValid()); }

  // Pinned against an independent transcription of splitmix64 and
  // xoshiro256**: a change here changes every generated model.
  void randomStreamIsTheSameEverywhere() {
    modelgen::RandomStream stream(1);
    QCOMPARE(stream.next(), 12966619160104079557ull);
    QCOMPARE(stream.next(), 9600361134598540522ull);
    QCOMPARE(stream.next(), 10590380919521690900ull);
    modelgen::RandomStream zero(0);
    QCOMPARE(zero.next(), 11091344671253066420ull);
    modelgen::RandomStream normal(1);
    const double expected[] = {-1.5452228371402943, -0.19951530557849143, -1.0136476397283942,
                               0.8244068374882674};
    for (const double value : expected)
      QVERIFY(std::abs(normal.normal() - value) < 1e-15);
    // Labelled streams are independent of each other and of the plain one.
    QVERIFY(modelgen::RandomStream(1, "a").next() != modelgen::RandomStream(1, "b").next());
    QVERIFY(modelgen::RandomStream(1, "a").next() != modelgen::RandomStream(1).next());
    QCOMPARE(modelgen::RandomStream(5, "x").next(), modelgen::RandomStream(5, "x").next());
  }

  void sameSpecGivesIdenticalFiles_data() {
    QTest::addColumn<QString>("architecture");
    QTest::addColumn<QString>("format");
    QTest::addColumn<int>("shards");
    QTest::newRow("llama fp16") << "llama"
                                << "fp16" << 1;
    QTest::newRow("mistral bf16, 2 shards") << "mistral"
                                            << "bf16" << 2;
    QTest::newRow("qwen2 exl2:4.0") << "qwen2"
                                    << "exl2:4.0" << 1;
    QTest::newRow("llama gptq, 3 shards") << "llama"
                                          << "gptq" << 3;
  }

  void sameSpecGivesIdenticalFiles() {
    QFETCH(QString, architecture);
    QFETCH(QString, format);
    QFETCH(int, shards);
    RandomModelSpec spec = spec_of(architecture.toStdString(), format.toStdString());
    spec.shards = shards;
    const auto first = quire::test::directory_contents(write(spec));
    const auto second = quire::test::directory_contents(write(spec));
    QCOMPARE(first.size(), std::size_t(5 + (shards > 1 ? shards : 0)));
    QVERIFY(first == second);
  }

  // Regression pin for the byte layout of the default model (FP16 values,
  // names, order, header): a change must be deliberate.
  void defaultModelIsPinned() {
    const fs::path dir = write(RandomModelSpec{});
    const QByteArray digest = QCryptographicHash::hash(
        quire::test::read_file(dir / "model.safetensors"), QCryptographicHash::Sha256);
    QCOMPARE(digest.toHex(), QByteArray(kDefaultModelSha256));
  }

  void differentSeedsGiveDifferentWeights() {
    RandomModelSpec spec = spec_of("qwen2", "fp16");
    spec.seed = 1;
    const fs::path first = write(spec);
    spec.seed = 2;
    const fs::path second = write(spec);
    QCOMPARE(quire::test::read_file(first / "config.json"),
             quire::test::read_file(second / "config.json"));
    const io::ModelTensors a = io::ModelTensors::open(first);
    const io::ModelTensors b = io::ModelTensors::open(second);
    for (const std::string_view name : a.names()) {
      const auto x = a.data(name);
      const auto y = b.data(name);
      QVERIFY2(!std::equal(x.begin(), x.end(), y.begin(), y.end()), std::string(name).c_str());
    }
  }

  // Moments over tens of thousands of draws; the bounds are several standard
  // errors wide.
  void valuesFollowTheDocumentedDistributions() {
    RandomModelSpec spec = spec_of("qwen2", "fp16");
    spec.hidden = 256;
    spec.heads = 8;
    spec.kv_heads = 4;
    spec.intermediate = 512;
    spec.vocab = 1024;
    spec.layers = 1;
    spec.tie_embeddings = false;
    const io::ModelTensors tensors = io::ModelTensors::open(write(spec));
    const auto check = [&](const std::string& name, double mean, double deviation,
                           double tolerance) {
      const quire::test::Moments m = quire::test::moments(quire::test::float_values(tensors, name));
      QVERIFY2(std::abs(m.mean - mean) < tolerance * deviation &&
                   std::abs(m.deviation / deviation - 1.0) < tolerance,
               qPrintable(QString("%1: mean %2, deviation %3")
                              .arg(QString::fromStdString(name))
                              .arg(m.mean)
                              .arg(m.deviation)));
    };
    check("model.embed_tokens.weight", 0.0, 1.0, 0.02);
    check("model.layers.0.self_attn.q_proj.weight", 0.0, 1.0 / 16.0, 0.02);
    check("model.layers.0.mlp.up_proj.weight", 0.0, 1.0 / 16.0, 0.02);
    check("model.layers.0.mlp.down_proj.weight", 0.0, 1.0 / std::sqrt(512.0), 0.02);
    check("lm_head.weight", 0.0, 1.0 / 16.0, 0.02);
    check("model.layers.0.input_layernorm.weight", 1.0, 0.1, 0.15);
    check("model.norm.weight", 1.0, 0.1, 0.15);
    check("model.layers.0.self_attn.q_proj.bias", 0.0, 0.1, 0.15);
    // Normal, not merely of the right variance: about 68.3% within one deviation.
    const std::vector<double> embeddings =
        quire::test::float_values(tensors, "model.embed_tokens.weight");
    const auto inside = std::count_if(embeddings.begin(), embeddings.end(),
                                      [](double v) { return std::abs(v) < 1.0; });
    QVERIFY(std::abs(double(inside) / double(embeddings.size()) - 0.6827) < 0.005);
  }

  // A tensor's values depend on the seed and its name only, so the formats of
  // one seed hold the same weights, each at its own precision.
  void formatsHoldTheSameWeights() {
    const RandomModelSpec fp16 = spec_of("llama", "fp16");
    const io::ModelTensors dense = io::ModelTensors::open(write(fp16));
    const io::ModelTensors bf16 = io::ModelTensors::open(write(spec_of("llama", "bf16")));
    const std::string key = "model.layers.1.mlp.down_proj";
    const std::vector<double> reference = quire::test::float_values(dense, key + ".weight");
    const std::vector<double> rounded = quire::test::float_values(bf16, key + ".weight");
    for (std::size_t i = 0; i < reference.size(); ++i)
      QVERIFY(std::abs(reference[i] - rounded[i]) <= std::abs(reference[i]) * 0x1p-8 + 1e-7);

    const io::ModelTensors exl2 = io::ModelTensors::open(write(spec_of("llama", "exl2:8.0")));
    const auto view = [&](const std::string& name) {
      const io::ModelTensors::Located located = exl2.get(name);
      return formats::TensorView{located.info->dtype, located.info->shape, exl2.data(name)};
    };
    const formats::Exl2Tensors parts{view(key + ".q_weight"), view(key + ".q_invperm"),
                                     view(key + ".q_scale"),  view(key + ".q_scale_max"),
                                     view(key + ".q_groups"), std::nullopt};
    const formats::Exl2Layout layout = formats::describe_exl2(key, parts);
    const std::vector<float> dequantized =
        quire::kernels::dequantize(formats::host_linear_weight(layout, parts));
    QCOMPARE(dequantized.size(), reference.size());
    double error = 0.0;
    double energy = 0.0;
    for (std::size_t i = 0; i < reference.size(); ++i) {
      error += (dequantized[i] - reference[i]) * (dequantized[i] - reference[i]);
      energy += reference[i] * reference[i];
    }
    // 8-bit groups: the error is a small fraction of the weights.
    QVERIFY2(std::sqrt(error / energy) < 0.05, qPrintable(QString::number(error / energy)));
  }
};

QUIRE_TEST(RandomModelValuesTest)
#include "test_random_model_values.moc"
