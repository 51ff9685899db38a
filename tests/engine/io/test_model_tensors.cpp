#include <QFile>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>
#include <QTest>
#include <nlohmann/json.hpp>

#include "io_test_helpers.h"
#include "quire/engine/io/model_tensors.h"
#include "quire/engine/io/safetensors_writer.h"
#include "test_main.h"

using quire::engine::io::ModelTensors;
using quire::engine::io::SafetensorsFile;
using quire::engine::io::SafetensorsWriter;
using quire::kernels::DType;
using namespace quire::test::io;

namespace {

// Seven tensors of a tiny two-layer model, each filled with a pattern of its own.
SafetensorsWriter tiny_model() {
  SafetensorsWriter writer;
  writer.set_metadata("format", "pt");
  int seed = 1;
  const auto add = [&](const std::string& name, DType dtype, std::vector<std::int64_t> shape) {
    std::int64_t elements = 1;
    for (const std::int64_t dim : shape)
      elements *= dim;
    std::vector<std::byte> bytes(static_cast<std::size_t>(elements) *
                                 quire::kernels::dtype_size(dtype));
    for (std::size_t i = 0; i < bytes.size(); ++i)
      bytes[i] = static_cast<std::byte>(i * 31 + static_cast<std::size_t>(seed) * 17);
    ++seed;
    writer.add(name, dtype, std::move(shape), std::move(bytes));
  };
  add("model.embed_tokens.weight", DType::F16, {32, 16});
  add("model.layers.0.self_attn.q_proj.weight", DType::F16, {16, 16});
  add("model.layers.0.mlp.up_proj.q_weight", DType::I32, {4, 24});
  add("model.layers.0.mlp.up_proj.q_groups", DType::I16, {2});
  add("model.layers.1.self_attn.q_proj.weight", DType::BF16, {16, 16});
  add("model.norm.weight", DType::F32, {16});
  add("lm_head.weight", DType::F16, {32, 16});
  return writer;
}

// The same tensors read from the writer's own single file, for comparison.
void expect_same_tensors(const ModelTensors& model, const SafetensorsFile& reference) {
  QCOMPARE(model.size(), reference.tensors().size());
  std::uint64_t total = 0;
  for (const auto& info : reference.tensors()) {
    const auto located = model.find(info.name);
    QVERIFY2(located.has_value(), info.name.c_str());
    QCOMPARE(located->info->dtype, info.dtype);
    QCOMPARE(located->info->shape, info.shape);
    const auto expected = reference.data(info);
    const auto actual = model.data(info.name);
    QCOMPARE(actual.size(), expected.size());
    QVERIFY(std::equal(actual.begin(), actual.end(), expected.begin()));
    total += info.bytes;
  }
  QCOMPARE(model.total_bytes(), total);
}

void edit_index(const std::filesystem::path& dir, const std::function<void(nlohmann::json&)>& f) {
  const auto path = dir / ModelTensors::kIndexFileName;
  const std::vector<std::byte> bytes = read_bytes(path);
  nlohmann::json index =
      nlohmann::json::parse(reinterpret_cast<const char*>(bytes.data()),
                            reinterpret_cast<const char*>(bytes.data()) + bytes.size());
  f(index);
  const std::string text = index.dump();
  write_bytes(path, std::as_bytes(std::span(text.data(), text.size())));
}

void write_one(const std::filesystem::path& path, const std::string& name) {
  SafetensorsWriter writer;
  writer.add(name, DType::F32, {1}, to_bytes(std::vector<float>{1.0f}));
  writer.write(path);
}

}  // namespace

class ModelTensorsTest : public QObject {
  Q_OBJECT

 private slots:
  void readsASingleFile() {
    QTemporaryDir dir;
    tiny_model().write(path_of(dir) / "model.safetensors");
    const ModelTensors model = ModelTensors::open(path_of(dir));
    QCOMPARE(model.files().size(), std::size_t(1));
    QCOMPARE(model.directory(), path_of(dir));
    QVERIFY(model.contains("lm_head.weight"));
    QVERIFY(!model.contains("lm_head.bias"));
    QVERIFY(!model.find("lm_head.bias").has_value());
    const std::vector<std::string_view> names = model.names();
    QCOMPARE(names.size(), std::size_t(7));
    QVERIFY(std::is_sorted(names.begin(), names.end()));
    QCOMPARE(names.front(), std::string_view("lm_head.weight"));
    expect_same_tensors(model, model.files().front());
  }

