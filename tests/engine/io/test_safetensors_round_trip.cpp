#include <QTemporaryDir>
#include <QTest>
#include <bit>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <limits>
#include <stdexcept>
#include <system_error>

#include "io_test_helpers.h"
#include "quire/engine/io/safetensors_file.h"
#include "quire/engine/io/safetensors_writer.h"
#include "test_main.h"

using quire::engine::io::SafetensorsFile;
using quire::engine::io::SafetensorsWriter;
using quire::engine::io::TensorInfo;
using quire::kernels::DType;
using namespace quire::test::io;

Q_DECLARE_METATYPE(DType)
Q_DECLARE_METATYPE(std::vector<std::int64_t>)
Q_DECLARE_METATYPE(std::vector<std::byte>)

namespace {

// Values whose bits a sloppy copy would change: signed zero, a subnormal,
// infinities and a NaN with a payload.
std::vector<float> awkward_floats() {
  return {3.14159265f,
          -0.0f,
          std::numeric_limits<float>::denorm_min(),
          std::numeric_limits<float>::infinity(),
          -std::numeric_limits<float>::infinity(),
          std::bit_cast<float>(0x7fc12345u),
          1e-30f,
          -65504.0f};
}

bool same_bytes(std::span<const std::byte> a, std::span<const std::byte> b) {
  return a.size() == b.size() && (a.empty() || std::memcmp(a.data(), b.data(), a.size()) == 0);
}

}  // namespace

class SafetensorsRoundTripTest : public QObject {
  Q_OBJECT

 private slots:
  // Built byte by byte from the format's description, independent of the writer.
  void readsAHandBuiltFile() {
    const std::string header =
        R"({"__metadata__":{"format":"pt"},"w":{"dtype":"I16","shape":[3],)"
        R"("data_offsets":[4,10]},"s":{"dtype":"F32","shape":[],"data_offsets":[0,4]}}  )";
    const std::vector<std::byte> data =
        to_bytes(std::vector<std::uint16_t>{0x0000, 0x3f80,            // s = 1.0f, little-endian
                                            0x0001, 0x8000, 0xffff});  // w = 1, -32768, -1
    QTemporaryDir dir;
    const auto path = path_of(dir) / "hand.safetensors";
    write_bytes(path, join_safetensors(header, data));

    const SafetensorsFile file = SafetensorsFile::open(path);
    QCOMPARE(file.path(), path);
    QCOMPARE(file.file_size(), std::uint64_t(8 + header.size() + data.size()));
    QCOMPARE(file.data_start(), std::uint64_t(8 + header.size()));
    QCOMPARE(file.metadata().at("format"), std::string("pt"));
    QCOMPARE(file.tensors().size(), std::size_t(2));
    QCOMPARE(file.tensors()[0].name, std::string("s"));  // data order, not header order

    const TensorInfo* s = file.find("s");
    QVERIFY(s != nullptr);
    QCOMPARE(s->dtype, DType::F32);
    QVERIFY(s->shape.empty());
    QCOMPARE(s->elements(), std::int64_t(1));
    float value = 0;
    std::memcpy(&value, file.data(*s).data(), sizeof value);
    QCOMPARE(value, 1.0f);

    const TensorInfo* w = file.find("w");
    QVERIFY(w != nullptr);
    QCOMPARE(w->offset, file.data_start() + 4);
    QCOMPARE(w->bytes, std::uint64_t(6));
    std::int16_t ints[3];
    std::memcpy(ints, file.data(*w).data(), sizeof ints);
    QCOMPARE(ints[0], std::int16_t(1));
    QCOMPARE(ints[1], std::int16_t(-32768));
    QCOMPARE(ints[2], std::int16_t(-1));
    QVERIFY(file.find("missing") == nullptr);
  }

