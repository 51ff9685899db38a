// The CUDA backend's device lists ("cuda", "cuda:0,2", "cuda:0:2x20GiB"):
// what they parse to, how they are written back, what they mean on machines
// with a given number of GPUs, and what the errors say. Plain parsing, so it
// runs on every machine.

#include <QTest>
#include <stdexcept>
#include <string>
#include <vector>

#include "quire/kernels/cuda_devices.h"
#include "quire/kernels/memory_size.h"
#include "test_main.h"

using namespace quire::kernels;

Q_DECLARE_METATYPE(std::vector<quire::kernels::CudaLogicalDevice>)

namespace {

constexpr std::int64_t kMiB = std::int64_t{1} << 20;
constexpr std::int64_t kGiB = std::int64_t{1} << 30;

// The message of the std::invalid_argument that parsing `spec` throws.
QString parse_error(const char* spec) {
  try {
    parse_cuda_devices(spec);
  } catch (const std::invalid_argument& error) {
    return QString::fromStdString(error.what());
  }
  return QStringLiteral("(parsed without an error)");
}

}  // namespace

class CudaDeviceSpecTest : public QObject {
  Q_OBJECT

 private slots:
  void parses_data() {
    QTest::addColumn<QString>("spec");
    QTest::addColumn<bool>("all");
    QTest::addColumn<std::vector<CudaLogicalDevice>>("devices");
    QTest::addColumn<QString>("written");
    using Devices = std::vector<CudaLogicalDevice>;
    QTest::newRow("every GPU") << QStringLiteral("cuda") << true << Devices{}
                               << QStringLiteral("cuda");
    QTest::newRow("one GPU") << QStringLiteral("cuda:1") << false << Devices{{1, 0}}
                             << QStringLiteral("cuda:1");
    QTest::newRow("chosen GPUs") << QStringLiteral("cuda:0,2") << false << Devices{{0, 0}, {2, 0}}
                                 << QStringLiteral("cuda:0,2");
    QTest::newRow("one budget") << QStringLiteral("cuda:0:20GiB") << false
                                << Devices{{0, 20 * kGiB}} << QStringLiteral("cuda:0:20GiB");
    QTest::newRow("two shares of one GPU")
        << QStringLiteral("cuda:0:2x20GiB") << false << Devices{{0, 20 * kGiB}, {0, 20 * kGiB}}
        << QStringLiteral("cuda:0:2x20GiB");
    QTest::newRow("mixed") << QStringLiteral("cuda:0:1536M,1,0:512MiB") << false
                           << Devices{{0, 1536 * kMiB}, {1, 0}, {0, 512 * kMiB}}
                           << QStringLiteral("cuda:0:1536MiB,1,0:512MiB");
    QTest::newRow("shares in pieces")
        << QStringLiteral("cuda:3:1G,3:1GiB,3:3x64K") << false
        << Devices{{3, kGiB}, {3, kGiB}, {3, 64 << 10}, {3, 64 << 10}, {3, 64 << 10}}
        << QStringLiteral("cuda:3:2x1GiB,3:3x64KiB");
    QTest::newRow("bytes") << QStringLiteral("cuda:0:1000") << false << Devices{{0, 1000}}
                           << QStringLiteral("cuda:0:1000B");
  }

  void parses() {
    QFETCH(QString, spec);
    QFETCH(bool, all);
    QFETCH(std::vector<CudaLogicalDevice>, devices);
    QFETCH(QString, written);
    const CudaDeviceSpec parsed = parse_cuda_devices(spec.toStdString());
    QCOMPARE(parsed.all_gpus, all);
    QVERIFY(parsed.devices == devices);
    QCOMPARE(QString::fromStdString(to_string(parsed)), written);
    // What is written back reads back the same.
    QVERIFY(parse_cuda_devices(to_string(parsed)) == parsed);
  }

