// Summing each projection's x^T x while a model computes text: the first
// layer's attention input is the normed embedding of each token, which the
// test computes from the model's own tensors; projections that read the
// same input share one sum.

#include <QTest>
#include <cmath>
#include <cstring>
#include <vector>

#include "quire/engine/io/model_tensors.h"
#include "quire/engine/runtime/linear_input_hessians.h"
#include "quire/kernels/cpu/half.h"
#include "runtime_test_support.h"
#include "test_main.h"

using namespace quire;

namespace {

std::vector<float> halves_of(const engine::io::ModelTensors& tensors, const char* name) {
  const std::span<const std::byte> bytes = tensors.data(name);
  std::vector<float> values(bytes.size() / 2);
  for (std::size_t i = 0; i < values.size(); ++i) {
    std::uint16_t half = 0;
    std::memcpy(&half, bytes.data() + 2 * i, 2);
    values[i] = kernels::half_to_float(half);
  }
  return values;
}

}  // namespace

class LinearInputHessiansTest : public QObject {
  Q_OBJECT

 private slots:
  void sumsEachProjectionsInputs() {
    engine::modelgen::RandomModelSpec spec = test::small_llama_spec();
    const test::TestModel model(spec);
    kernels::CpuBackend backend;
    engine::ModelRuntime runtime(model.description(), backend, test::small_cache_options());
    const std::vector<cache::TokenId> tokens = test::random_tokens(150, spec.vocab, 4);
    std::vector<double> expected(std::size_t(spec.hidden * spec.hidden), 0.0);
    {
      engine::LinearInputHessians hessians(runtime);
      hessians.observe(tokens);
      QCOMPARE(hessians.tokens_observed(), std::int64_t(150));

      const engine::LinearInputHessian* q = hessians.find("model.layers.0.self_attn.q_proj");
      QVERIFY(q != nullptr);
      QCOMPARE(hessians.find("model.layers.0.self_attn.k_proj"), q);
      QCOMPARE(hessians.find("model.layers.0.self_attn.v_proj"), q);
      const engine::LinearInputHessian* gate = hessians.find("model.layers.2.mlp.gate_proj");
      QVERIFY(gate != nullptr && gate != q);
      QCOMPARE(hessians.find("model.layers.2.mlp.up_proj"), gate);
      const engine::LinearInputHessian* down = hessians.find("model.layers.2.mlp.down_proj");
      QVERIFY(down != nullptr);
      QCOMPARE(down->inputs, std::int64_t(spec.intermediate));
      QCOMPARE(q->rows, std::int64_t(150));
      QCOMPARE(down->rows, std::int64_t(150));
      QVERIFY(hessians.find("model.layers.9.mlp.down_proj") == nullptr);

      // Layer 0's attention reads RMSNorm(embedding) times the norm's weight.
      const auto tensors = engine::io::ModelTensors::open(model.path());
      const std::vector<float> embedding = halves_of(tensors, "model.embed_tokens.weight");
      const std::vector<float> norm = halves_of(tensors, "model.layers.0.input_layernorm.weight");
      const auto hidden = static_cast<std::size_t>(spec.hidden);
      std::vector<double> x(hidden);
      for (const cache::TokenId token : tokens) {
        const float* row = embedding.data() + std::size_t(token) * hidden;
        double square = 0.0;
        for (std::size_t i = 0; i < hidden; ++i)
          square += double(row[i]) * row[i];
        const double scale = 1.0 / std::sqrt(square / double(hidden) + spec.rms_norm_eps);
        for (std::size_t i = 0; i < hidden; ++i)
          x[i] = row[i] * scale * norm[i];
        for (std::size_t i = 0; i < hidden; ++i) {
          for (std::size_t j = 0; j < hidden; ++j)
            expected[i * hidden + j] += x[i] * x[j];
        }
      }
      double worst = 0.0, largest = 0.0;
      for (std::size_t i = 0; i < expected.size(); ++i) {
        worst = std::max(worst, std::abs(q->sum[i] - expected[i]));
        largest = std::max(largest, std::abs(expected[i]));
      }
      QVERIFY2(worst < 1e-4 * largest,
               qPrintable(QStringLiteral("%1 of %2").arg(worst).arg(largest)));
    }
    // Detached with the collector: the runtime computes on without it.
    QCOMPARE(runtime.prefill(test::random_tokens(20, spec.vocab, 5), false).size(), std::size_t(1));
  }
};

QUIRE_TEST(LinearInputHessiansTest)
#include "test_linear_input_hessians.moc"