  void roundTripsBitExact_data() {
    QTest::addColumn<DType>("dtype");
    QTest::addColumn<std::vector<std::int64_t>>("shape");
    QTest::addColumn<std::vector<std::byte>>("bytes");
    QTest::newRow("F32 awkward values")
        << DType::F32 << std::vector<std::int64_t>{2, 4} << to_bytes(awkward_floats());
    QTest::newRow("F16 bit patterns")
        << DType::F16 << std::vector<std::int64_t>{5}
        << to_bytes(std::vector<std::uint16_t>{0x3c00, 0x8000, 0x0001, 0x7c00, 0x7e01});
    QTest::newRow("BF16 bit patterns")
        << DType::BF16 << std::vector<std::int64_t>{1, 3}
        << to_bytes(std::vector<std::uint16_t>{0x3f80, 0xff80, 0x7fc1});
    QTest::newRow("I32 extremes") << DType::I32 << std::vector<std::int64_t>{3}
                                  << to_bytes(std::vector<std::int32_t>{
                                         std::numeric_limits<std::int32_t>::min(), -1,
                                         std::numeric_limits<std::int32_t>::max()});
    QTest::newRow("I16 values") << DType::I16 << std::vector<std::int64_t>{2, 2}
                                << to_bytes(std::vector<std::int16_t>{-32768, 4, 8, 32767});
    QTest::newRow("U8 odd length")
        << DType::U8 << std::vector<std::int64_t>{7}
        << to_bytes(std::vector<std::uint8_t>{0, 1, 2, 127, 128, 254, 255});
    // compressed-tensors' weight_shape, and its int8 weights and zero points.
    QTest::newRow("I64 weight shape")
        << DType::I64 << std::vector<std::int64_t>{2}
        << to_bytes(std::vector<std::int64_t>{std::int64_t{1} << 40, -3});
    QTest::newRow("I8 extremes") << DType::I8 << std::vector<std::int64_t>{2, 3}
                                 << to_bytes(std::vector<std::int8_t>{-128, -1, 0, 1, 64, 127});
    QTest::newRow("scalar") << DType::F32 << std::vector<std::int64_t>{}
                            << to_bytes(std::vector<float>{-2.5f});
    QTest::newRow("empty with a zero dimension")
        << DType::F16 << std::vector<std::int64_t>{0, 4096} << std::vector<std::byte>{};
  }

  void roundTripsBitExact() {
    QFETCH(DType, dtype);
    QFETCH(std::vector<std::int64_t>, shape);
    QFETCH(std::vector<std::byte>, bytes);
    QTemporaryDir dir;
    const auto path = path_of(dir) / "t.safetensors";
    SafetensorsWriter writer;
    writer.add("model.t", dtype, shape, bytes);
    // A neighbour of another size, so the tensor under test is not alone in the file.
    writer.add("model.other", DType::U8, {3}, to_bytes(std::vector<std::uint8_t>{9, 8, 7}));
    writer.write(path);

    const SafetensorsFile file = SafetensorsFile::open(path);
    const TensorInfo* info = file.find("model.t");
    QVERIFY(info != nullptr);
    QCOMPARE(info->dtype, dtype);
    QCOMPARE(info->shape, shape);
    QCOMPARE(info->bytes, std::uint64_t(bytes.size()));
    QCOMPARE(info->elements() * std::int64_t(quire::kernels::dtype_size(dtype)),
             std::int64_t(bytes.size()));
    QVERIFY(same_bytes(file.data(*info), bytes));
    QVERIFY(same_bytes(file.data(*file.find("model.other")),
                       to_bytes(std::vector<std::uint8_t>{9, 8, 7})));
  }

  // Contiguous (other readers reject gaps), each tensor aligned to its element
  // size, largest elements first and insertion order among equals.
  void layoutIsContiguousAndAligned() {
    SafetensorsWriter writer;
    writer.add("u8", DType::U8, {3}, std::vector<std::byte>(3));
    writer.add("f16", DType::F16, {3}, std::vector<std::byte>(6));
    writer.add("f32", DType::F32, {2}, std::vector<std::byte>(8));
    writer.add("bf16", DType::BF16, {1}, std::vector<std::byte>(2));
    writer.add("i32", DType::I32, {1}, std::vector<std::byte>(4));
    QTemporaryDir dir;
    const auto path = path_of(dir) / "layout.safetensors";
    writer.write(path);

    const std::vector<std::byte> raw = read_bytes(path);
    const RawSafetensors parts = split_safetensors(raw);
    QCOMPARE(parts.header.size() % 8, std::size_t(0));
    const std::size_t json_end = parts.header.find_last_of('}') + 1;
    QVERIFY(parts.header.size() - json_end < 8);  // padding only, and only as much as needed
    QCOMPARE(parts.header.find_first_not_of(' ', json_end), std::string::npos);

    const SafetensorsFile file = SafetensorsFile::open(path);
    QCOMPARE(file.data_start() % 8, std::uint64_t(0));
    QStringList order;
    std::uint64_t next = file.data_start();
    for (const TensorInfo& info : file.tensors()) {
      order << QString::fromStdString(info.name);
      QCOMPARE(info.offset, next);
      QCOMPARE(info.offset % quire::kernels::dtype_size(info.dtype), std::uint64_t(0));
      next += info.bytes;
    }
    QCOMPARE(next, file.file_size());
    QCOMPARE(order, (QStringList{"f32", "i32", "f16", "bf16", "u8"}));
    QCOMPARE(writer.data_bytes(), std::uint64_t(23));
  }

