#include <QRandomGenerator>
#include <QTemporaryDir>
#include <QTest>
#include <nlohmann/json.hpp>

#include "io_test_helpers.h"
#include "quire/engine/io/safetensors_file.h"
#include "quire/engine/io/safetensors_writer.h"
#include "test_main.h"

using quire::engine::io::SafetensorsFile;
using quire::engine::io::SafetensorsWriter;
using quire::kernels::DType;
using namespace quire::test::io;

namespace {

// A good file to damage: "a" F32 [2, 3] at data bytes [0, 24), "c" I32 [2] at
// [24, 32), "b" F16 [4] at [32, 40) (larger elements first), metadata format=pt.
std::vector<std::byte> good_file(const std::filesystem::path& dir) {
  SafetensorsWriter writer;
  writer.set_metadata("format", "pt");
  writer.add("a", DType::F32, {2, 3}, to_bytes(std::vector<float>{1, 2, 3, 4, 5, 6}));
  writer.add("b", DType::F16, {4}, to_bytes(std::vector<std::uint16_t>{1, 2, 3, 4}));
  writer.add("c", DType::I32, {2}, to_bytes(std::vector<std::int32_t>{7, 8}));
  const auto path = dir / "good.safetensors";
  writer.write(path);
  return read_bytes(path);
}

std::string nested_arrays(int depth) {
  return std::string(static_cast<std::size_t>(depth), '[') +
         std::string(static_cast<std::size_t>(depth), ']');
}

}  // namespace

class SafetensorsDamageTest : public QObject {
  Q_OBJECT

  // One way to break the good file, at most one of: an edit of the header JSON
  // at a JSON pointer (empty value: remove the key), a replacement header text,
  // a forged length field, bytes cut off the end or a file cut to a length.
  static void row(const char* name, const char* pointer, const char* value, QByteArray raw,
                  std::optional<quint64> length, qint64 drop, qint64 keep, const char* expected) {
    QTest::newRow(name) << QString(pointer) << QByteArray(value) << raw << length.has_value()
                        << length.value_or(0) << drop << keep << QString(expected);
  }
  static void edit(const char* name, const char* pointer, const char* value, const char* expected) {
    row(name, pointer, value, {}, std::nullopt, 0, -1, expected);
  }
  static void raw(const char* name, QByteArray header, const char* expected) {
    row(name, "", "", header, std::nullopt, 0, -1, expected);
  }
  static void length(const char* name, quint64 value, const char* expected) {
    row(name, "", "", {}, value, 0, -1, expected);
  }
  static void cut(const char* name, qint64 drop, qint64 keep, const char* expected) {
    row(name, "", "", {}, std::nullopt, drop, keep, expected);
  }

 private slots:
  void goodFileOpens() {
    QTemporaryDir dir;
    const auto path = path_of(dir) / "good.safetensors";
    good_file(path_of(dir));
    const SafetensorsFile file = SafetensorsFile::open(path);
    QCOMPARE(file.tensors().size(), std::size_t(3));
    QCOMPARE(file.file_size() - file.data_start(), std::uint64_t(40));
  }

  void rejectsDamage_data() {
    QTest::addColumn<QString>("pointer");
    QTest::addColumn<QByteArray>("value");
    QTest::addColumn<QByteArray>("rawHeader");
    QTest::addColumn<bool>("forgeLength");
    QTest::addColumn<quint64>("lengthField");
    QTest::addColumn<qint64>("dropBytes");
    QTest::addColumn<qint64>("keepBytes");
    QTest::addColumn<QString>("expected");

    cut("empty file", 0, 0, "the file is 0 bytes long, too short for the 8-byte header length");
    cut("shorter than the length field", 0, 5, "the file is 5 bytes long");
    cut("truncated data", 8, -1,
        "run past the end of the 32-byte data area; the file is truncated");
    length("header length past the end", 912345678, "header length 912345678 runs past the end of");
    length("header length absurd", 0xffffffffffffffffULL,
           "header length 18446744073709551615 runs past the end of");
    length("header length 0", 0, "header length is 0");
    raw("invalid JSON", R"({"a": {"dtype": "F32",)", "the header is not valid JSON");
    raw("not UTF-8", "{\"a\xff\": 1}", "the header is not valid JSON");
    raw("JSON not an object", "[1, 2, 3]", "the header is a JSON array where a JSON object");
    raw("nested too deep", QByteArray::fromStdString(nested_arrays(5000)),
        "nests JSON more than 16 levels deep");
    raw("tensor listed twice",
        R"({"a":{"dtype":"U8","shape":[1],"data_offsets":[0,1]},)"
        R"("a":{"dtype":"U8","shape":[1],"data_offsets":[1,2]}})",
        R"(has the key "a" twice)");
    edit("entry not an object", "/a", "5", R"(tensor "a" is a JSON number in the header)");
    edit("missing dtype", "/a/dtype", "", R"(tensor "a" has no "dtype")");
    edit("missing shape", "/b/shape", "", R"(tensor "b" has no "shape")");
    edit("missing data_offsets", "/c/data_offsets", "", R"(tensor "c" has no "data_offsets")");
    edit("dtype not a string", "/a/dtype", "7", R"("dtype" that is a JSON number)");
    edit("unknown dtype", "/a/dtype", R"("F64")", R"(tensor "a" has unsupported dtype "F64")");
    edit("lower-case dtype", "/a/dtype", R"("f32")", R"(unsupported dtype "f32")");
    edit("shape not an array", "/a/shape", R"("2x3")", R"("shape" that is a JSON string)");
    edit("negative shape", "/a/shape/0", "-2", "negative dimension 0 of its shape (-2)");
    edit("fractional shape", "/a/shape/1", "1.5", "dimension 1 of its shape 1.5");
    edit("dimension beyond int64", "/a/shape", "[18446744073709551615]", "which is too large");
    edit("shape product overflows", "/a/shape", "[4294967296, 4294967296]",
         "needs more than 2^64 bytes");
    edit("offsets not a pair", "/a/data_offsets", "[0]", "where two byte offsets");
    edit("negative offset", "/a/data_offsets/0", "-8", "[-8,24] where two byte offsets");
    edit("offsets out of range", "/b/data_offsets", "[32, 4000]",
         "[32, 4000] that run past the end of the 40-byte data area");
    edit("offset beyond uint64 range", "/b/data_offsets/1", "1e30", "where two byte offsets");
    edit("begin after end", "/a/data_offsets", "[24, 0]", "[24, 0] whose begin lies after its end");
    edit("shape does not match bytes", "/a/shape", "[3, 3]",
         "is F32 [3, 3], which needs 36 bytes, but its data_offsets [0, 24] hold 24 bytes");
    edit("dtype does not match bytes", "/a/dtype", R"("F16")", "is F16 [2, 3], which needs 12");
    edit("overlapping tensors", "/b/data_offsets", "[16, 24]",
         R"(tensors "a" (bytes [0, 24)) and "b" (bytes [16, 24)) overlap)");
    edit("identical ranges", "/b", R"({"dtype":"F32","shape":[2],"data_offsets":[24,32]})",
         "overlap in the data area");
    edit("metadata not an object", "/__metadata__", R"(["pt"])",
         R"("__metadata__" is a JSON array where an object of strings)");
    edit("metadata value not a string", "/__metadata__/format", "1",
         R"("__metadata__" entry "format" is a JSON number)");
  }

