#include <sys/stat.h>

#include <QTemporaryDir>
#include <QTest>
#include <cerrno>
#include <cstring>

#include "io_test_helpers.h"
#include "quire/engine/io/mapped_file.h"
#include "test_main.h"

using quire::engine::io::MappedFile;
using namespace quire::test::io;

class MappedFileTest : public QObject {
  Q_OBJECT

 private slots:
  void mapsTheWholeFile() {
    QTemporaryDir dir;
    const auto path = path_of(dir) / "bytes.bin";
    std::vector<std::byte> content(10000);
    for (std::size_t i = 0; i < content.size(); ++i)
      content[i] = static_cast<std::byte>(i * 7 + 3);
    write_bytes(path, content);

    const MappedFile file = MappedFile::open(path);
    QCOMPARE(file.path(), path);
    QCOMPARE(file.size(), std::uint64_t(content.size()));
    QCOMPARE(file.bytes().size(), content.size());
    QVERIFY(std::memcmp(file.bytes().data(), content.data(), content.size()) == 0);
  }

  void emptyFileMapsToAnEmptySpan() {
    QTemporaryDir dir;
    const auto path = path_of(dir) / "empty.bin";
    write_bytes(path, {});
    const MappedFile file = MappedFile::open(path);
    QCOMPARE(file.size(), std::uint64_t(0));
    QVERIFY(file.bytes().empty());
  }

  void missingFileNamesThePathAndTheReason() {
    QTemporaryDir dir;
    const auto path = path_of(dir) / "absent.safetensors";
    QUIRE_EXPECT_MODEL_ERROR(MappedFile::open(path), path.string(), std::strerror(ENOENT));
  }

  void directoryIsRejected() {
    QTemporaryDir dir;
    QUIRE_EXPECT_MODEL_ERROR(MappedFile::open(path_of(dir)), "is not a regular file");
  }

  // Opening a FIFO for reading would wait for a writer forever without O_NONBLOCK.
  void pipeIsRejectedWithoutWaiting() {
    QTemporaryDir dir;
    const auto path = path_of(dir) / "pipe";
    QCOMPARE(::mkfifo(path.c_str(), 0600), 0);
    QUIRE_EXPECT_MODEL_ERROR(MappedFile::open(path), path.string(), "is not a regular file");
  }

  void moveTransfersTheMapping() {
    QTemporaryDir dir;
    const auto path = path_of(dir) / "bytes.bin";
    const std::vector<std::byte> content(64, std::byte{0x5a});
    write_bytes(path, content);

    MappedFile first = MappedFile::open(path);
    const std::byte* base = first.bytes().data();
    MappedFile second(std::move(first));
    QCOMPARE(second.bytes().data(), base);
    QCOMPARE(second.size(), std::uint64_t(64));
    QVERIFY(first.bytes().empty());  // NOLINT(bugprone-use-after-move): moved-from is empty

    MappedFile third;
    third = std::move(second);
    QCOMPARE(third.bytes().data(), base);
    QCOMPARE(third.path(), path);
    QVERIFY(second.bytes().empty());  // NOLINT(bugprone-use-after-move)
    QCOMPARE(third.bytes()[63], std::byte{0x5a});

    // Assigning over a live mapping unmaps the old one first.
    third = MappedFile::open(path);
    QCOMPARE(third.size(), std::uint64_t(64));
  }
};

QUIRE_TEST(MappedFileTest)
#include "test_mapped_file.moc"
