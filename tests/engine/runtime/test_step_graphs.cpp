// Decode steps recorded and replayed (StepGraphs, ForwardPass) on the CPU:
// through RecordingBackend, which records ops the way CUDA graphs do, a
// replayed step must give the logits of the same step run op by op, with
// page tables padded to their bucket; shapes are recorded on their second
// sight; reallocated buffers drop recordings; a failed recording falls back
// and is reported once; backends that cannot record, models over several
// devices, prefill steps and the switch turned off run every step directly.

#include <QTest>
#include <memory>
#include <string>
#include <vector>

#include "decode_loop.h"
#include "quire/engine/runtime/step_graphs.h"
#include "recording_backend.h"
#include "runtime_test_support.h"
#include "test_main.h"

using namespace quire;
using quire::test::DecodeLoop;
using quire::test::RecordingBackend;
using quire::test::TestModel;

namespace {

constexpr int kPageSize = 8;
constexpr int kPages = 64;

engine::RuntimeOptions options() {
  engine::RuntimeOptions o;
  o.cache_tokens = kPageSize * kPages;
  o.page_size = kPageSize;
  o.max_chunk_tokens = 128;
  o.max_sequences = 4;
  o.placement.mode = engine::PlacementMode::FillInOrder;
  o.reserve_bytes = 0;
  return o;
}

}  // namespace

class StepGraphsTest : public QObject {
  Q_OBJECT

  std::unique_ptr<TestModel> model_;
  std::unique_ptr<TestModel> dynamic_rope_;
  int vocab_ = 0;

  // The logits of `steps` decode steps on the plain CPU backend, which
  // records nothing and pads no page table.
  std::vector<std::vector<float>> reference(const TestModel& model, int sequences, int prompt,
                                            int steps) {
    kernels::CpuBackend cpu;
    engine::ModelRuntime runtime(model.description(), cpu, options());
    return DecodeLoop(runtime, sequences, prompt, vocab_).run(steps);
  }

 private slots:
  void initTestCase() {
    engine::modelgen::RandomModelSpec spec;
    spec.architecture = "mistral";
    spec.sliding_window = 20;
    spec.seed = 12;
    model_ = std::make_unique<TestModel>(spec);
    vocab_ = spec.vocab;
    // Frequencies that follow the sequence length: refreshed in device memory
    // before every step, which replays must read.
    engine::modelgen::RandomModelSpec dynamic;
    dynamic.rope_scaling.type = engine::modelgen::RopeScalingSpec::Type::Dynamic;
    dynamic.rope_scaling.factor = 2.0;
    dynamic.max_position_embeddings = 24;
    dynamic.seed = 13;
    dynamic_rope_ = std::make_unique<TestModel>(dynamic);
  }

  void pageBucket_data() {
    QTest::addColumn<int>("pages");
    QTest::addColumn<int>("bucket");
    QTest::newRow("none") << 0 << engine::kMinPageBucket;
    QTest::newRow("one") << 1 << engine::kMinPageBucket;
    QTest::newRow("the minimum") << 4 << 4;
    QTest::newRow("one past it") << 5 << 8;
    QTest::newRow("a power of two") << 16 << 16;
    QTest::newRow("one past that") << 17 << 32;
    QTest::newRow("many") << 1000 << 1024;
  }

  void pageBucket() {
    QFETCH(int, pages);
    QFETCH(int, bucket);
    QCOMPARE(engine::page_bucket(pages), bucket);
  }

  void replayedStepsGiveTheLogitsOfDirectOnes_data() {
    QTest::addColumn<bool>("dynamicRope");
    QTest::addColumn<int>("sequences");
    QTest::newRow("one sequence") << false << 1;
    QTest::newRow("three sequences") << false << 3;
    QTest::newRow("dynamic rope") << true << 2;
  }

