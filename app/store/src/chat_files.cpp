// Export and import through files.

#include <QFile>
#include <QSaveFile>

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

QByteArray markdown_bytes(const ChatDocument& document) {
  return chat_to_markdown(document).toUtf8();
}

}  // namespace

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
  return export_document(store, chat, path, error, markdown_bytes);
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
  const auto document = chat_from_json(file.readAll(), &problem);
  if (!document) return failed(problem);
  const auto chat = store.insert_document(*document);
  if (!chat) return failed(store.error_string());
  return chat;
}

}  // namespace quire::store