  void readsShardsThroughTheIndex_data() {
    QTest::addColumn<int>("shards");
    for (const int shards : {1, 2, 3, 7})
      QTest::addRow("%d shards", shards) << shards;
  }

  void readsShardsThroughTheIndex() {
    QFETCH(int, shards);
    QTemporaryDir single;
    QTemporaryDir sharded;
    const SafetensorsWriter writer = tiny_model();
    writer.write(path_of(single) / "model.safetensors");
    const auto paths = writer.write_sharded(path_of(sharded), shards);

    QCOMPARE(int(paths.size()), shards);
    const std::string last = "-of-" + QString::number(shards).rightJustified(5, '0').toStdString();
    QCOMPARE(paths.front().filename().string(), "model-00001" + last + ".safetensors");
    for (const auto& path : paths) {
      QVERIFY(std::filesystem::exists(path));
      QVERIFY(!SafetensorsFile::open(path).tensors().empty());
    }

    QFile file(QString::fromStdString((path_of(sharded) / ModelTensors::kIndexFileName).string()));
    QVERIFY(file.open(QIODevice::ReadOnly));
    const QJsonObject index = QJsonDocument::fromJson(file.readAll()).object();
    QCOMPARE(index[u"metadata"][u"total_size"].toInteger(), qint64(writer.data_bytes()));
    QCOMPARE(index[u"weight_map"].toObject().size(), 7);

    const ModelTensors model = ModelTensors::open(path_of(sharded));
    QCOMPARE(int(model.files().size()), shards);
    for (const auto& shard : model.files())
      QCOMPARE(shard.metadata().at("format"), std::string("pt"));
    expect_same_tensors(model, SafetensorsFile::open(path_of(single) / "model.safetensors"));
    QCOMPARE(model.total_bytes(), writer.data_bytes());
  }

  // EXL2 conversions write numbered shards without an index.
  void readsEverySafetensorsFileWithoutAnIndex() {
    QTemporaryDir dir;
    write_one(path_of(dir) / "output-00002-of-00002.safetensors", "b");
    write_one(path_of(dir) / "output-00001-of-00002.safetensors", "a");
    write_bytes(path_of(dir) / "notes.txt", std::vector<std::byte>(3));
    const ModelTensors model = ModelTensors::open(path_of(dir));
    QCOMPARE(model.files().size(), std::size_t(2));
    QCOMPARE(model.files()[0].path().filename().string(),
             std::string("output-00001-of-00002.safetensors"));
    QCOMPARE(model.find("b")->file, &model.files()[1]);
  }

  void rejectsBrokenDirectories_data() {
    QTest::addColumn<QString>("damage");
    QTest::addColumn<QString>("expected");
    QTest::newRow("empty directory") << "empty"
                                     << "holds no safetensors files";
    QTest::newRow("not a directory") << "file"
                                     << "is not a directory";
    QTest::newRow("index names a missing file")
        << "delete shard"
        << R"(names "model-00002-of-00002.safetensors" for)";
    QTest::newRow("index names a tensor absent from its file")
        << "ghost tensor"
        << R"(holds tensor "ghost.weight", but it does not)";
    QTest::newRow("index points a tensor at the wrong file")
        << "swap file"
        << R"(holds tensor "model.norm.weight", but it does not)";
    QTest::newRow("index leaves the directory")
        << "escape"
        << R"(in "../model.safetensors", which is not a file name)";
    QTest::newRow("index not JSON") << "garble index"
                                    << "the index is not valid JSON";
    QTest::newRow("index without weight_map") << "no weight_map"
                                              << R"(no "weight_map" object)";
    QTest::newRow("duplicate tensor across shards") << "duplicate"
                                                    << R"("a" is in both)";
    QTest::newRow("duplicate tensor beside an index")
        << "duplicate beside index"
        << "is in both extra.safetensors and model-00001";
    QTest::newRow("damaged shard") << "damage shard"
                                   << "header length 999999 runs past the end";
  }

