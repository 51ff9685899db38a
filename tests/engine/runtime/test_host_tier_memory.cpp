// The host tier (evicted pages kept in host memory by hash) takes its memory
// as pages arrive, not when the model loads: the app's default tier is a share
// of free RAM, and a user who never evicts a chat must not pay for it.

#include <QTest>
#include <fstream>
#include <string>

#include "quire/engine/runtime/kv_storage.h"
#include "quire/kernels/cpu/cpu_backend.h"
#include "test_main.h"

using namespace quire;

namespace {

// Resident memory of this process, from the kernel's own count.
std::int64_t resident_bytes() {
  std::ifstream status("/proc/self/status");
  std::string key;
  while (status >> key) {
    if (key == "VmRSS:") {
      std::int64_t kib = 0;
      status >> kib;
      return kib * 1024;
    }
    status.ignore(1 << 16, '\n');
  }
  return -1;
}

constexpr std::int64_t kMiB = 1024 * 1024;

}  // namespace

class HostTierMemoryTest : public QObject {
  Q_OBJECT

 private slots:
  void aLargeTierTakesMemoryOnlyForPagesSaved() {
    kernels::CpuBackend backend;
    engine::KvStorage::Config config;
    config.page_size = 256;
    config.num_pages = 2;
    // 16 layers of 8 K/V heads of 128 in FP16: 16 MiB a page, 512 MiB in all.
    config.host_pages = 32;
    const std::vector<cache::LayerShape> layers(16, cache::LayerShape{8, 128});
    const std::int64_t before = resident_bytes();
    QVERIFY(before > 0);
    engine::KvStorage storage(backend, config, layers);
    QCOMPARE(storage.page_bytes(0) * 16, 16 * kMiB);
    const std::int64_t grown = resident_bytes() - before;
    QVERIFY2(grown < 32 * kMiB,
             qPrintable(
                 QStringLiteral("%1 MiB resident after making a 512 MiB tier").arg(grown / kMiB)));
  }
};

QUIRE_TEST(HostTierMemoryTest)
#include "test_host_tier_memory.moc"
