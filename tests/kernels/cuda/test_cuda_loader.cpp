// load_cuda_backend on any machine: with no NVIDIA driver, or in a build
// without CUDA, it declines with a reason and the process carries on; with a
// driver and a CUDA build it loads and lists the GPUs.

#include <QFileInfo>
#include <QTest>
#include <stdexcept>
#include <string>

#include "quire/kernels/cuda_loader.h"
#include "test_main.h"

using namespace quire::kernels;

namespace {

// The kernel module publishes this file once the NVIDIA driver is loaded.
bool nvidia_driver_loaded() {
  return QFileInfo::exists(QStringLiteral("/proc/driver/nvidia/version"));
}

bool contains(const std::string& text, const char* part) {
  return text.find(part) != std::string::npos;
}

}  // namespace

class CudaLoaderTest : public QObject {
  Q_OBJECT

 private slots:
  void init() { qunsetenv("QUIRE_CUDA_LIBRARY"); }
  void cleanup() { qunsetenv("QUIRE_CUDA_LIBRARY"); }

  void loadsOrSaysWhy() {
    // Twice: a second attempt must give the same answer, not crash on the
    // library the first one left loaded.
    for (int attempt = 0; attempt < 2; ++attempt) {
      const LoadedBackend loaded = load_cuda_backend();
      if (!QUIRE_TEST_HAVE_CUDA) {
        QVERIFY(!loaded.backend);
        QCOMPARE(loaded.why_not, std::string("this build of Quire has no CUDA backend"));
      } else if (!nvidia_driver_loaded()) {
        QVERIFY(!loaded.backend);
        QVERIFY2(contains(loaded.why_not, "NVIDIA"), loaded.why_not.c_str());
      } else {
        QVERIFY2(loaded.backend, loaded.why_not.c_str());
        QVERIFY(loaded.why_not.empty());
        QCOMPARE(loaded.backend->name(), std::string("cuda"));
        const std::vector<DeviceInfo> devices = loaded.backend->devices();
        QVERIFY(!devices.empty());
        for (const DeviceInfo& device : devices) {
          QVERIFY(!device.name.empty());
          QVERIFY(device.total_bytes > 0 && device.free_bytes <= device.total_bytes);
        }
      }
    }
  }

  void aDeviceListIsCheckedBeforeAnythingOpens() {
    // On every machine, with or without the library: a mistake in the list
    // is the caller's, and says so.
    qputenv("QUIRE_CUDA_LIBRARY", "/nonexistent/quire/libquire_cuda.so");
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument, load_cuda_backend("cuda:zero"));
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument, load_cuda_backend("cpu"));
    // A list that parses is an answer like any other.
    const LoadedBackend loaded = load_cuda_backend("cuda:0:2x1GiB");
    QVERIFY(!loaded.backend);
    QVERIFY2(contains(loaded.why_not, "could not be loaded"), loaded.why_not.c_str());
  }

  void aListNamingAMissingGpuDeclines() {
    if (!QUIRE_TEST_HAVE_CUDA || !nvidia_driver_loaded()) QSKIP("needs a GPU");
    const LoadedBackend loaded = load_cuda_backend("cuda:63");
    QVERIFY(!loaded.backend);
    QVERIFY2(contains(loaded.why_not, "names GPU 63, but this machine has"),
             loaded.why_not.c_str());
  }

  void aMissingExplicitLibraryIsNamed() {
    qputenv("QUIRE_CUDA_LIBRARY", "/nonexistent/quire/libquire_cuda.so");
    const LoadedBackend loaded = load_cuda_backend();
    QVERIFY(!loaded.backend);
    QVERIFY2(contains(loaded.why_not, "could not be loaded") &&
                 contains(loaded.why_not, "/nonexistent/quire/libquire_cuda.so"),
             loaded.why_not.c_str());
  }

  void aLibraryWithoutTheEntryPointIsRefused() {
    // Any shared library that every Linux machine has will do.
    qputenv("QUIRE_CUDA_LIBRARY", "libm.so.6");
    const LoadedBackend loaded = load_cuda_backend();
    QVERIFY(!loaded.backend);
    QVERIFY2(contains(loaded.why_not, "is not a Quire CUDA backend"), loaded.why_not.c_str());
  }
};

QUIRE_TEST(CudaLoaderTest)
#include "test_cuda_loader.moc"
