// Decoded pixels against PIL's: tests/tools/reference_image_preprocess.py
// decode writes PNG, JPEG, WebP, GIF and BMP files (grayscale, palette,
// transparent, EXIF-rotated, animated) and PIL's decoding of each as
// transformers loads images (exif_transpose, then convert_to_rgb: alpha over
// white). Qt and PIL link the same libpng, libjpeg-turbo and libwebp on
// Debian and read GIF and BMP exactly, so every file must decode to the
// same bytes.

#include <QDir>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>
#include <QTest>
#include <cstring>

#include "python_tool.h"
#include "quire/app/images/decode_image.h"
#include "test_main.h"

using quire::images::decode_image;
using quire::vision::RgbImage;

namespace {

QByteArray read_all(const QString& path) {
  QFile file(path);
  if (!file.open(QIODevice::ReadOnly)) return {};
  return file.readAll();
}

// Where two decodings first differ, or "" when they are equal.
QString first_difference(const RgbImage& actual, const QByteArray& expected, int width,
                         int height) {
  if (actual.width != width || actual.height != height)
    return QStringLiteral("%1x%2, PIL %3x%4")
        .arg(actual.width)
        .arg(actual.height)
        .arg(width)
        .arg(height);
  if (static_cast<std::size_t>(expected.size()) != actual.rgb.size())
    return QStringLiteral("PIL's file is short");
  for (std::size_t i = 0; i < actual.rgb.size(); ++i)
    if (actual.rgb[i] != static_cast<std::uint8_t>(expected[static_cast<qsizetype>(i)]))
      return QStringLiteral("x=%1 y=%2 channel %3: %4, PIL %5")
          .arg((i / 3) % static_cast<std::size_t>(width))
          .arg((i / 3) / static_cast<std::size_t>(width))
          .arg(i % 3)
          .arg(actual.rgb[i])
          .arg(static_cast<std::uint8_t>(expected[static_cast<qsizetype>(i)]));
  return {};
}

}  // namespace

class DecodeReferenceTest : public QObject {
  Q_OBJECT

 private:
  QTemporaryDir dir_;

 private slots:
  void initTestCase() {
    QVERIFY(dir_.isValid());
    const QString failure = quire::test::run_python_tool(
        QStringLiteral("reference_image_preprocess.py"), {QStringLiteral("decode"), dir_.path()},
        120000, QStringLiteral("python3-numpy and python3-pil"));
    QVERIFY2(failure.isEmpty(), qPrintable(failure));
  }

  void every_file_decodes_to_pils_pixels_data() {
    QTest::addColumn<QString>("name");
    QTest::addColumn<int>("width");
    QTest::addColumn<int>("height");
    const QByteArray manifest = read_all(dir_.filePath(QStringLiteral("decode.json")));
    QVERIFY2(!manifest.isEmpty(), "decode.json is missing");
    // decode.json is {"files": [{"name": ..., "width": ..., "height": ...}]}:
    // read with Qt's JSON to keep this suite on QtGui alone.
    const auto files =
        QJsonDocument::fromJson(manifest).object().value(QLatin1String("files")).toArray();
    for (const auto& entry : files) {
      const QJsonObject file = entry.toObject();
      const QString name = file.value(QLatin1String("name")).toString();
      QTest::newRow(qPrintable(name)) << name << file.value(QLatin1String("width")).toInt()
                                      << file.value(QLatin1String("height")).toInt();
    }
  }

  void every_file_decodes_to_pils_pixels() {
    QFETCH(QString, name);
    QFETCH(int, width);
    QFETCH(int, height);
    const QString path = dir_.filePath(QStringLiteral("files/") + name);
    const RgbImage image = decode_image(read_all(path));
    const QString difference =
        first_difference(image, read_all(path + QStringLiteral(".rgb")), width, height);
    QVERIFY2(difference.isEmpty(),
             qPrintable(name + QStringLiteral(" differs from PIL at ") + difference));
  }
};

QUIRE_TEST(DecodeReferenceTest)
#include "test_decode_reference.moc"
