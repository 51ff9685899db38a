// The messages for image files decode_image refuses: each names the problem
// and, where there is one, what to do.

#include <QBuffer>
#include <QImage>
#include <QTest>

#include "quire/app/images/decode_image.h"
#include "test_main.h"

using quire::images::decode_image;
using quire::images::DecodeError;
using quire::images::ImageLimits;

namespace {

QByteArray encode(const char* format, int width = 16, int height = 12) {
  QImage image(width, height, QImage::Format_RGB32);
  for (int y = 0; y < height; ++y)
    for (int x = 0; x < width; ++x)
      image.setPixel(x, y, qRgb(x * 13, y * 17, (x * y) % 256));
  QByteArray bytes;
  QBuffer buffer(&bytes);
  buffer.open(QIODevice::WriteOnly);
  if (!image.save(&buffer, format)) qFatal("cannot encode a %s image", format);
  return bytes;
}

std::uint32_t crc32(const QByteArray& bytes) {
  std::uint32_t crc = 0xffffffffu;
  for (const char c : bytes) {
    crc ^= static_cast<std::uint8_t>(c);
    for (int k = 0; k < 8; ++k)
      crc = (crc >> 1) ^ (0xedb88320u & (0u - (crc & 1u)));
  }
  return ~crc;
}

QByteArray be32(std::uint32_t value) {
  QByteArray out;
  for (int shift = 24; shift >= 0; shift -= 8)
    out.append(static_cast<char>((value >> shift) & 0xff));
  return out;
}

QByteArray png_chunk(const char* type, const QByteArray& data) {
  const QByteArray typed = QByteArray(type) + data;
  return be32(static_cast<std::uint32_t>(data.size())) + typed + be32(crc32(typed));
}

// A valid PNG header claiming width x height pixels, with a few bytes of
// image data: a decompression bomb's shape.
QByteArray png_claiming(std::uint32_t width, std::uint32_t height) {
  QByteArray header = be32(width) + be32(height);
  header.append(QByteArray("\x08\x02\x00\x00\x00", 5));  // 8-bit RGB, no interlace
  const QByteArray deflated = QByteArray::fromHex("789c636000000000010001");
  return QByteArray("\x89PNG\r\n\x1a\n", 8) + png_chunk("IHDR", header) +
         png_chunk("IDAT", deflated) + png_chunk("IEND", {});
}

// The smallest GIF: a two-colour table, a graphic control extension making
// index 0 transparent, and one 1x1 image of index 0 (LZW: clear, 0, end).
QByteArray one_pixel_gif() {
  return QByteArray(
      "GIF89a\x01\x00\x01\x00\x80\x00\x00"
      "\x00\x00\x00\xff\xff\xff"
      "\x21\xf9\x04\x01\x00\x00\x00\x00"
      "\x2c\x00\x00\x00\x00\x01\x00\x01\x00\x00"
      "\x02\x02\x44\x01\x00;",
      43);
}

QString refusal(const QByteArray& bytes, const ImageLimits& limits = {}) {
  try {
    decode_image(bytes, limits);
  } catch (const DecodeError& error) {
    return QString::fromUtf8(error.what());
  }
  return {};
}

}  // namespace

class DecodeErrorsTest : public QObject {
  Q_OBJECT

 private slots:
  void valid_files_decode() {
    const auto png = decode_image(encode("PNG"));
    QCOMPARE(png.width, 16);
    QCOMPARE(png.height, 12);
    // Pixel (3, 2) of the encoded pattern, exactly (PNG is lossless).
    QCOMPARE(png.rgb[(2 * 16 + 3) * 3 + 0], std::uint8_t(39));
    QCOMPARE(png.rgb[(2 * 16 + 3) * 3 + 1], std::uint8_t(34));
    QCOMPARE(png.rgb[(2 * 16 + 3) * 3 + 2], std::uint8_t(6));
    QCOMPARE(decode_image(encode("JPEG")).width, 16);
    QVERIFY2(
        quire::images::supported_image_formats().contains(QLatin1String("WebP")),
        "Qt's WebP plugin is missing: install qt6-image-formats-plugins (scripts/setup-debian.sh)");
    QCOMPARE(decode_image(encode("WEBP")).height, 12);
  }

  void empty_and_unknown_data() {
    QCOMPARE(refusal({}), QStringLiteral("the image file is empty"));
    QCOMPARE(refusal("just some text, not an image"),
             QStringLiteral("the file is not an image in a format Quire reads (PNG, JPEG, WebP, "
                            "GIF, BMP)"));
  }

