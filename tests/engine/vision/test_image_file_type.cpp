// The image file types told by their signatures, and their media types and
// names, as the server, the chat store and the decoder read them.

#include <QTest>
#include <string>

#include "quire/engine/vision/image_file_type.h"
#include "test_main.h"

using quire::vision::ImageFileType;
using quire::vision::sniff_image_file_type;

Q_DECLARE_METATYPE(ImageFileType)

class ImageFileTypeTest : public QObject {
  Q_OBJECT

 private slots:
  void signatures_data() {
    QTest::addColumn<QByteArray>("bytes");
    QTest::addColumn<ImageFileType>("type");
    QTest::addColumn<QString>("media");
    QTest::addColumn<QString>("name");
    QTest::newRow("png") << QByteArray("\x89PNG\r\n\x1a\n\0\0\0\rIHDR", 16) << ImageFileType::Png
                         << "image/png"
                         << "PNG";
    QTest::newRow("jpeg") << QByteArray("\xff\xd8\xff\xe0", 4) << ImageFileType::Jpeg
                          << "image/jpeg"
                          << "JPEG";
    QTest::newRow("webp") << QByteArray("RIFF\x10\0\0\0WEBPVP8 ", 16) << ImageFileType::WebP
                          << "image/webp"
                          << "WebP";
    QTest::newRow("riff, not webp")
        << QByteArray("RIFF\x10\0\0\0WAVEfmt ", 16) << ImageFileType::Unknown << ""
        << "";
    QTest::newRow("gif87a") << QByteArray("GIF87a") << ImageFileType::Gif << "image/gif"
                            << "GIF";
    QTest::newRow("gif89a") << QByteArray("GIF89a") << ImageFileType::Gif << "image/gif"
                            << "GIF";
    QTest::newRow("bmp") << QByteArray("BM") << ImageFileType::Bmp << "image/bmp"
                         << "BMP";
    QTest::newRow("tiff, little end")
        << QByteArray("II*\0", 4) << ImageFileType::Tiff << "image/tiff"
        << "TIFF";
    QTest::newRow("tiff, big end") << QByteArray("MM\0*", 4) << ImageFileType::Tiff << "image/tiff"
                                   << "TIFF";
    QTest::newRow("heic") << QByteArray(
                                 "\0\0\0\x18"
                                 "ftypheic",
                                 12)
                          << ImageFileType::Heif << "image/heif"
                          << "HEIC";
    QTest::newRow("avif") << QByteArray(
                                 "\0\0\0\x18"
                                 "ftypavif",
                                 12)
                          << ImageFileType::Avif << "image/avif"
                          << "AVIF";
    QTest::newRow("psd") << QByteArray("8BPS") << ImageFileType::Psd << "image/vnd.adobe.photoshop"
                         << "Photoshop (PSD)";
    QTest::newRow("svg after white space")
        << QByteArray("  \n<svg xmlns=\"\">") << ImageFileType::Svg << "image/svg+xml"
        << "SVG";
    QTest::newRow("svg after a declaration")
        << QByteArray("<?xml version=\"1.0\"?>\n<svg>") << ImageFileType::Svg << "image/svg+xml"
        << "SVG";
    QTest::newRow("xml without svg")
        << QByteArray("<?xml version=\"1.0\"?><html>") << ImageFileType::Unknown << ""
        << "";
    QTest::newRow("cut png signature") << QByteArray("\x89PNG\r\n") << ImageFileType::Unknown << ""
                                       << "";
    QTest::newRow("empty") << QByteArray() << ImageFileType::Unknown << ""
                           << "";
    QTest::newRow("text") << QByteArray("hello") << ImageFileType::Unknown << ""
                          << "";
  }

  void signatures() {
    QFETCH(QByteArray, bytes);
    QFETCH(ImageFileType, type);
    QFETCH(QString, media);
    QFETCH(QString, name);
    const ImageFileType found =
        sniff_image_file_type(std::string_view(bytes.constData(), bytes.size()));
    QCOMPARE(found, type);
    QCOMPARE(QString::fromStdString(std::string(quire::vision::media_type(found))), media);
    QCOMPARE(QString::fromStdString(std::string(quire::vision::format_name(found))), name);
  }
};

QUIRE_TEST(ImageFileTypeTest)
#include "test_image_file_type.moc"