  void rejectsDamage() {
    QFETCH(QString, pointer);
    QFETCH(QByteArray, value);
    QFETCH(QByteArray, rawHeader);
    QFETCH(bool, forgeLength);
    QFETCH(quint64, lengthField);
    QFETCH(qint64, dropBytes);
    QFETCH(qint64, keepBytes);
    QFETCH(QString, expected);

    QTemporaryDir dir;
    const RawSafetensors parts = split_safetensors(good_file(path_of(dir)));
    std::string header = parts.header;
    if (!rawHeader.isEmpty()) {
      header = rawHeader.toStdString();
    } else if (!pointer.isEmpty()) {
      nlohmann::json json = nlohmann::json::parse(header);
      const nlohmann::json::json_pointer at(pointer.toStdString());
      if (value.isEmpty()) {
        json.at(at.parent_pointer()).erase(at.back());
      } else {
        json[at] = nlohmann::json::parse(value.toStdString());
      }
      header = json.dump();
    }
    std::vector<std::byte> bytes = join_safetensors(
        header, parts.data, forgeLength ? std::optional<std::uint64_t>(lengthField) : std::nullopt);
    bytes.resize(bytes.size() - static_cast<std::size_t>(dropBytes));
    if (keepBytes >= 0) bytes.resize(static_cast<std::size_t>(keepBytes));

    const auto path = path_of(dir) / "damaged.safetensors";
    write_bytes(path, bytes);
    QUIRE_EXPECT_MODEL_ERROR(SafetensorsFile::open(path), expected.toStdString(), path.string());
  }

  // A length within a (sparse) file that is big enough, but beyond any real header.
  void headerLongerThanTheLimit() {
    QTemporaryDir dir;
    const auto path = path_of(dir) / "huge.safetensors";
    const std::uint64_t length = SafetensorsFile::kMaxHeaderBytes + 1;
    write_bytes(path, join_safetensors("", {}, length));
    std::filesystem::resize_file(path, length + 64);
    QUIRE_EXPECT_MODEL_ERROR(SafetensorsFile::open(path),
                             "header length 100000001 is larger than the 100000000-byte limit");
  }

  // Random damage must end in a clean open or a ModelError; AddressSanitizer
  // and UBSan catch any out-of-bounds read or overflow on the way.
  void randomDamageNeverCrashes() {
    QTemporaryDir dir;
    const std::vector<std::byte> good = good_file(path_of(dir));
    const auto path = path_of(dir) / "fuzzed.safetensors";
    QRandomGenerator random(20240611);
    int opened = 0;
    int rejected = 0;
    for (int round = 0; round < 1500; ++round) {
      std::vector<std::byte> bytes = good;
      const int edits = 1 + random.bounded(3);
      for (int e = 0; e < edits; ++e) {
        const auto at = static_cast<std::size_t>(random.bounded(static_cast<int>(bytes.size())));
        const auto c = std::to_integer<char>(bytes[at]);
        if (c >= '0' && c <= '9') {
          bytes[at] = static_cast<std::byte>('0' + random.bounded(10));  // a plausible number
        } else {
          bytes[at] = static_cast<std::byte>(random.bounded(256));
        }
      }
      if (random.bounded(8) == 0) bytes.resize(static_cast<std::size_t>(random.bounded(64)));
      write_bytes(path, bytes);
      if (model_error_of([&] { SafetensorsFile::open(path); })) {
        ++rejected;
      } else {
        ++opened;
      }
    }
    QVERIFY(rejected > 0);
    qInfo("random damage: %d files opened, %d rejected", opened, rejected);
  }
};

QUIRE_TEST(SafetensorsDamageTest)
#include "test_safetensors_damage.moc"
