#include "chat_image_json.h"

#include <QJsonObject>

#include "chat_store_impl.h"

namespace quire::store::detail {

QJsonArray chat_images_to_json(const QList<ChatImage>& images) {
  QJsonArray array;
  for (const ChatImage& image : images) {
    array.append(
        QJsonObject{{QStringLiteral("mime_type"), image.mime_type},
                    {QStringLiteral("width"), image.width},
                    {QStringLiteral("height"), image.height},
                    {QStringLiteral("data"), QString::fromLatin1(image.bytes.toBase64())}});
  }
  return array;
}

bool chat_images_from_json(const QJsonValue& value, QList<ChatImage>* out, QString* where,
                           QString* problem) {
  if (value.isUndefined() || value.isNull()) return true;
  *where = QStringLiteral("images");
  if (!value.isArray()) {
    *problem = QStringLiteral("expected an array of images");
    return false;
  }
  const QJsonArray array = value.toArray();
  for (qsizetype i = 0; i < array.size(); ++i) {
    const QString at = QStringLiteral("images[%1]").arg(i);
    *where = at;
    if (!array.at(i).isObject()) {
      *problem = QStringLiteral(
          "expected an object with \"mime_type\", \"width\", \"height\" "
          "and \"data\"");
      return false;
    }
    const QJsonObject object = array.at(i).toObject();
    ChatImage image;
    const QJsonValue data = object.value(QStringLiteral("data"));
    *where = at + QStringLiteral(".data");
    if (!data.isString()) {
      *problem = QStringLiteral("expected the image's bytes as a base64 string");
      return false;
    }
    const auto decoded = QByteArray::fromBase64Encoding(data.toString().toLatin1(),
                                                        QByteArray::AbortOnBase64DecodingErrors);
    if (!decoded) {
      *problem = QStringLiteral("not valid base64");
      return false;
    }
    image.bytes = *decoded;
    *where = at + QStringLiteral(".mime_type");
    const QJsonValue mime = object.value(QStringLiteral("mime_type"));
    if (!mime.isString()) {
      *problem = QStringLiteral("expected a string such as \"image/png\"");
      return false;
    }
    image.mime_type = mime.toString();
    const auto dimension = [&](const QString& key, int* dimension_out) {
      const QJsonValue number = object.value(key);
      const int read = number.toInt(0);
      if (!number.isDouble() || read <= 0 || number.toDouble() != read) {
        *where = at + QLatin1Char('.') + key;
        *problem = QStringLiteral("expected a positive whole number of pixels");
        return false;
      }
      *dimension_out = read;
      return true;
    };
    if (!dimension(QStringLiteral("width"), &image.width) ||
        !dimension(QStringLiteral("height"), &image.height)) {
      return false;
    }
    // The checks the store makes: what is refused here is never half-imported.
    const QString unfit = image_problem(image);
    if (!unfit.isEmpty()) {
      *where = at;
      *problem = unfit;
      return false;
    }
    *out << image;
  }
  return true;
}

}  // namespace quire::store::detail
