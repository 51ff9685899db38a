// Images attached to messages: stored once by content (the images table,
// keyed by SHA-256), listed in order per message (message_images). Triggers
// in the schema (version 8) remove what no message uses any more.

#include "chat_store_impl.h"
#include "quire/app/store/image_bytes.h"

namespace quire::store::detail {

QString image_problem(const ChatImage& image) {
  if (image.bytes.isEmpty()) return QStringLiteral("it is empty");
  const QString sniffed = sniff_image_mime_type(image.bytes);
  if (sniffed.isEmpty()) return QStringLiteral("it is not a PNG, JPEG, WebP, GIF or BMP file");
  if (image.mime_type != sniffed) {
    return QStringLiteral("it is labelled %1 but its bytes are %2").arg(image.mime_type, sniffed);
  }
  if (image.width <= 0 || image.height <= 0) {
    return QStringLiteral("its size %1×%2 is not a size in pixels")
        .arg(image.width)
        .arg(image.height);
  }
  return {};
}

bool write_message_images(StoreState& d, MessageId message, const QList<ChatImage>& images) {
  for (qsizetype i = 0; i < images.size(); ++i) {
    const ChatImage& image = images[i];
    const QString problem = image_problem(image);
    if (!problem.isEmpty()) {
      return d.fail(
          StoreError::InvalidArgument,
          QStringLiteral("Image %1 of the message cannot be stored: %2.").arg(i + 1).arg(problem));
    }
    const QByteArray hash = image.content_hash();
    {
      // Already stored for another message: the bytes are the same by definition.
      Run run(d.sql(), QStringLiteral("INSERT OR IGNORE INTO images"
                                      " (hash, bytes, mime_type, width, height)"
                                      " VALUES (?, ?, ?, ?, ?)"));
      run << QVariant(hash) << QVariant(image.bytes) << image.mime_type << image.width
          << image.height;
      if (!run.exec()) return d.fail_sql(QStringLiteral("store an image"), run.error());
    }
    Run run(d.sql(), QStringLiteral("INSERT INTO message_images (message_id, ordinal, image_hash)"
                                    " VALUES (?, ?, ?)"));
    run << raw(message) << static_cast<qint64>(i) << QVariant(hash);
    if (!run.exec()) return d.fail_sql(QStringLiteral("attach an image"), run.error());
  }
  return true;
}

bool load_message_images(StoreState& d, QList<Message>& messages) {
  if (messages.isEmpty()) return true;
  // One query for the lot (a chat is read whole), or for the one message.
  QHash<qint64, qsizetype> index;
  for (qsizetype i = 0; i < messages.size(); ++i)
    index.insert(raw(messages[i].id), i);
  const bool one = messages.size() == 1;
  Run run(d.sql(), QStringLiteral("SELECT mi.message_id, i.bytes, i.mime_type, i.width, i.height"
                                  " FROM message_images mi JOIN images i ON i.hash = mi.image_hash"
                                  " JOIN messages m ON m.id = mi.message_id"
                                  " WHERE %1 = ? ORDER BY mi.message_id, mi.ordinal")
                       .arg(one ? QStringLiteral("m.id") : QStringLiteral("m.chat_id")));
  run << (one ? raw(messages.front().id) : raw(messages.front().chat));
  if (!run.exec()) return d.fail_sql(QStringLiteral("load a message's images"), run.error());
  while (run.next()) {
    const auto found = index.constFind(run.value(0).toLongLong());
    if (found == index.constEnd()) continue;
    ChatImage image;
    image.bytes = run.value(1).toByteArray();
    image.mime_type = run.value(2).toString();
    image.width = run.value(3).toInt();
    image.height = run.value(4).toInt();
    messages[*found].images << image;
  }
  return true;
}

}  // namespace quire::store::detail
