// The self-check that guards the CUDA backend's first use, on a real GPU: it
// must pass wherever the backend is right, or users would be sent to the CPU
// for nothing. Its details (versions, devices, differences) go to the test's
// output for the GPU logs. Label "gpu": skipped where the CUDA backend cannot
// run.

#include <QTest>

#include "quire/engine/selfcheck/backend_comparison.h"
#include "quire/kernels/cpu/cpu_backend.h"
#include "quire/kernels/cuda_loader.h"
#include "test_main.h"

using namespace quire;

class CudaBackendSelfCheckTest : public QObject {
  Q_OBJECT

 private slots:
  void passesOnThisGpu() {
    kernels::LoadedBackend loaded = kernels::load_cuda_backend();
    if (!loaded.backend)
      QSKIP(qPrintable(QString::fromStdString("no CUDA backend here: " + loaded.why_not)));
    kernels::CpuBackend cpu;
    const engine::selfcheck::SelfCheckResult result =
        engine::selfcheck::compare_backends(*loaded.backend, cpu);
    qInfo("%s", result.details.c_str());
    QVERIFY2(result.completed, result.summary.c_str());
    QVERIFY2(result.passed, result.summary.c_str());
  }
};

QUIRE_TEST(CudaBackendSelfCheckTest)
#include "test_cuda_self_check.moc"