  void replayedStepsGiveTheLogitsOfDirectOnes() {
    QFETCH(bool, dynamicRope);
    QFETCH(int, sequences);
    const TestModel& model = dynamicRope ? *dynamic_rope_ : *model_;
    constexpr int kPrompt = 5, kSteps = 40;
    const std::vector<std::vector<float>> expected = reference(model, sequences, kPrompt, kSteps);

    kernels::CpuBackend cpu;
    RecordingBackend recording(cpu);
    engine::ModelRuntime runtime(model.description(), recording, options());
    QVERIFY(runtime.forward().graphs().enabled());
    const std::vector<std::vector<float>> actual =
        DecodeLoop(runtime, sequences, kPrompt, vocab_).run(kSteps);
    QCOMPARE(actual.size(), expected.size());
    for (std::size_t i = 0; i < actual.size(); ++i)
      QVERIFY2(actual[i] == expected[i], qPrintable(QStringLiteral("row %1 differs").arg(i)));

    // Each width (4 and 8 pages): one direct run, one recorded, then
    // replays. The prompt step asks for every row and is never recorded.
    // The page-table buffer holds a full batch of the narrower width; when
    // the wider does not fit, the new buffer drops the recordings made.
    const int shapes = test::widths_visited(kPrompt, kSteps, kPageSize);
    const engine::StepGraphStatistics& stats = runtime.forward().graphs().statistics();
    QCOMPARE(stats.direct, std::int64_t{shapes});
    QCOMPARE(stats.captures, std::int64_t{shapes});
    QCOMPARE(stats.replays, std::int64_t{kSteps - shapes});
    QCOMPARE(stats.failures, std::int64_t{0});
    QCOMPARE(recording.replays(), kSteps - shapes);
    QVERIFY(recording.recorded_ops() > 0);
    QCOMPARE(shapes, 2);
    const bool regrown = sequences * 8 > options().max_sequences * 4;
    QCOMPARE(stats.invalidations, std::int64_t{regrown ? 1 : 0});
    QCOMPARE(runtime.forward().graphs().recordings(), std::size_t(regrown ? 1 : 2));
  }

  void widerPageTablesDropTheRecordingsLargerBatchesDoNot() {
    kernels::CpuBackend cpu;
    RecordingBackend recording(cpu);
    engine::ModelRuntime runtime(model_->description(), recording, options());
    const engine::StepGraphs& graphs = runtime.forward().graphs();
    // Page tables of 4 entries: the buffer takes a full batch of them.
    QCOMPARE(DecodeLoop(runtime, 1, 5, vocab_).run(4), reference(*model_, 1, 5, 4));
    QCOMPARE(graphs.recordings(), std::size_t(1));
    QCOMPARE(DecodeLoop(runtime, 3, 5, vocab_).run(4), reference(*model_, 3, 5, 4));
    QCOMPARE(graphs.recordings(), std::size_t(2));
    QCOMPARE(graphs.statistics().invalidations, std::int64_t{0});
    // Three tables of 8 entries do not fit: a new buffer, new recordings.
    QCOMPARE(DecodeLoop(runtime, 3, 40, vocab_).run(4), reference(*model_, 3, 40, 4));
    QCOMPARE(graphs.statistics().invalidations, std::int64_t{1});
    QCOMPARE(graphs.recordings(), std::size_t(1));
  }

  void movedWorkspacesMakeAShapeRecordAnew() {
    kernels::CpuBackend cpu;
    RecordingBackend recording(cpu);
    engine::ModelRuntime runtime(model_->description(), recording, options());
    DecodeLoop decoder(runtime, 1, 5, vocab_);
    const std::vector<std::vector<float>> actual = decoder.run(3);  // direct, recorded, replayed
    const engine::StepGraphStatistics& stats = runtime.forward().graphs().statistics();
    QCOMPARE(stats.replays, std::int64_t{2});
    recording.move_workspaces();
    // The next step finds its recording stale and runs directly; the one
    // after records again.
    const std::vector<std::vector<float>> again = DecodeLoop(runtime, 1, 5, vocab_).run(3);
    QCOMPARE(stats.invalidations, std::int64_t{1});
    QCOMPARE(stats.captures, std::int64_t{2});
    QCOMPARE(stats.replays, std::int64_t{4});
    QCOMPARE(stats.direct, std::int64_t{2});
    // The same prompt again: the same steps, the same logits.
    QCOMPARE(again, actual);
  }

  void aFailedRecordingRunsDirectlyAndIsReportedOnce_data() {
    QTest::addColumn<bool>("failEnd");
    QTest::addColumn<QString>("refusedOp");
    QTest::newRow("the graph cannot be made") << true << QString();
    QTest::newRow("an op refuses to be recorded") << false << QStringLiteral("rope");
  }

