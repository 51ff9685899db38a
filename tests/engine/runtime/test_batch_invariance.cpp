// On the CPU a sequence's logits do not depend on what else runs in its
// steps: the forward pass multiplies each prompt on its own and decode rows
// in products whose kernels give each row the bits it gets alone
// (quire/engine/runtime/row_segments.h). A sequence decoded beside two
// others, whose prompts came in the same step, gets exactly the logits it
// gets alone, for the formats whose few-row kernels are row-invariant (FP16,
// EXL2 and EXL3), in a dense model and a mixture of experts. (A prompt cut
// into other chunks, as the generator may cut it beside other jobs, gets
// other last bits in every format.)

#include <QTest>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include "decode_loop.h"
#include "quire/engine/modelgen/random_model_spec.h"
#include "quire/engine/runtime/row_segments.h"
#include "quire/kernels/cpu/cpu_backend.h"
#include "runtime_test_support.h"
#include "test_main.h"

using namespace quire;
using quire::test::DecodeLoop;
using quire::test::TestModel;

namespace {

// 512 tokens in pages of 8: DecodeLoop gives each of three sequences 16.
engine::RuntimeOptions options() {
  engine::RuntimeOptions o = quire::test::small_cache_options();
  o.page_size = 8;
  o.max_sequences = 4;
  o.placement.mode = engine::PlacementMode::FillInOrder;
  o.reserve_bytes = 0;
  return o;
}

}  // namespace

class BatchInvarianceTest : public QObject {
  Q_OBJECT

 private slots:
  // Decode rows go together up to the backend's count; each prompt's rows
  // are a segment of their own; a backend that does not ask gets one.
  void rowsAreCutBySequenceAndKind() {
    using engine::RowSegment;
    using kernels::ProductRows;
    const auto D = ProductRows::decode;
    const auto P = ProductRows::prompt;
    // Sequences 0, 1 decode; 2 a prompt of 3 rows; 3 a prompt of 2; 4-7 decode.
    const std::vector<ProductRows> kinds = {D, D, P, P, D, D, D, D};
    const std::vector<std::int32_t> rows = {0, 1, 2, 2, 2, 3, 3, 4, 5, 6, 7};
    const auto as_tuples = [](const std::vector<RowSegment>& segments) {
      std::vector<std::tuple<std::int64_t, std::int64_t, ProductRows>> out;
      for (const RowSegment& s : segments)
        out.emplace_back(s.first, s.rows, s.kind);
      return out;
    };
    using Expected = std::vector<std::tuple<std::int64_t, std::int64_t, ProductRows>>;
    QCOMPARE(as_tuples(engine::row_segments(rows, kinds, 16)),
             (Expected{{0, 2, D}, {2, 3, P}, {5, 2, P}, {7, 4, D}}));
    QCOMPARE(as_tuples(engine::row_segments(rows, kinds, 3)),
             (Expected{{0, 2, D}, {2, 3, P}, {5, 2, P}, {7, 3, D}, {10, 1, D}}));
    QCOMPARE(as_tuples(engine::row_segments(rows, kinds, 0)), (Expected{{0, 11, P}}));
    const std::vector<std::int32_t> decode_only = {0, 1, 4, 5};
    QCOMPARE(as_tuples(engine::row_segments(decode_only, kinds, 0)), (Expected{{0, 4, D}}));
    QVERIFY(engine::row_segments({}, kinds, 16).empty());
  }

  void aSequenceDecodesAsItDoesAlone_data() {
    QTest::addColumn<QString>("architecture");
    QTest::addColumn<QString>("format");
    QTest::addColumn<int>("prompt");
    // Prompts of 7 tokens: alone a few-row product, three together more
    // rows than that; of 21: tiles either way.
    for (const char* architecture : {"llama", "mixtral"}) {
      for (const char* format : {"fp16", "exl2:4.0", "exl2:6.0", "exl3:3.0"}) {
        for (const int prompt : {7, 21}) {
          QTest::addRow("%s, %s, %d-token prompts", architecture, format, prompt)
              << architecture << format << prompt;
        }
      }
    }
  }

  void aSequenceDecodesAsItDoesAlone() {
    QFETCH(QString, architecture);
    QFETCH(QString, format);
    QFETCH(int, prompt);
    engine::modelgen::RandomModelSpec spec =
        engine::modelgen::default_spec(architecture.toStdString());
    spec.format = engine::modelgen::parse_format(format.toStdString());
    spec.seed = 19;
    const TestModel model(spec);
    constexpr int kSteps = 6;
    kernels::CpuBackend cpu;
    engine::ModelRuntime alone_runtime(model.description(), cpu, options());
    const std::vector<std::vector<float>> alone =
        DecodeLoop(alone_runtime, 1, prompt, spec.vocab).run(kSteps);
    engine::ModelRuntime together_runtime(model.description(), cpu, options());
    const std::vector<std::vector<float>> together =
        DecodeLoop(together_runtime, 3, prompt, spec.vocab).run(kSteps);
    QCOMPARE(together.size(), std::size_t(3 * kSteps));
    for (int step = 0; step < kSteps; ++step) {
      // Sequence 0 of three has the lone sequence's prompt.
      QVERIFY2(together[std::size_t(3 * step)] == alone[std::size_t(step)],
               qPrintable(QStringLiteral("step %1").arg(step)));
    }
  }
};

QUIRE_TEST(BatchInvarianceTest)
#include "test_batch_invariance.moc"
