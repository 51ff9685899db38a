// compare_backends() on a fake backend: the CPU backend under another name
// passes; the same backend with its linear layers 10% wrong fails, on every
// step or only on decode steps, on every device or one of two, or only in
// its FP8 or EXL3 products (checked where the backend claims them), or only where
// attention reads the residual window's FP16 mirrors (a run with a Q8
// cache), and an error on the device is a check that could not be completed.

#include <QTest>

#include "perturbed_backend.h"
#include "quire/engine/selfcheck/backend_comparison.h"
#include "quire/engine/selfcheck/verified_gpus.h"
#include "test_main.h"

using namespace quire;
using quire::test::PerturbedBackend;

namespace {

engine::selfcheck::SelfCheckResult compare(PerturbedBackend& candidate) {
  kernels::CpuBackend reference;
  engine::selfcheck::ComparisonOptions options;
  options.quire_version = "9.8.7";
  return engine::selfcheck::compare_backends(candidate, reference, options);
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

}  // namespace

class BackendComparisonTest : public QObject {
  Q_OBJECT

 private slots:
  void theCpuUnderAnotherNamePasses() {
    kernels::CpuBackend inner;
    PerturbedBackend candidate(inner);
    const engine::selfcheck::SelfCheckResult result = compare(candidate);
    QVERIFY2(result.passed, result.details.c_str());
    QVERIFY(result.completed);
    QVERIFY2(contains(result.summary, "agrees with the CPU on 1 device (largest difference 0 of"),
             result.summary.c_str());
    QVERIFY2(contains(result.summary, "16 greedy tokens agree in each of 4 runs)"),
             result.summary.c_str());
    QVERIFY(!contains(result.summary, "\n"));
    // What a bug report needs: who ran, on what, against what, and how close.
    for (const char* part :
         {"Quire 9.8.7: self-check of the fake backend against the cpu backend\n",
          "backend version: fake runtime 1.0, driver 1.0\n", "device 0 (Fake GPU 0, sm_86)\n",
          "model: llama, 3 layers, hidden 128", "prompt: 40 tokens in chunks of 16",
          "device 0 (Fake GPU 0, sm_86): greedy tokens: 16 of 16 agree\n",
          "FP16 weights, seed 53\n", "FP16 weights, seed 53 (Q8 cache with its residual window)\n",
          "FP8 weights (a scale per row), seed 53 (FP8 model)\n",
          "EXL3 weights (4 bits, MCG codebook), seed 53 (EXL3 model)\n",
          "device 0 (Fake GPU 0, sm_86), Q8 cache with its residual window: greedy tokens: 16 "
          "of 16 agree\n",
          "device 0 (Fake GPU 0, sm_86), FP8 model: greedy tokens: 16 of 16 agree\n",
          "device 0 (Fake GPU 0, sm_86), EXL3 model: greedy tokens: 16 of 16 agree\n",
          "result: passed: agrees with the CPU"}) {
      QVERIFY2(contains(result.details, part), qPrintable(QString::fromStdString(result.details)));
    }
  }

  void wrongLinearLayersFailAtTheFirstPromptPosition() {
    kernels::CpuBackend inner;
    PerturbedBackend candidate(inner);
    candidate.faults.linear_scale = 1.1f;
    const engine::selfcheck::SelfCheckResult result = compare(candidate);
    QVERIFY(!result.passed);
    QVERIFY(result.completed);
    QVERIFY2(contains(result.summary,
                      "device 0 (Fake GPU 0, sm_86): logits differ from the CPU's "
                      "by "),
             result.summary.c_str());
    QVERIFY2(contains(result.summary, "at prompt position "), result.summary.c_str());
    QVERIFY2(contains(result.summary, "(tolerance 0.01)"), result.summary.c_str());
    QVERIFY(!contains(result.summary, "\n"));
    QVERIFY2(contains(result.details, "result: failed: device 0"), result.details.c_str());
  }

  // A wrong FP8 kernel fails the check though the FP16 model agrees; a
  // backend without FP8 products is not asked to run the FP8 model.
  void wrongFp8ProductsFailTheFp8Model() {
    kernels::CpuBackend inner;
    PerturbedBackend candidate(inner);
    candidate.faults.linear_scale = 1.1f;
    candidate.faults.fp8_only = true;
    const engine::selfcheck::SelfCheckResult result = compare(candidate);
    QVERIFY(!result.passed);
    QVERIFY(result.completed);
    QVERIFY2(contains(result.summary,
                      "device 0 (Fake GPU 0, sm_86), FP8 model: logits differ "
                      "from the CPU's by "),
             result.summary.c_str());
    QVERIFY2(contains(result.details, "device 0 (Fake GPU 0, sm_86): greedy tokens: 16 of 16"),
             result.details.c_str());

    candidate.takes_fp8 = false;
    const engine::selfcheck::SelfCheckResult without = compare(candidate);
    QVERIFY2(without.passed, without.details.c_str());
    QVERIFY2(!contains(without.details, "FP8"), without.details.c_str());
    QVERIFY2(contains(without.summary, "16 greedy tokens agree in each of 3 runs)"),
             without.summary.c_str());
  }

