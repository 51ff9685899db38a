// Probing an image on attach: the formats a chat takes are accepted with the
// size they are shown at; empty, oversized, unsupported, damaged, cut-off
// and bomb files are refused, each with its own message naming the file.
// Thumbnails keep the aspect and the EXIF orientation.

#include <QBuffer>
#include <QFile>
#include <QTest>

#include "quire/app/attachments/image_probe.h"
#include "quire/app/attachments/image_views.h"
#include "test_main.h"

using namespace quire::attachments;

namespace {

QByteArray image_file(const QString& name) {
  QFile file(QStringLiteral(QUIRE_TEST_DATA_DIR "/images/") + name);
  if (!file.open(QIODevice::ReadOnly)) qFatal("missing test image %s", qPrintable(name));
  return file.readAll();
}

}  // namespace

class ImageProbeTest : public QObject {
  Q_OBJECT

 private slots:
  void acceptsTheFormatsAChatTakes_data() {
    QTest::addColumn<QString>("file");
    QTest::addColumn<QString>("mime");
    QTest::addColumn<int>("width");
    QTest::addColumn<int>("height");
    QTest::newRow("png") << "red-blue-6x4.png"
                         << "image/png" << 6 << 4;
    // Stored 16×8, shown 8×16: the size is the shown one.
    QTest::newRow("jpeg, rotated") << "rotated-16x8-orientation6.jpg"
                                   << "image/jpeg" << 8 << 16;
    QTest::newRow("gif") << "green-5x7.gif"
                         << "image/gif" << 5 << 7;
    QTest::newRow("bmp") << "tiny-3x2.bmp"
                         << "image/bmp" << 3 << 2;
  }

  void acceptsTheFormatsAChatTakes() {
    QFETCH(QString, file);
    QFETCH(QString, mime);
    QFETCH(int, width);
    QFETCH(int, height);
    const QByteArray bytes = image_file(file);
    const ProbeResult result = probe_image(bytes, file);
    QVERIFY2(result.image, qPrintable(result.error));
    QCOMPARE(result.error, QString());
    QCOMPARE(result.image->bytes, bytes);  // kept as it came, never re-encoded
    QCOMPARE(result.image->mime_type, mime);
    QCOMPARE(result.image->width, width);
    QCOMPARE(result.image->height, height);
  }

  void refusesWithAMessageForEachProblem_data() {
    QTest::addColumn<QByteArray>("bytes");
    QTest::addColumn<QString>("error");
    QTest::newRow("empty") << QByteArray() << QStringLiteral("“x” is empty.");
    QTest::newRow("text") << QByteArray("Dear diary, today I attached a letter.")
                          << QStringLiteral(
                                 "“x” is not an image Quire can attach; it takes PNG, "
                                 "JPEG, WebP, GIF and BMP.");
    QTest::newRow("icon") << image_file(QStringLiteral("icon-16.ico"))
                          << QStringLiteral(
                                 "“x” is a ICO image; images can be attached as PNG, "
                                 "JPEG, WebP, GIF and BMP. Save it in one of those "
                                 "formats first.");
    QTest::newRow("bomb") << image_file(QStringLiteral("bomb-100000x100000.png"))
                          << QStringLiteral(
                                 "“x” is 100000 × 100000 pixels (10000 megapixels); an "
                                 "image can have at most 50 megapixels. Scale it down "
                                 "first.");
    QTest::newRow("truncated png") << image_file(QStringLiteral("truncated.png"))
                                   << QStringLiteral("“x” could not be read as a PNG image (");
    QTest::newRow("corrupt png") << image_file(QStringLiteral("corrupt.png"))
                                 << QStringLiteral("“x” could not be read as a PNG image (");
    QTest::newRow("truncated jpeg") << image_file(QStringLiteral("truncated.jpg"))
                                    << QStringLiteral("“x” could not be read as a JPEG image (");
  }

