// The reader of the gemma3-vision-* fixtures (vision_fixture.h): it parses
// every committed one, computes the images' pixels exactly as
// tests/tools/vision_fixture_pixels.py does (the expected values below are
// what that script printed), and names the field at fault in a broken file.

#include <QDir>
#include <QStringList>
#include <QTemporaryDir>
#include <QTest>
#include <algorithm>
#include <array>
#include <cstdint>
#include <fstream>
#include <numeric>
#include <stdexcept>
#include <string>

#include "test_main.h"
#include "vision_fixture.h"

using namespace Qt::StringLiterals;
using quire::test::read_vision_fixture;
using quire::test::vision_fixture_pixels;
using quire::test::VisionFixture;

namespace {

QString reference_dir() {
  return QStringLiteral(QUIRE_TEST_DATA_DIR "/reference");
}

QStringList vision_fixtures() {
  return QDir(reference_dir())
      .entryList({QStringLiteral("gemma3-vision-*.json")}, QDir::Files, QDir::Name);
}

// The error read_vision_fixture throws for `text`, or "" when it accepts it.
std::string error_for(const std::string& text) {
  QTemporaryDir dir;
  const std::string path = dir.filePath(QStringLiteral("broken.json")).toStdString();
  std::ofstream(path) << text;
  try {
    read_vision_fixture(path);
  } catch (const std::runtime_error& error) {
    return error.what();
  }
  return {};
}

std::string read_text(const QString& path) {
  std::ifstream file(path.toStdString());
  return {std::istreambuf_iterator<char>(file), std::istreambuf_iterator<char>()};
}

}  // namespace

class VisionFixtureTest : public QObject {
  Q_OBJECT

 private slots:
  // Values the Python formula printed, at the start, middle and end of a
  // fixture image for the first two phases, and of a full-size 3x896x896
  // image (flat indices past 2^21, where 32-bit products would overflow).
  void pixelsMatchThePython_data() {
    QTest::addColumn<int>("height");
    QTest::addColumn<qint64>("phase");
    QTest::addColumn<qint64>("index");
    QTest::addColumn<double>("expected");
    QTest::newRow("56 phase 0 first") << 56 << qint64{0} << qint64{0} << -0.623260498046875;
    QTest::newRow("56 phase 0 second") << 56 << qint64{0} << qint64{1} << 0.61279296875;
    QTest::newRow("56 phase 0 third") << 56 << qint64{0} << qint64{2} << -0.151153564453125;
    QTest::newRow("56 phase 0 middle") << 56 << qint64{0} << qint64{4703} << 0.53619384765625;
    QTest::newRow("56 phase 0 last") << 56 << qint64{0} << qint64{9407} << 0.93170166015625;
    QTest::newRow("56 phase 1 first") << 56 << qint64{1} << qint64{0} << -0.381591796875;
    QTest::newRow("56 phase 1 second") << 56 << qint64{1} << qint64{1} << 0.854461669921875;
    QTest::newRow("56 phase 1 third") << 56 << qint64{1} << qint64{2} << 0.09051513671875;
    QTest::newRow("56 phase 1 middle") << 56 << qint64{1} << qint64{4703} << 0.777862548828125;
    QTest::newRow("56 phase 1 last") << 56 << qint64{1} << qint64{9407} << -0.826629638671875;
    QTest::newRow("896 phase 3 middle") << 896 << qint64{3} << qint64{1234567} << 0.922088623046875;
    QTest::newRow("896 phase 3 last") << 896 << qint64{3} << qint64{2408447} << -0.634307861328125;
  }

  void pixelsMatchThePython() {
    QFETCH(int, height);
    QFETCH(qint64, phase);
    QFETCH(qint64, index);
    QFETCH(double, expected);
    const std::vector<float> pixels = vision_fixture_pixels({3, height, height}, phase);
    QCOMPARE(pixels.size(), std::size_t{3} * height * height);
    // Exact (QCOMPARE of doubles would be fuzzy): every value is a multiple
    // of 2^-15 that float32 holds.
    const double actual = pixels[static_cast<std::size_t>(index)];
    QVERIFY2(actual == expected, qPrintable(QString::number(actual, 'g', 17)));
  }

  // The sum of every value, exact in double (multiples of 2^-15), as the
  // Python printed it: a change anywhere in the tensor moves it.
  void wholeImagesSumAsInThePython_data() {
    QTest::addColumn<int>("height");
    QTest::addColumn<qint64>("phase");
    QTest::addColumn<double>("sum");
    QTest::newRow("56 phase 0") << 56 << qint64{0} << 0.9072265625;
    QTest::newRow("56 phase 1") << 56 << qint64{1} << -3.4736328125;
    QTest::newRow("896 phase 3") << 896 << qint64{3} << -38.25;
  }