  // Likewise for EXL3: a wrong EXL3 kernel fails the EXL3 model alone; a
  // backend without EXL3 products is not asked to run it.
  void wrongExl3ProductsFailTheExl3Model() {
    kernels::CpuBackend inner;
    PerturbedBackend candidate(inner);
    candidate.faults.linear_scale = 1.1f;
    candidate.faults.exl3_only = true;
    const engine::selfcheck::SelfCheckResult result = compare(candidate);
    QVERIFY(!result.passed);
    QVERIFY(result.completed);
    QVERIFY2(contains(result.summary,
                      "device 0 (Fake GPU 0, sm_86), EXL3 model: logits differ "
                      "from the CPU's by "),
             result.summary.c_str());
    for (const char* part : {"device 0 (Fake GPU 0, sm_86): greedy tokens: 16 of 16",
                             "device 0 (Fake GPU 0, sm_86), FP8 model: greedy tokens: 16 of 16"}) {
      QVERIFY2(contains(result.details, part), result.details.c_str());
    }

    candidate.takes_exl3 = false;
    const engine::selfcheck::SelfCheckResult without = compare(candidate);
    QVERIFY2(without.passed, without.details.c_str());
    QVERIFY2(!contains(without.details, "EXL3"), without.details.c_str());
    QVERIFY2(contains(without.summary, "16 greedy tokens agree in each of 3 runs)"),
             without.summary.c_str());
  }

  // Attention that reads the residual window's mirrors wrongly fails the
  // coded-cache run, which is the only one with mirrors.
  void wrongMirroredAttentionFailsTheCodedCacheRun() {
    kernels::CpuBackend inner;
    PerturbedBackend candidate(inner);
    candidate.faults.linear_scale = 1.1f;
    candidate.faults.mirrored_attention = true;
    const engine::selfcheck::SelfCheckResult result = compare(candidate);
    QVERIFY(!result.passed);
    QVERIFY(result.completed);
    QVERIFY2(contains(result.summary,
                      "device 0 (Fake GPU 0, sm_86), Q8 cache with its residual "
                      "window: logits differ from the CPU's by "),
             result.summary.c_str());
    QVERIFY2(contains(result.details, "device 0 (Fake GPU 0, sm_86): greedy tokens: 16 of 16"),
             result.details.c_str());
  }

  void wrongDecodeStepsFailAtADecodeStep() {
    kernels::CpuBackend inner;
    PerturbedBackend candidate(inner);
    candidate.faults.linear_scale = 1.1f;
    candidate.faults.decode_only = true;
    const engine::selfcheck::SelfCheckResult result = compare(candidate);
    QVERIFY(!result.passed);
    QVERIFY2(contains(result.summary, "at decode step "), result.summary.c_str());
    // The prompt's logits were right, and the details say so.
    QVERIFY2(contains(result.details, "prompt logits differ by at most 0 of"),
             result.details.c_str());
  }

  void aScaleTooSmallToMatterPasses() {
    // 1e-4 of every product stays far inside the tolerance, as FP16 rounding does.
    kernels::CpuBackend inner;
    PerturbedBackend candidate(inner);
    candidate.faults.linear_scale = 1.0001f;
    const engine::selfcheck::SelfCheckResult result = compare(candidate);
    QVERIFY2(result.passed, result.details.c_str());
  }

  void everyDeviceIsChecked() {
    kernels::CpuBackend inner(kernels::CpuBackend::parse_devices("cpu:2x256MiB"));
    PerturbedBackend candidate(inner);
    candidate.faults.linear_scale = 1.1f;
    candidate.faults.device = 1;
    const engine::selfcheck::SelfCheckResult result = compare(candidate);
    QVERIFY(!result.passed);
    QVERIFY2(contains(result.summary, "device 1 (Fake GPU 1, sm_86): "), result.summary.c_str());
    QVERIFY2(contains(result.details, "device 0 (Fake GPU 0, sm_86): greedy tokens: 16 of 16"),
             result.details.c_str());

    candidate.faults.device = -1;
    candidate.faults.linear_scale = 1.0f;
    const engine::selfcheck::SelfCheckResult both = compare(candidate);
    QVERIFY2(both.passed, both.details.c_str());
    QVERIFY2(contains(both.summary, "on 2 devices"), both.summary.c_str());
  }

  void anErrorOnTheDeviceIsAnIncompleteCheck() {
    kernels::CpuBackend inner;
    PerturbedBackend candidate(inner);
    candidate.faults.failing_op = "paged_attention";
    const engine::selfcheck::SelfCheckResult result = compare(candidate);
    QVERIFY(!result.passed);
    QVERIFY(!result.completed);
    QCOMPARE(result.summary, std::string("device 0 (Fake GPU 0, sm_86): the check stopped with an "
                                         "error: the fake device failed"));
  }

  void architecturesOtherThanTheVerifiedOnesAreNamed() {
    std::vector<kernels::DeviceInfo> devices(4);
    devices[0].architecture = "sm_90";
    devices[1].architecture = "sm_86";
    devices[2].architecture = "sm_89";
    devices[3].architecture = "sm_86";
    QCOMPARE(engine::selfcheck::unverified_architectures(devices),
             (std::vector<std::string>{"sm_86", "sm_89"}));
    QVERIFY(engine::selfcheck::unverified_architectures(std::span(devices).first(1)).empty());
    // The CPU's devices have none.
    QVERIFY(engine::selfcheck::unverified_architectures(kernels::CpuBackend().devices()).empty());
    QCOMPARE(engine::selfcheck::verified_architectures_text(),
             std::string("sm_90 (NVIDIA H200, 2026-11-26)"));
  }
};

QUIRE_TEST(BackendComparisonTest)
#include "test_backend_comparison.moc"