  void unsupported_formats_are_named_with_the_supported_ones() {
    const QString message = refusal(QByteArray("II*\0\x08\0\0\0\0\0", 10));
    QCOMPARE(message,
             QStringLiteral("the image is TIFF, a format Quire does not read; convert it to one of "
                            "PNG, JPEG, WebP, GIF, BMP"));
  }

  void gif_and_bmp_decode() {
    const auto bmp = decode_image(encode("BMP"));
    QCOMPARE(QSize(bmp.width, bmp.height), QSize(16, 12));
    // BMP is lossless: pixel (3, 2) of the pattern exactly.
    QCOMPARE(bmp.rgb[(2 * 16 + 3) * 3 + 0], std::uint8_t(39));
    QCOMPARE(bmp.rgb[(2 * 16 + 3) * 3 + 1], std::uint8_t(34));
    QCOMPARE(bmp.rgb[(2 * 16 + 3) * 3 + 2], std::uint8_t(6));
    // One transparent pixel comes out white.
    const auto pixel = decode_image(one_pixel_gif());
    QCOMPARE(QSize(pixel.width, pixel.height), QSize(1, 1));
    QCOMPARE(pixel.rgb, (std::vector<std::uint8_t>{255, 255, 255}));
  }

  void too_many_bytes_is_refused_before_parsing() {
    ImageLimits limits;
    limits.max_bytes = 100;
    const QString message = refusal(encode("PNG", 64, 64), limits);
    QVERIFY2(message.startsWith(QLatin1String("the image file is ")), qPrintable(message));
    QVERIFY2(message.contains(QLatin1String("more than the 0.0 MB Quire reads")),
             qPrintable(message));
  }

  void a_decompression_bomb_is_refused_from_its_header() {
    const QByteArray bomb = png_claiming(100000, 100000);
    QVERIFY(bomb.size() < 100);
    QCOMPARE(refusal(bomb),
             QStringLiteral("the image is 100000x100000 pixels (10000.0 megapixels), more than "
                            "the 50.0 megapixels Quire reads; scale it down and attach it again"));
    ImageLimits limits;
    limits.max_pixels = 100;
    QVERIFY2(refusal(encode("JPEG", 16, 12), limits)
                 .startsWith(QLatin1String("the image is 16x12 pixels")),
             qPrintable(refusal(encode("JPEG", 16, 12), limits)));
  }

  void truncated_files_say_so() {
    const QByteArray png = encode("PNG", 64, 64);
    QString message = refusal(png.left(png.size() / 2));
    QVERIFY2(message.startsWith(QLatin1String("the PNG file is truncated (it ends inside a chunk")),
             qPrintable(message));
    // Qt's JPEG decoder pads a cut file with grey; the structure check sees
    // that the last scan never ends.
    const QByteArray jpeg = encode("JPEG", 64, 64);
    message = refusal(jpeg.left(jpeg.size() - 40));
    QCOMPARE(message,
             QStringLiteral("the JPEG file is truncated (it ends before its end-of-image marker); "
                            "the download or copy may be incomplete"));
    const QByteArray webp = encode("WEBP", 64, 64);
    message = refusal(webp.left(webp.size() - 10));
    QVERIFY2(message.startsWith(QLatin1String("the WebP file is truncated (it holds")),
             qPrintable(message));
    const QByteArray gif = one_pixel_gif();
    QCOMPARE(refusal(gif.left(gif.size() - 3)),
             QStringLiteral("the GIF file is truncated (it ends before its trailer); "
                            "the download or copy may be incomplete"));
    const QByteArray bmp = encode("BMP", 64, 64);
    QCOMPARE(refusal(bmp.left(bmp.size() - 100)),
             QStringLiteral("the BMP file is truncated (it holds %1 of the %2 bytes its pixels "
                            "need); the download or copy may be incomplete")
                 .arg(bmp.size() - 100)
                 .arg(bmp.size()));
  }

  void corrupt_files_say_so() {
    // Image data scrambled inside an intact chunk structure.
    QByteArray png = encode("PNG", 64, 64);
    const qsizetype idat = png.indexOf("IDAT");
    QVERIFY(idat > 0);
    for (qsizetype i = idat + 6; i < idat + 40; ++i)
      png[i] = static_cast<char>(png[i] ^ 0x5a);
    QString message = refusal(png);
    QVERIFY2(message.startsWith(QLatin1String("the PNG data is corrupt")), qPrintable(message));
    // A header with no size: a PNG whose IHDR says 0x0.
    message = refusal(png_claiming(0, 0));
    QVERIFY2(message.startsWith(QLatin1String("the PNG data is corrupt")), qPrintable(message));
  }
};

QUIRE_TEST(DecodeErrorsTest)
#include "test_decode_errors.moc"
