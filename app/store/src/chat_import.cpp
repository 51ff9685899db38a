// Chat files of any known format into the store.

#include "quire/app/store/chat_import.h"

#include <QFile>
#include <QFileInfo>
#include <QSet>
#include <cmath>
#include <string_view>

#include "quire/app/store/chat_export.h"
#include "quire/importers/foreign_chats.h"

namespace quire::store {
namespace {

// ChatGPT exports of years of use run to hundreds of MiB; anything far
// larger is not a chat export.
constexpr qint64 kMaxChatFileBytes = qint64(2) << 30;

QDateTime time_of(const std::optional<double>& seconds) {
  if (!seconds || !std::isfinite(*seconds) || *seconds < 0 || *seconds > 253402300799.0) {
    return {};
  }
  return QDateTime::fromMSecsSinceEpoch(std::llround(*seconds * 1000.0), Qt::UTC);
}

}  // namespace

ChatDocument document_from_foreign(const importers::ForeignChat& chat, const QString& format) {
  ChatDocument document;
  document.title = QString::fromStdString(chat.title).simplified();
  if (document.title.isEmpty()) document.title = QStringLiteral("%1 chat").arg(format);
  document.created = time_of(chat.created);
  document.updated = chat.updated ? time_of(chat.updated) : document.created;
  if (!chat.system_prompt.empty())
    document.settings.system_prompt = QString::fromStdString(chat.system_prompt);
  QDateTime newest = document.created;
  for (std::size_t i = 0; i < chat.messages.size(); ++i) {
    const importers::ForeignMessage& foreign = chat.messages[i];
    Message message;
    message.id = MessageId{static_cast<qint64>(i) + 1};
    if (foreign.parent) {
      message.parent = MessageId{static_cast<qint64>(*foreign.parent) + 1};
      message.position = document.messages[static_cast<qsizetype>(*foreign.parent)].position + 1;
    }
    message.role = role_from_name(QString::fromStdString(foreign.role)).value_or(Role::User);
    message.text = QString::fromStdString(foreign.text);
    message.created = time_of(foreign.created);
    if (!message.created.isValid()) message.created = document.created;
    message.updated = message.created;
    if (message.created.isValid() && (!newest.isValid() || message.created > newest))
      newest = message.created;
    document.messages << message;
  }
  if (!document.updated.isValid()) document.updated = newest;
  if (chat.current) document.current = MessageId{static_cast<qint64>(*chat.current) + 1};
  return document;
}

std::optional<ChatFileContents> read_chat_file(const QByteArray& bytes, QString* error) {
  const auto failed = [error](const QString& problem) {
    if (error != nullptr) *error = problem;
    return std::nullopt;
  };
  const std::string_view json(bytes.constData(), static_cast<std::size_t>(bytes.size()));
  const std::optional<importers::ForeignFormat> format = importers::detect_foreign_format(json);
  if (!format) {
    // Quire's own, or else Quire's reader gives the precise complaint (its
    // "format" member can come after a long system prompt, so the whole
    // file is read).
    QString problem;
    std::optional<ChatDocument> document = chat_from_json(bytes, &problem);
    if (document) return ChatFileContents{QStringLiteral("Quire chat"), {*document}};
    if (problem.startsWith(QStringLiteral("not a Quire chat export"))) {
      problem += QStringLiteral(
          "; Quire imports its own chats, ChatGPT's conversations.json, Open WebUI's chat "
          "exports and LM Studio's conversation files");
    }
    return failed(problem);
  }
  const QString name = QString::fromLatin1(importers::format_name(*format));
  try {
    ChatFileContents contents{name, {}};
    for (const importers::ForeignChat& chat : importers::read_foreign_chats(json, *format))
      contents.chats << document_from_foreign(chat, name);
    if (contents.chats.isEmpty()) return failed(QStringLiteral("the file holds no chats"));
    return contents;
  } catch (const importers::ImportError& problem) {
    return failed(QString::fromStdString(problem.what()));
  }
}

std::optional<ImportedChats> import_chat_file(ChatStore& store, const QString& path,
                                              QString* error) {
  const QString file_name = QFileInfo(path).fileName();
  const auto failed = [&](const QString& problem) {
    if (error != nullptr) *error = QStringLiteral("Cannot import %1: %2.").arg(file_name, problem);
    return std::nullopt;
  };
  QFile file(path);
  if (!file.open(QIODevice::ReadOnly)) return failed(file.errorString());
  if (file.size() > kMaxChatFileBytes) return failed(QStringLiteral("the file is too large"));
  QString problem;
  std::optional<ChatFileContents> contents = read_chat_file(file.readAll(), &problem);
  if (!contents) return failed(problem);
  // Titles distinct from the store's chats and from one another.
  QSet<QString> taken;
  for (const ChatSummary& chat : store.list_chats())
    taken.insert(chat.title);
  for (ChatDocument& document : contents->chats) {
    QString title = document.title;
    for (int copy = 1; taken.contains(title); ++copy) {
      title = copy == 1 ? QStringLiteral("%1 (imported)").arg(document.title)
                        : QStringLiteral("%1 (imported %2)").arg(document.title).arg(copy);
    }
    taken.insert(title);
    document.title = title;
  }
  const std::optional<QList<ChatId>> chats = store.insert_documents(contents->chats);
  if (!chats) return failed(store.error_string());
  return ImportedChats{contents->format, *chats};
}

}  // namespace quire::store