  void refusesWithAMessageForEachProblem() {
    QFETCH(QByteArray, bytes);
    QFETCH(QString, error);
    const ProbeResult result = probe_image(bytes, QStringLiteral("x"));
    QVERIFY(!result.image);
    if (error.endsWith(QLatin1Char('('))) {
      // The reader's own words follow; what the user is told to do ends it.
      QVERIFY2(result.error.startsWith(error), qPrintable(result.error));
      QVERIFY2(result.error.endsWith(QStringLiteral(
                   "). The file is damaged or cut short; save or download it again.")),
               qPrintable(result.error));
    } else {
      QCOMPARE(result.error, error);
    }
  }

  void refusesAFileOverTheByteLimit() {
    AttachLimits limits;
    limits.max_bytes = 50;
    const ProbeResult result = probe_image(image_file(QStringLiteral("red-blue-6x4.png")),
                                           QStringLiteral("flag.png"), limits);
    QVERIFY(!result.image);
    QCOMPARE(result.error, QStringLiteral("“flag.png” is 86 bytes; an image can be at most 50 "
                                          "bytes. Scale it down or save it as JPEG first."));
  }

  // 36 megapixels decode to 144 MB, past Qt's default allowance of 128 MB:
  // within the pixel limit, such a photo is attached.
  void aLargePhotoWithinTheLimitIsAccepted() {
    QCOMPARE(allocation_limit_mb(AttachLimits{}), 382);  // 50 MP at 8 bytes a pixel
    QByteArray bytes;
    {
      QImage large(6000, 6000, QImage::Format_RGB32);
      large.fill(QColor(90, 120, 150));
      QBuffer buffer(&bytes);
      buffer.open(QIODevice::WriteOnly);
      QVERIFY(large.save(&buffer, "PNG"));
    }
    const ProbeResult result = probe_image(bytes, QStringLiteral("large.png"));
    QVERIFY2(result.image, qPrintable(result.error));
    QCOMPARE(QSize(result.image->width, result.image->height), QSize(6000, 6000));
    QCOMPARE(make_thumbnail(bytes, 64).size(), QSize(64, 64));
  }

  void aWebPSignatureWithoutAReaderSaysWhatIsMissing() {
    // A WebP header Qt cannot decode (no plugin here, or damage).
    const QByteArray bytes = QByteArray("RIFF\x24\0\0\0WEBPVP8 ", 16) + QByteArray(24, '\x11');
    const ProbeResult result = probe_image(bytes, QStringLiteral("cat.webp"));
    QVERIFY(!result.image);
    QVERIFY2(result.error.startsWith(QStringLiteral("“cat.webp”")), qPrintable(result.error));
    QVERIFY2(result.error.contains(QStringLiteral("WebP")), qPrintable(result.error));
  }

  void thumbnailsKeepTheAspectAndTheOrientation() {
    const QImage rotated =
        make_thumbnail(image_file(QStringLiteral("rotated-16x8-orientation6.jpg")), 4);
    QCOMPARE(rotated.size(), QSize(2, 4));
    // The dark square was on the left as stored; orientation 6 puts it on top.
    QVERIFY(qGray(rotated.pixel(1, 0)) < 80);
    QVERIFY(qGray(rotated.pixel(1, 3)) > 160);
    // A small image is not enlarged.
    QCOMPARE(make_thumbnail(image_file(QStringLiteral("red-blue-6x4.png")), 64).size(),
             QSize(6, 4));
    const QImage full = decode_image(image_file(QStringLiteral("red-blue-6x4.png")));
    QCOMPARE(QColor(full.pixel(0, 0)), QColor(200, 30, 40));
    QCOMPARE(QColor(full.pixel(5, 3)), QColor(20, 60, 220));
    QVERIFY(decode_image(QByteArray("nothing")).isNull());
  }
};

QUIRE_TEST(ImageProbeTest)
#include "test_image_probe.moc"