  void refusesWithTheReason_data() {
    QTest::addColumn<QString>("spec");
    QTest::addColumn<QString>("says");
    QTest::newRow("another backend")
        << QStringLiteral("cpu:2x1GiB") << QStringLiteral("write cuda, cuda:0,2 or cuda:0:2x20GiB");
    QTest::newRow("prefix only") << QStringLiteral("cuda:") << QStringLiteral("is not understood");
    QTest::newRow("no colon") << QStringLiteral("cuda0") << QStringLiteral("is not understood");
    QTest::newRow("upper case") << QStringLiteral("CUDA") << QStringLiteral("is not understood");
    QTest::newRow("empty entry") << QStringLiteral("cuda:0,,1") << QStringLiteral("empty entry");
    QTest::newRow("trailing comma") << QStringLiteral("cuda:0,") << QStringLiteral("empty entry");
    QTest::newRow("name for index")
        << QStringLiteral("cuda:gpu0") << QStringLiteral("\"gpu0\" is not a GPU index");
    QTest::newRow("negative index")
        << QStringLiteral("cuda:-1") << QStringLiteral("\"-1\" is not a GPU index");
    QTest::newRow("no size") << QStringLiteral("cuda:0:")
                             << QStringLiteral("\"0:\" needs a budget after the colon");
    QTest::newRow("zero devices") << QStringLiteral("cuda:0:0x1GiB")
                                  << QStringLiteral("needs a device count from 1 to 64");
    QTest::newRow("too many at once")
        << QStringLiteral("cuda:0:65x1GiB") << QStringLiteral("needs a device count from 1 to 64");
    QTest::newRow("count only") << QStringLiteral("cuda:0:2x")
                                << QStringLiteral("\"0:2x\" needs a budget after the x");
    QTest::newRow("zero budget") << QStringLiteral("cuda:0:0GiB")
                                 << QStringLiteral("is not a memory size");
    QTest::newRow("unknown unit") << QStringLiteral("cuda:0:12parsecs")
                                  << QStringLiteral("unknown size unit \"parsecs\"");
    QTest::newRow("too large") << QStringLiteral("cuda:0:2000000GiB")
                               << QStringLiteral("too large");
    QTest::newRow("too many in all")
        << QStringLiteral("cuda:0:60x1GiB,1:5x1GiB") << QStringLiteral("more than 64 devices");
    QTest::newRow("GPU twice") << QStringLiteral("cuda:0,0")
                               << QStringLiteral("names GPU 0 more than once without a budget");
    QTest::newRow("whole and share")
        << QStringLiteral("cuda:1,1:4GiB") << QStringLiteral("write cuda:1:2x20GiB");
  }

  void refusesWithTheReason() {
    QFETCH(QString, spec);
    QFETCH(QString, says);
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument, parse_cuda_devices(spec.toStdString()));
    const QString message = parse_error(qPrintable(spec));
    QVERIFY2(message.contains(says), qPrintable(message));
  }

  void resolvesAgainstTheMachine() {
    const std::vector<CudaLogicalDevice> every =
        resolve_cuda_devices(parse_cuda_devices("cuda"), 3);
    QVERIFY((every == std::vector<CudaLogicalDevice>{{0, 0}, {1, 0}, {2, 0}}));

    const CudaDeviceSpec shares = parse_cuda_devices("cuda:0:2x20GiB");
    QVERIFY(resolve_cuda_devices(shares, 1) == shares.devices);

    auto refusal = [](const char* spec, int gpus) {
      try {
        resolve_cuda_devices(parse_cuda_devices(spec), gpus);
      } catch (const std::invalid_argument& error) {
        return std::string(error.what());
      }
      return std::string("(resolved)");
    };
    QCOMPARE(refusal("cuda", 0), std::string("no NVIDIA GPU was found"));
    QCOMPARE(refusal("cuda:0,2", 2),
             std::string("the device list cuda:0,2 names GPU 2, but this machine has GPUs 0 to 1"));
    QCOMPARE(
        refusal("cuda:1:4GiB", 1),
        std::string("the device list cuda:1:4GiB names GPU 1, but this machine has one GPU, 0"));
    QCOMPARE(refusal("cuda:0", 0),
             std::string("the device list cuda:0 names GPU 0, but this machine has no NVIDIA GPU"));
  }

  void memorySizesRoundTrip() {
    QCOMPARE(parse_memory_size("20GiB"), 20 * kGiB);
    QCOMPARE(parse_memory_size("64K"), std::int64_t{64} << 10);
    QCOMPARE(parse_memory_size("7"), std::int64_t{7});
    QCOMPARE(format_memory_size(20 * kGiB), std::string("20GiB"));
    QCOMPARE(format_memory_size(1536 * kMiB), std::string("1536MiB"));
    QCOMPARE(format_memory_size(3 << 10), std::string("3KiB"));
    QCOMPARE(format_memory_size(1000), std::string("1000B"));
  }
};

QUIRE_TEST(CudaDeviceSpecTest)
#include "test_cuda_device_spec.moc"
