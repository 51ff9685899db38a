#include <fcntl.h>
#include <sys/stat.h>

#include <QTest>
#include <cstring>
#include <filesystem>
#include <string>

#include "disk_cache_test_support.h"
#include "quire/engine/model_error.h"
#include "test_main.h"

using namespace quire;
using namespace quire::test::disk_cache;

namespace {

std::vector<std::byte> bytes_of(const std::string& text) {
  std::vector<std::byte> bytes(text.size());
  std::memcpy(bytes.data(), text.data(), text.size());
  return bytes;
}

// A safetensors file with one F16 tensor of `values` elements, all `fill`.
std::vector<std::byte> safetensors(int values, std::uint8_t fill) {
  const std::string header = R"({"w":{"dtype":"F16","shape":[)" + std::to_string(values) +
                             R"(],"data_offsets":[0,)" + std::to_string(values * 2) + "]}}";
  std::vector<std::byte> file(8);
  for (int i = 0; i < 8; ++i)
    file[std::size_t(i)] = std::byte(std::uint8_t(header.size() >> (8 * i)));
  const auto json = bytes_of(header);
  file.insert(file.end(), json.begin(), json.end());
  file.insert(file.end(), std::size_t(values) * 2, std::byte{fill});
  return file;
}

void set_mtime(const std::filesystem::path& path, std::int64_t seconds) {
  const timespec times[2] = {{seconds, 0}, {seconds, 0}};
  QCOMPARE(::utimensat(AT_FDCWD, path.c_str(), times, 0), 0);
}

// A model folder: config.json, one weight file, a tokenizer.
std::filesystem::path make_model(const QTemporaryDir& dir) {
  const auto model = path_of(dir) / "model";
  std::filesystem::create_directory(model);
  write_file(model / "config.json", bytes_of(R"({"num_key_value_heads": 2})"));
  write_file(model / "model.safetensors", safetensors(64, 1));
  set_mtime(model / "model.safetensors", 1'700'000'000);
  write_file(model / "tokenizer.json", bytes_of(R"({"model": {}})"));
  return model;
}

}  // namespace

class ModelIdentityTest : public QObject {
  Q_OBJECT

 private slots:
  void theSameFilesGiveTheSameIdentity() {
    QTemporaryDir dir;
    const auto model = make_model(dir);
    const ModelIdentity identity = model_identity(model);
    QVERIFY(identity == model_identity(model));
    QCOMPARE(identity.hex().size(), std::size_t(32));
    // Files that do not make K/V change nothing.
    write_file(model / "README.md", bytes_of("notes"));
    write_file(model / "generation_config.json", bytes_of("{}"));
    QVERIFY(identity == model_identity(model));
  }

  void whatMakesTheBytesChangesIt_data() {
    QTest::addColumn<QString>("change");
    QTest::addRow("config.json") << "config";
    QTest::addRow("tokenizer") << "tokenizer";
    QTest::addRow("a new tokenizer file") << "vocab";
    QTest::addRow("weights rewritten, same shapes") << "weights";
    QTest::addRow("weights touched") << "mtime";
    QTest::addRow("a tensor's shape") << "shape";
    QTest::addRow("another shard") << "shard";
    QTest::addRow("engine settings") << "extra";
  }
  void whatMakesTheBytesChangesIt() {
    QFETCH(QString, change);
    QTemporaryDir dir;
    const auto model = make_model(dir);
    const ModelIdentity before = model_identity(model);
    std::string extra;
    if (change == "config") {
      write_file(model / "config.json", bytes_of(R"({"num_key_value_heads": 4})"));
    } else if (change == "tokenizer") {
      write_file(model / "tokenizer.json", bytes_of(R"({"model": {"x": 1}})"));
    } else if (change == "vocab") {
      write_file(model / "vocab.json", bytes_of("{}"));
    } else if (change == "weights") {
      write_file(model / "model.safetensors", safetensors(64, 2));
      set_mtime(model / "model.safetensors", 1'700'000'100);
    } else if (change == "mtime") {
      set_mtime(model / "model.safetensors", 1'700'000'001);
    } else if (change == "shape") {
      write_file(model / "model.safetensors", safetensors(32, 1));
      set_mtime(model / "model.safetensors", 1'700'000'000);
    } else if (change == "shard") {
      write_file(model / "extra.safetensors", safetensors(8, 1));
    } else {
      extra = "rope override";
    }
    QVERIFY(model_identity(model, extra) != before);
  }

  void anIncompleteFolderIsNamed() {
    QTemporaryDir dir;
    const auto model = make_model(dir);
    std::filesystem::remove(model / "config.json");
    QVERIFY_THROWS_EXCEPTION(engine::ModelError, model_identity(model));

    const auto bare = make_model(dir);
    std::filesystem::remove(bare / "model.safetensors");
    try {
      model_identity(bare);
      QFAIL("a folder without weights has an identity");
    } catch (const engine::ModelError& error) {
      QCOMPARE(
          std::string(error.what()),
          bare.string() + ": no *.safetensors files — this is not a model folder Quire can load");
    }

    write_file(bare / "model.safetensors",
               bytes_of(std::string("\xff\xff\x00\x00\x00\x00\x00\x00{}", 10)));
    try {
      model_identity(bare);
      QFAIL("a cut header was taken");
    } catch (const engine::ModelError& error) {
      QCOMPARE(std::string(error.what()),
               (bare / "model.safetensors").string() +
                   ": the safetensors header claims 65535 bytes, more than the file holds — the "
                   "file is damaged; download it again");
    }
  }
};

QUIRE_TEST(ModelIdentityTest)
#include "test_model_identity.moc"