  void aFailedRecordingRunsDirectlyAndIsReportedOnce() {
    QFETCH(bool, failEnd);
    QFETCH(QString, refusedOp);
    kernels::CpuBackend cpu;
    RecordingBackend recording(cpu);
    recording.fail_end_capture = failEnd;
    recording.refuse_op = refusedOp.toStdString();
    engine::ModelRuntime runtime(model_->description(), recording, options());
    std::vector<std::string> reports;
    runtime.forward().graphs().set_report(
        [&](const std::string& message) { reports.push_back(message); });
    constexpr int kPrompt = 5, kSteps = 40;
    const std::vector<std::vector<float>> actual =
        DecodeLoop(runtime, 2, kPrompt, vocab_).run(kSteps);
    QCOMPARE(actual, reference(*model_, 2, kPrompt, kSteps));

    const int shapes = test::widths_visited(kPrompt, kSteps, kPageSize);
    QVERIFY(shapes > 1);
    const engine::StepGraphStatistics& stats = runtime.forward().graphs().statistics();
    QCOMPARE(stats.failures, std::int64_t{shapes});
    QCOMPARE(stats.captures, std::int64_t{0});
    QCOMPARE(stats.replays, std::int64_t{0});
    QCOMPARE(stats.direct, std::int64_t{kSteps});  // a failed recording ran nothing
    QCOMPARE(recording.replays(), 0);
    QCOMPARE(reports.size(), std::size_t(1));
    QVERIFY2(!stats.first_failure.empty(), "no reason kept");
    QVERIFY2(reports.front().find(stats.first_failure) != std::string::npos,
             reports.front().c_str());
  }

  void theCpuBackendRunsEveryStepDirectly() {
    kernels::CpuBackend cpu;
    QVERIFY(!cpu.supports_capture());
    QVERIFY_THROWS_EXCEPTION(std::logic_error, cpu.begin_capture(0));
    engine::ModelRuntime runtime(model_->description(), cpu, options());
    QVERIFY(!runtime.forward().graphs().enabled());
    DecodeLoop(runtime, 1, 5, vocab_).run(6);
    const engine::StepGraphStatistics& stats = runtime.forward().graphs().statistics();
    QCOMPARE(stats.direct + stats.captures + stats.replays + stats.failures, std::int64_t{0});
  }

  void switchedOffEveryStepRunsDirectly_data() {
    QTest::addColumn<QString>("how");
    QTest::newRow("RuntimeOptions") << QStringLiteral("options");
    QTest::newRow("QUIRE_STEP_GRAPHS=0") << QStringLiteral("environment");
    QTest::newRow("StepGraphs::set_enabled") << QStringLiteral("setter");
  }

  void switchedOffEveryStepRunsDirectly() {
    QFETCH(QString, how);
    kernels::CpuBackend cpu;
    RecordingBackend recording(cpu);
    engine::RuntimeOptions o = options();
    if (how == "options") o.step_graphs = false;
    if (how == "environment") qputenv("QUIRE_STEP_GRAPHS", "0");
    engine::ModelRuntime runtime(model_->description(), recording, o);
    qunsetenv("QUIRE_STEP_GRAPHS");
    if (how == "setter") runtime.forward().graphs().set_enabled(false);
    QVERIFY(!runtime.forward().graphs().enabled());
    QCOMPARE(DecodeLoop(runtime, 1, 5, vocab_).run(6), reference(*model_, 1, 5, 6));
    QCOMPARE(recording.recorded_ops(), 0);
    QCOMPARE(runtime.forward().graphs().statistics().captures, std::int64_t{0});
  }

  void stepsOverSeveralDevicesRunDirectly() {
    kernels::CpuBackend cpu(kernels::CpuBackend::parse_devices("cpu:2x64MiB"));
    RecordingBackend recording(cpu);
    engine::RuntimeOptions o = options();
    o.placement.mode = engine::PlacementMode::Balanced;
    o.max_chunk_tokens = 16;  // scratch small enough for the layers to split
    engine::ModelRuntime runtime(model_->description(), recording, o);
    QCOMPARE(runtime.loaded().layers.back().device, 1);
    QCOMPARE(DecodeLoop(runtime, 1, 5, vocab_).run(6), reference(*model_, 1, 5, 6));
    QCOMPARE(recording.recorded_ops(), 0);
  }

  void longStepsAreNeverRecorded() {
    kernels::CpuBackend cpu;
    RecordingBackend recording(cpu);
    engine::ModelRuntime runtime(model_->description(), recording, options());
    // Prompts of five tokens, last row only, three times: beyond the tokens a
    // recorded step may bring per sequence.
    const std::vector<cache::TokenId> prompt = test::random_tokens(5, vocab_, 7);
    const std::vector<cache::PageIndex> pages = {0};
    const engine::ForwardPass::Sequence step{pages, prompt, 0, false};
    for (int i = 0; i < 3; ++i)
      runtime.forward().run(std::span(&step, 1));
    const engine::StepGraphStatistics& stats = runtime.forward().graphs().statistics();
    QCOMPARE(stats.direct + stats.captures + stats.replays, std::int64_t{0});
  }
};

QUIRE_TEST(StepGraphsTest)
#include "test_step_graphs.moc"