  void rejectsBrokenDirectories() {
    QFETCH(QString, damage);
    QFETCH(QString, expected);
    QTemporaryDir temp;
    const auto dir = path_of(temp);
    const auto shard = [&](int i) {
      return dir / ("model-0000" + std::to_string(i) + "-of-00002.safetensors");
    };
    auto opened = dir;
    if (damage == "file") {
      opened = dir / "model.safetensors";
      write_one(opened, "x");
    } else if (damage == "duplicate") {
      write_one(dir / "one.safetensors", "a");
      write_one(dir / "two.safetensors", "a");
    } else if (damage != "empty") {
      tiny_model().write_sharded(dir, 2);
      if (damage == "delete shard") std::filesystem::remove(shard(2));
      if (damage == "ghost tensor") {
        edit_index(dir, [](auto& j) { j["weight_map"]["ghost.weight"] = shard_name(1); });
      }
      if (damage == "swap file") {
        edit_index(dir, [](auto& j) { j["weight_map"]["model.norm.weight"] = shard_name(1); });
      }
      if (damage == "escape") {
        edit_index(dir,
                   [](auto& j) { j["weight_map"]["lm_head.weight"] = "../model.safetensors"; });
      }
      if (damage == "no weight_map") edit_index(dir, [](auto& j) { j.erase("weight_map"); });
      if (damage == "garble index") {
        write_bytes(dir / ModelTensors::kIndexFileName, std::vector<std::byte>(4, std::byte{'{'}));
      }
      if (damage == "duplicate beside index") {
        // Not in the index for this shard, but held by it as well.
        SafetensorsWriter writer = tiny_model();
        writer.write(dir / "extra.safetensors");
        edit_index(dir,
                   [](auto& j) { j["weight_map"]["model.norm.weight"] = "extra.safetensors"; });
      }
      if (damage == "damage shard") {
        std::vector<std::byte> bytes = read_bytes(shard(1));
        bytes[0] = std::byte{0x3f};  // 999999 = 0x0f423f
        bytes[1] = std::byte{0x42};
        bytes[2] = std::byte{0x0f};
        write_bytes(shard(1), bytes);
      }
    }
    const std::optional<std::string> message = model_error_of([&] { ModelTensors::open(opened); });
    QVERIFY2(message.has_value(), "no ModelError");
    QVERIFY2(message->find(expected.toStdString()) != std::string::npos, message->c_str());
  }

  void missingTensorNamesItAndTheDirectory() {
    QTemporaryDir dir;
    tiny_model().write(path_of(dir) / "model.safetensors");
    const ModelTensors model = ModelTensors::open(path_of(dir));
    QUIRE_EXPECT_MODEL_ERROR(model.data("model.layers.9.mlp.down_proj.weight"),
                             path_of(dir).string() + ": tensor model.layers.9.mlp.down_proj.weight",
                             "is missing from the model files");
  }

  void requireChecksDtypeAndShape() {
    QTemporaryDir dir;
    tiny_model().write(path_of(dir) / "model.safetensors");
    const ModelTensors model = ModelTensors::open(path_of(dir));
    const std::string q = "model.layers.0.self_attn.q_proj.weight";
    const auto located = model.require(q, {DType::F16, DType::BF16}, {16, 16});
    QCOMPARE(located.info->name, q);
    model.require("model.layers.0.mlp.up_proj.q_weight", {DType::I32}, {ModelTensors::kAnyDim, 24});

    const std::string file = (path_of(dir) / "model.safetensors").string();
    QUIRE_EXPECT_MODEL_ERROR(model.require(q, {DType::F16}, {16, 32}),
                             file + ": " + q +
                                 " has shape [16, 16] where [16, 32] is needed; the model files do "
                                 "not match config.json");
    QUIRE_EXPECT_MODEL_ERROR(model.require(q, {DType::F16}, {16}), "where [16] is needed");
    QUIRE_EXPECT_MODEL_ERROR(
        model.require("model.layers.0.mlp.up_proj.q_weight", {DType::F16, DType::BF16}, {4, 24}),
        "has dtype I32 where F16 or BF16 is needed");
    QUIRE_EXPECT_MODEL_ERROR(model.require("nope", {DType::F16}, {1}), "tensor nope is missing");
  }

  // Lookups keep working after the model (and its files) moved.
  void movedModelKeepsItsLookups() {
    QTemporaryDir dir;
    tiny_model().write_sharded(path_of(dir), 3);
    ModelTensors first = ModelTensors::open(path_of(dir));
    const auto before = first.data("model.norm.weight");
    const ModelTensors moved(std::move(first));
    QCOMPARE(moved.data("model.norm.weight").data(), before.data());
    QCOMPARE(moved.names().size(), std::size_t(7));
  }

 private:
  static std::string shard_name(int i) {
    return "model-0000" + std::to_string(i) + "-of-00002.safetensors";
  }
};

QUIRE_TEST(ModelTensorsTest)
#include "test_model_tensors.moc"