  void metadataRoundTrips() {
    SafetensorsWriter writer;
    writer.set_metadata("format", "pt");
    writer.set_metadata("quire.note", "ünïcode and \"quotes\"\n");
    writer.add("x", DType::F32, {1}, to_bytes(std::vector<float>{1.0f}));
    QTemporaryDir dir;
    const auto path = path_of(dir) / "meta.safetensors";
    writer.write(path);
    const SafetensorsFile file = SafetensorsFile::open(path);
    QCOMPARE(file.metadata().size(), std::size_t(2));
    QCOMPARE(file.metadata().at("format"), std::string("pt"));
    QCOMPARE(file.metadata().at("quire.note"), std::string("ünïcode and \"quotes\"\n"));
  }

  void emptyWriterWritesAValidFile() {
    QTemporaryDir dir;
    const auto path = path_of(dir) / "none.safetensors";
    SafetensorsWriter().write(path);
    const SafetensorsFile file = SafetensorsFile::open(path);
    QVERIFY(file.tensors().empty());
    QCOMPARE(file.file_size(), std::uint64_t(16));  // length field + "{}" padded to 8
  }

  void rewritingReplacesTheFileAndLeavesNoTemporary() {
    QTemporaryDir dir;
    const auto path = path_of(dir) / "model.safetensors";
    SafetensorsWriter first;
    first.add("a", DType::I32, {1}, to_bytes(std::vector<std::int32_t>{1}));
    first.write(path);
    SafetensorsWriter second;
    second.add("b", DType::I32, {2}, to_bytes(std::vector<std::int32_t>{2, 3}));
    second.write(path);

    const SafetensorsFile file = SafetensorsFile::open(path);
    QVERIFY(file.find("a") == nullptr);
    QVERIFY(file.find("b") != nullptr);
    QVERIFY(!std::filesystem::exists(path.string() + ".tmp"));
  }

  void writeFailureNamesThePathAndTheReason() {
    QTemporaryDir dir;
    const auto path = path_of(dir) / "no-such-folder" / "x.safetensors";
    SafetensorsWriter writer;
    writer.add("x", DType::U8, {1}, std::vector<std::byte>(1));
    try {
      writer.write(path);
      QFAIL("no exception");
    } catch (const std::system_error& error) {
      const std::string message = error.what();
      QVERIFY2(message.find(path.string()) != std::string::npos, error.what());
      QVERIFY2(message.find(std::strerror(ENOENT)) != std::string::npos, error.what());
      QCOMPARE(error.code().value(), ENOENT);
    }
  }

  void writerRejectsInconsistentTensors() {
    SafetensorsWriter writer;
    writer.add("x", DType::F32, {2}, std::vector<std::byte>(8));
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument,
                             writer.add("y", DType::F32, {2}, std::vector<std::byte>(7)));
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument,
                             writer.add("x", DType::F32, {2}, std::vector<std::byte>(8)));
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument,
                             writer.add("__metadata__", DType::U8, {1}, std::vector<std::byte>(1)));
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument,
                             writer.add("z", DType::U8, {-1}, std::vector<std::byte>()));
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument,
                             writer.add("\xff", DType::U8, {1}, std::vector<std::byte>(1)));
    QVERIFY_THROWS_EXCEPTION(
        std::invalid_argument,
        writer.add("big", DType::F32, {1LL << 40, 1LL << 40}, std::vector<std::byte>()));
    QCOMPARE(writer.size(), std::size_t(1));
  }

  void dataRefusesAForeignTensorInfo() {
    QTemporaryDir dir;
    const auto path = path_of(dir) / "x.safetensors";
    SafetensorsWriter writer;
    writer.add("x", DType::U8, {4}, std::vector<std::byte>(4));
    writer.write(path);
    const SafetensorsFile file = SafetensorsFile::open(path);
    TensorInfo foreign = *file.find("x");
    foreign.offset = file.file_size() - 2;
    QVERIFY_THROWS_EXCEPTION(std::out_of_range, file.data(foreign));
    foreign.offset = std::numeric_limits<std::uint64_t>::max();
    QVERIFY_THROWS_EXCEPTION(std::out_of_range, file.data(foreign));
  }
};

QUIRE_TEST(SafetensorsRoundTripTest)
#include "test_safetensors_round_trip.moc"