  void wholeImagesSumAsInThePython() {
    QFETCH(int, height);
    QFETCH(qint64, phase);
    QFETCH(double, sum);
    const std::vector<float> pixels = vision_fixture_pixels({3, height, height}, phase);
    const double actual = std::accumulate(pixels.begin(), pixels.end(), 0.0);
    QVERIFY2(actual == sum, qPrintable(QString::number(actual, 'g', 17)));
  }

  void readsEveryCommittedFixture_data() {
    QTest::addColumn<QString>("file");
    const QStringList files = vision_fixtures();
    QVERIFY2(files.size() >= 2, "tests/data/reference holds fewer than two gemma3-vision fixtures");
    for (const QString& file : files)
      QTest::newRow(qPrintable(file)) << file;
  }

  void readsEveryCommittedFixture() {
    QFETCH(QString, file);
    const VisionFixture fixture =
        read_vision_fixture(QDir(reference_dir()).filePath(file).toStdString());
    QCOMPARE(QString::fromStdString(fixture.name) + u".json"_s, file);
    QVERIFY(!fixture.make_model.empty());
    QVERIFY(fixture.sha256.count("config.json") == 1);
    QVERIFY(!fixture.images.empty());
    for (std::size_t i = 0; i < fixture.images.size(); ++i) {
      const auto& image = fixture.images[i];
      QCOMPARE(image.phase, static_cast<std::int64_t>(i));
      QCOMPARE(image.pixels, vision_fixture_pixels(image.shape, image.phase));
      QCOMPARE(image.pixels.size(),
               static_cast<std::size_t>(image.shape[0]) * image.shape[1] * image.shape[2]);
      // Each image's boi, image tokens and eoi are among the kept rows.
      for (std::size_t p = image.first - 1; p <= image.first + image.count; ++p)
        QVERIFY(std::count(fixture.positions.begin(), fixture.positions.end(), p) == 1);
    }
    QCOMPARE(fixture.positions.back(), fixture.tokens.size() - 1);
    QCOMPARE(fixture.logits.size(), fixture.positions.size());
    QVERIFY(!fixture.greedy.empty());
  }

  // Both committed fixtures spell their images as the generator documents:
  // the first has one, the second two.
  void theCasesHoldTheirImages() {
    const VisionFixture one = read_vision_fixture(
        QDir(reference_dir()).filePath(u"gemma3-vision-fp16-window.json"_s).toStdString());
    QCOMPARE(one.images.size(), std::size_t{1});
    QCOMPARE(one.images[0].shape, (std::array<int, 3>{3, 56, 56}));
    QCOMPARE(one.images[0].count, std::size_t{4});
    const VisionFixture two =
        read_vision_fixture(QDir(reference_dir())
                                .filePath(u"gemma3-vision-new-layout-two-images.json"_s)
                                .toStdString());
    QCOMPARE(two.images.size(), std::size_t{2});
    QVERIFY(two.images[1].first > two.images[0].first + two.images[0].count);
  }

  void namesTheFieldAtFault_data() {
    QTest::addColumn<QString>("from");
    QTest::addColumn<QString>("to");
    QTest::addColumn<QString>("message");
    QTest::newRow("formula") << "* 40503"
                             << "* 40501"
                             << "images[0].pixels.formula is \"";
    QTest::newRow("shape") << "\"shape\":[3,"
                           << "\"shape\":["
                           << "images[0].pixels.shape";
    QTest::newRow("image run") << "\"first\":"
                               << "\"first\":1"
                               << "images[0]";
    QTest::newRow("no causal rows") << "\"logits_causal\""
                                    << "\"logits_other\""
                                    << "logits_causal is missing";
    QTest::newRow("not json") << "{"
                              << "["
                              << "is not a JSON object";
  }

  void namesTheFieldAtFault() {
    QFETCH(QString, from);
    QFETCH(QString, to);
    QFETCH(QString, message);
    std::string text =
        read_text(QDir(reference_dir()).filePath(u"gemma3-vision-fp16-window.json"_s));
    const std::string find = from.toStdString();
    const std::size_t at = text.find(find);
    QVERIFY(at != std::string::npos);
    text.replace(at, find.size(), to.toStdString());
    const std::string error = error_for(text);
    QVERIFY2(error.find(message.toStdString()) != std::string::npos, error.c_str());
  }
};

QUIRE_TEST(VisionFixtureTest)
#include "test_vision_fixture.moc"
