// Whole chats: a chat as a document (its tree, current path and settings),
// a document added as a new chat (an import), and a branch copied into a new
// chat.

#include <QHash>
#include <QJsonDocument>

#include "chat_store_impl.h"

namespace quire::store {
namespace detail {

std::optional<ChatId> insert_document_rows(StoreState& d, const ChatDocument& document) {
  const qint64 now = d.now_ms();
  const auto ms = [now](const QDateTime& time) {
    return time.isValid() ? time.toMSecsSinceEpoch() : now;
  };
  const auto invalid = [&d](const QString& problem) {
    d.fail(StoreError::InvalidArgument,
           QStringLiteral("The chat cannot be added: %1.").arg(problem));
    return std::nullopt;
  };
  ChatId chat{};
  {
    Run run(d.sql(),
            QStringLiteral("INSERT INTO chats (title, created, updated, model_dir, settings)"
                           " VALUES (?, ?, ?, ?, ?)"));
    run << document.title << ms(document.created) << ms(document.updated)
        << document.model.model_dir
        << QString::fromUtf8(QJsonDocument(document.model.settings).toJson(QJsonDocument::Compact));
    if (!run.exec()) {
      d.fail_sql(QStringLiteral("import a chat"), run.error());
      return std::nullopt;
    }
    chat = ChatId{run.last_insert_id().toLongLong()};
  }
  if (!write_settings(d, chat, document.settings)) return std::nullopt;

  const bool branched = std::any_of(document.messages.begin(), document.messages.end(),
                                    [](const Message& m) { return raw(m.id) != 0; });
  struct Added {
    MessageId id;
    int position;
  };
  QHash<qint64, Added> added;  // the document's id -> the new row
  std::optional<Added> previous;
  for (qsizetype i = 0; i < document.messages.size(); ++i) {
    const Message& message = document.messages[i];
    std::optional<Added> parent;
    if (!branched) {
      parent = previous;
    } else if (message.parent) {
      const auto found = added.constFind(raw(*message.parent));
      if (found == added.constEnd()) {
        return invalid(
            QStringLiteral("message %1 follows message %2, which does not come before it")
                .arg(raw(message.id))
                .arg(raw(*message.parent)));
      }
      parent = *found;
    }
    if (branched && (raw(message.id) == 0 || added.contains(raw(message.id)))) {
      return invalid(QStringLiteral("messages[%1] has no id of its own").arg(i));
    }
    Run run(d.sql(), QStringLiteral("INSERT INTO messages (chat_id, parent_id, position, role,"
                                    " text, tokens, created, updated, stats, tool_calls,"
                                    " tool_result) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"));
    run << raw(chat)
        << (parent ? QVariant(raw(parent->id)) : QVariant(QMetaType::fromType<qint64>()))
        << (parent ? parent->position + 1 : 0) << role_name(message.role) << message.text
        << tokens_value(message.tokens) << ms(message.created)
        << ms(message.updated.isValid() ? message.updated : message.created)
        << stats_value(message.stats) << tool_calls_value(message.tool_calls)
        << tool_result_value(message.tool_result);
    if (!run.exec()) {
      d.fail_sql(QStringLiteral("import a message"), run.error());
      return std::nullopt;
    }
    previous =
        Added{MessageId{run.last_insert_id().toLongLong()}, parent ? parent->position + 1 : 0};
    if (!write_message_images(d, previous->id, message.images)) {
      d.fail(
          d.error,
          QStringLiteral("The chat cannot be added: messages[%1]: %2").arg(i).arg(d.error_string));
      return std::nullopt;
    }
    if (branched) added.insert(raw(message.id), *previous);
  }
  // Only the current path is marked; elsewhere the newest child is taken.
  std::optional<Added> leaf = previous;
  if (branched && document.current) {
    const auto found = added.constFind(raw(*document.current));
    if (found == added.constEnd()) {
      return invalid(QStringLiteral("the current message %1 is not among its messages")
                         .arg(raw(*document.current)));
    }
    leaf = *found;
  }
  if (leaf && !select_chain(d, chat, leaf->id)) return std::nullopt;
  return chat;
}

}  // namespace detail

std::optional<ChatDocument> ChatStore::document(ChatId chat) const {
  const auto summary = this->chat(chat);
  if (!summary) return std::nullopt;
  ChatDocument document;
  document.title = summary->title;
  document.created = summary->created;
  document.updated = summary->updated;
  document.model = summary->model;
  document.messages = message_tree(chat);
  if (d_->error != StoreError::None) return std::nullopt;
  const auto leaf = detail::current_leaf(*d_, chat);
  const auto settings = detail::read_settings(*d_, chat);
  if (!leaf || !settings) return std::nullopt;
  document.current = *leaf;
  document.settings = *settings;
  d_->succeed();
  return document;
}

std::optional<ChatId> ChatStore::insert_document(const ChatDocument& document) {
  if (!d_->require_open()) return std::nullopt;
  const QString problem = document.settings.problem();
  if (!problem.isEmpty()) {
    d_->fail(StoreError::InvalidArgument,
             QStringLiteral("The chat cannot be added: %1.").arg(problem));
    return std::nullopt;
  }
  detail::Transaction transaction(d_->db);
  if (!detail::begin(*d_, transaction)) return std::nullopt;
  const auto chat = detail::insert_document_rows(*d_, document);
  if (!chat || !detail::commit(*d_, transaction)) return std::nullopt;
  d_->succeed();
  emit chat_added(*chat);
  return chat;
}

std::optional<QList<ChatId>> ChatStore::insert_documents(const QList<ChatDocument>& documents) {
  if (!d_->require_open()) return std::nullopt;
  for (const ChatDocument& document : documents) {
    const QString problem = document.settings.problem();
    if (!problem.isEmpty()) {
      d_->fail(StoreError::InvalidArgument,
               QStringLiteral("The chat “%1” cannot be added: %2.").arg(document.title, problem));
      return std::nullopt;
    }
  }
  detail::Transaction transaction(d_->db);
  if (!detail::begin(*d_, transaction)) return std::nullopt;
  QList<ChatId> chats;
  for (const ChatDocument& document : documents) {
    const auto chat = detail::insert_document_rows(*d_, document);
    if (!chat) return std::nullopt;
    chats << *chat;
  }
  if (!detail::commit(*d_, transaction)) return std::nullopt;
  d_->succeed();
  for (const ChatId chat : chats)
    emit chat_added(chat);
  return chats;
}

std::optional<ChatId> ChatStore::branch_chat(MessageId message, const QString& title) {
  if (!d_->require_open()) return std::nullopt;
  const auto place = detail::place_of(*d_, message);
  if (!place) return std::nullopt;
  auto source = document(place->chat);
  if (!source) return std::nullopt;
  if (const auto summary = this->chat(place->chat); !summary || summary->deleted) {
    d_->fail(StoreError::NotFound,
             QStringLiteral("Message %1 is in a deleted chat.").arg(raw(message)));
    return std::nullopt;
  }
  // The path from the first message down to `message`, as one branch.
  source->current = message;
  QList<Message> path = store::current_path(*source);
  for (Message& copied : path) {
    copied.id = MessageId{};
    copied.parent.reset();
  }
  const qint64 now = d_->now_ms();
  ChatDocument branch = *source;
  branch.title = title;
  branch.created = branch.updated = detail::from_ms(now);
  branch.messages = path;
  branch.current.reset();
  detail::Transaction transaction(d_->db);
  if (!detail::begin(*d_, transaction)) return std::nullopt;
  const auto chat = detail::insert_document_rows(*d_, branch);
  if (!chat || !detail::commit(*d_, transaction)) return std::nullopt;
  d_->succeed();
  emit chat_added(*chat);
  return chat;
}

}  // namespace quire::store
