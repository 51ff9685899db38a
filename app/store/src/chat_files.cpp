// Export and import through files.

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QSaveFile>
#include <QSet>

#include "quire/app/store/chat_export.h"

namespace quire::store {
namespace {

// An export is a few MiB at most; anything far larger is not ours.
constexpr qint64 kMaxImportBytes = qint64(1) << 30;

bool export_document(const ChatStore& store, ChatId chat, const QString& path, QString* error,
                     QByteArray (*render)(const ChatDocument&)) {
  const auto document = store.document(chat);
  if (!document) {
    if (error != nullptr) *error = store.error_string();
    return false;
  }
  return write_file_atomically(path, render(*document), error);
}

}  // namespace

QString export_file_name(const QString& title, const QString& extension) {
  // Long names are cut: some file systems allow 255 bytes, and a title is
  // read at a glance anyway.
  constexpr qsizetype kMaxBaseLength = 100;
  QString base;
  for (const QChar c : title) {
    if (c == u'/' || c == u'\\') {
      base += u'-';
    } else if (c.category() == QChar::Other_Control || QStringView(u":*?\"<>|").contains(c)) {
      continue;
    } else {
      base += c;
    }
  }
  base = base.simplified().left(kMaxBaseLength);
  // A leading dot hides the file; trailing dots and spaces vanish on Windows.
  while (!base.isEmpty() && (base.front() == u'.' || base.front() == u'-'))
    base.remove(0, 1);
  while (!base.isEmpty() && (base.back() == u'.' || base.back().isSpace()))
    base.chop(1);
  if (base.isEmpty()) base = QStringLiteral("Chat");
  return base + u'.' + extension;
}

QString import_title(const ChatStore& store, const QString& title) {
  QSet<QString> taken;
  for (const ChatSummary& chat : store.list_chats())
    taken.insert(chat.title);
  if (!taken.contains(title)) return title;
  for (int copy = 1;; ++copy) {
    const QString candidate = copy == 1 ? QStringLiteral("%1 (imported)").arg(title)
                                        : QStringLiteral("%1 (imported %2)").arg(title).arg(copy);
    if (!taken.contains(candidate)) return candidate;
  }
}

bool write_file_atomically(const QString& path, const QByteArray& bytes, QString* error) {
  QSaveFile file(path);
  if (file.open(QIODevice::WriteOnly) && file.write(bytes) == bytes.size() && file.commit()) {
    return true;
  }
  if (error != nullptr)
    *error = QStringLiteral("Cannot write %1: %2.").arg(path, file.errorString());
  return false;
}

bool export_chat_json(const ChatStore& store, ChatId chat, const QString& path, QString* error) {
  return export_document(store, chat, path, error, chat_to_json);
}

bool export_chat_markdown(const ChatStore& store, ChatId chat, const QString& path,
                          QString* error) {
  return export_chat_markdown(store, chat, path, ExportScope::CurrentBranch, error);
}

bool export_chat_markdown(const ChatStore& store, ChatId chat, const QString& path,
                          ExportScope scope, QString* error) {
  const auto document = store.document(chat);
  if (!document) {
    if (error != nullptr) *error = store.error_string();
    return false;
  }
  const QFileInfo file(path);
  const QString folder = file.completeBaseName() + QStringLiteral(".images");
  const QList<Message> exported =
      scope == ExportScope::WholeTree ? document->messages : current_path(*document);
  QSet<QString> written;
  for (const Message& message : exported) {
    for (const ChatImage& image : message.images) {
      const QString name = markdown_image_file_name(image);
      if (written.contains(name)) continue;
      if (written.isEmpty() && !file.dir().mkpath(folder)) {
        if (error != nullptr) {
          *error = QStringLiteral("Cannot create the folder %1 for the chat's images.")
                       .arg(file.dir().filePath(folder));
        }
        return false;
      }
      if (!write_file_atomically(file.dir().filePath(folder + QLatin1Char('/') + name), image.bytes,
                                 error)) {
        return false;
      }
      written.insert(name);
    }
  }
  return write_file_atomically(path, chat_to_markdown(*document, scope, folder).toUtf8(), error);
}

std::optional<ChatId> import_chat_json(ChatStore& store, const QString& path, QString* error) {
  const auto failed = [&](const QString& problem) {
    if (error != nullptr) *error = QStringLiteral("Cannot import %1: %2.").arg(path, problem);
    return std::nullopt;
  };
  QFile file(path);
  if (!file.open(QIODevice::ReadOnly)) return failed(file.errorString());
  if (file.size() > kMaxImportBytes) return failed(QStringLiteral("the file is too large"));
  QString problem;
  std::optional<ChatDocument> document = chat_from_json(file.readAll(), &problem);
  if (!document) return failed(problem);
  document->title = import_title(store, document->title);
  const auto chat = store.insert_document(*document);
  if (!chat) return failed(store.error_string());
  return chat;
}

}  // namespace quire::store
