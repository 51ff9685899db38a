// The JSON form of a chat, written for export and read back (validated) for import.

#include <QHash>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QSet>
#include <algorithm>
#include <limits>

#include "chat_image_json.h"
#include "quire/app/store/chat_export.h"
#include "quire/app/store/chat_settings_json.h"

namespace quire::store {
namespace {

QString iso(const QDateTime& time) {
  return time.isValid() ? time.toUTC().toString(Qt::ISODateWithMs) : QString();
}

// Reading with a path for messages: every check that fails says where.
class Reader {
 public:
  explicit Reader(QString* error) : error_(error) {}

  bool fail(const QString& where, const QString& problem) {
    if (error_ != nullptr)
      *error_ = where.isEmpty() ? problem : where + QStringLiteral(": ") + problem;
    return false;
  }

  bool string(const QJsonObject& object, const QString& key, const QString& where, bool required,
              QString* out) {
    const QJsonValue value = object.value(key);
    if (value.isUndefined() && !required) return true;
    if (!value.isString()) return fail(where + key, QStringLiteral("expected a string"));
    *out = value.toString();
    return true;
  }

  bool time(const QJsonObject& object, const QString& key, const QString& where, QDateTime* out) {
    QString text;
    if (!string(object, key, where, false, &text)) return false;
    if (text.isEmpty()) return true;
    *out = QDateTime::fromString(text, Qt::ISODateWithMs);
    if (!out->isValid()) {
      return fail(where + key,
                  QStringLiteral("expected a date and time like 2024-05-01T12:00:00Z"));
    }
    *out = out->toUTC();
    return true;
  }

  bool tokens(const QJsonValue& value, const QString& where, std::vector<std::int32_t>* out) {
    if (value.isUndefined() || value.isNull()) return true;
    if (!value.isArray()) return fail(where, QStringLiteral("expected an array of token ids"));
    const QJsonArray array = value.toArray();
    out->reserve(static_cast<std::size_t>(array.size()));
    for (qsizetype i = 0; i < array.size(); ++i) {
      const double id = array.at(i).toDouble(0.5);
      if (!array.at(i).isDouble() || id != static_cast<double>(static_cast<qint64>(id)) ||
          id < std::numeric_limits<std::int32_t>::min() ||
          id > std::numeric_limits<std::int32_t>::max()) {
        return fail(QStringLiteral("%1[%2]").arg(where).arg(i),
                    QStringLiteral("expected an integer token id (32-bit)"));
      }
      out->push_back(static_cast<std::int32_t>(id));
    }
    return true;
  }

  // A message id: a positive integer.
  bool id(const QJsonValue& value, const QString& where, std::optional<MessageId>* out) {
    if (value.isUndefined() || value.isNull()) return true;
    const double number = value.toDouble(0.5);
    if (!value.isDouble() || number < 1 || number > 9007199254740992.0 ||
        number != static_cast<double>(static_cast<qint64>(number))) {
      return fail(where, QStringLiteral("expected a message id (a positive integer)"));
    }
    *out = MessageId{static_cast<qint64>(number)};
    return true;
  }

  bool settings(const QJsonValue& value, ChatSettings* out) {
    const std::optional<ChatSettings> read =
        chat_settings_from_json(value, QStringLiteral("chat_settings"), error_);
    if (!read) return false;
    *out = *read;
    return true;
  }

  // Version 3: an assistant message's calls, a tool message's result.
  bool tools(const QJsonObject& object, const QString& prefix, Message* out) {
    const QJsonValue calls = object.value(QStringLiteral("tool_calls"));
    if (!calls.isUndefined() && !calls.isNull()) {
      const QString where = prefix + QStringLiteral("tool_calls");
      if (!calls.isArray()) return fail(where, QStringLiteral("expected an array of calls"));
      const QJsonArray array = calls.toArray();
      for (qsizetype i = 0; i < array.size(); ++i) {
        const std::optional<ToolCall> call = ToolCall::from_json(array.at(i).toObject());
        if (!array.at(i).isObject() || !call) {
          return fail(where + QStringLiteral("[%1]").arg(i),
                      QStringLiteral("expected an object with \"id\" and \"name\" strings"));
        }
        out->tool_calls << *call;
      }
    }
    const QJsonValue result = object.value(QStringLiteral("tool_result"));
    if (!result.isUndefined() && !result.isNull()) {
      const std::optional<ToolResult> parsed = ToolResult::from_json(result.toObject());
      if (!result.isObject() || !parsed) {
        return fail(prefix + QStringLiteral("tool_result"),
                    QStringLiteral("expected an object with a \"call_id\" string and a "
                                   "\"status\" of allowed, denied, failed, timed_out or "
                                   "cancelled"));
      }
      out->tool_result = parsed;
    }
    return true;
  }

  bool message(const QJsonValue& value, const QString& where, Message* out) {
    if (!value.isObject()) return fail(where, QStringLiteral("expected an object"));
    const QJsonObject object = value.toObject();
    const QString prefix = where + QLatin1Char('.');
    QString role;
    if (!string(object, QStringLiteral("role"), prefix, true, &role)) return false;
    const auto parsed = role_from_name(role);
    if (!parsed) {
      return fail(prefix + QStringLiteral("role"),
                  QStringLiteral("\"%1\" is not one of system, user, assistant, tool").arg(role));
    }
    out->role = *parsed;
    if (!string(object, QStringLiteral("text"), prefix, true, &out->text) ||
        !tokens(object.value(QStringLiteral("tokens")), prefix + QStringLiteral("tokens"),
                &out->tokens) ||
        !time(object, QStringLiteral("created"), prefix, &out->created) ||
        !time(object, QStringLiteral("updated"), prefix, &out->updated) ||
        !tools(object, prefix, out)) {
      return false;
    }
    QString image_where;
    QString image_problem;
    if (!detail::chat_images_from_json(object.value(QStringLiteral("images")), &out->images,
                                       &image_where, &image_problem)) {
      return fail(prefix + image_where, image_problem);
    }
    const QJsonValue stats = object.value(QStringLiteral("stats"));
    if (!stats.isUndefined() && !stats.isNull()) {
      if (!stats.isObject())
        return fail(prefix + QStringLiteral("stats"), QStringLiteral("expected an object"));
      out->stats = GenerationStats::from_json(stats.toObject());
    }
    return true;
  }

 private:
  QString* error_;
};

}  // namespace

QByteArray chat_to_json(const ChatDocument& document) {
  // A document without ids is one branch; so is a file without them.
  const bool branched = std::any_of(document.messages.begin(), document.messages.end(),
                                    [](const Message& m) { return raw(m.id) != 0; });
  QJsonArray messages;
  bool any_images = false;
  for (const Message& message : document.messages) {
    any_images = any_images || !message.images.isEmpty();
    QJsonObject object{{QStringLiteral("role"), role_name(message.role)},
                       {QStringLiteral("text"), message.text},
                       {QStringLiteral("created"), iso(message.created)},
                       {QStringLiteral("updated"), iso(message.updated)}};
    if (branched) {
      object.insert(QStringLiteral("id"), raw(message.id));
      object.insert(QStringLiteral("parent"),
                    message.parent ? QJsonValue(raw(*message.parent)) : QJsonValue());
    }
    if (!message.tokens.empty()) {
      QJsonArray tokens;
      for (std::int32_t token : message.tokens)
        tokens.append(token);
      object.insert(QStringLiteral("tokens"), tokens);
    }
    if (message.stats) object.insert(QStringLiteral("stats"), message.stats->to_json());
    if (!message.tool_calls.isEmpty()) {
      QJsonArray calls;
      for (const ToolCall& call : message.tool_calls)
        calls.append(call.to_json());
      object.insert(QStringLiteral("tool_calls"), calls);
    }
    if (message.tool_result) {
      object.insert(QStringLiteral("tool_result"), message.tool_result->to_json());
    }
    if (!message.images.isEmpty()) {
      object.insert(QStringLiteral("images"), detail::chat_images_to_json(message.images));
    }
    messages.append(object);
  }
  const QJsonObject settings = chat_settings_to_json(document.settings);
  QJsonObject root{
      {QStringLiteral("format"), QString::fromLatin1(kChatFileFormat)},
      {QStringLiteral("version"), any_images ? kChatFileVersion : 3},
      {QStringLiteral("title"), document.title},
      {QStringLiteral("created"), iso(document.created)},
      {QStringLiteral("updated"), iso(document.updated)},
      {QStringLiteral("model"), QJsonObject{{QStringLiteral("dir"), document.model.model_dir},
                                            {QStringLiteral("settings"), document.model.settings}}},
      {QStringLiteral("chat_settings"), settings},
      {QStringLiteral("messages"), messages},
  };
  if (branched && document.current) root.insert(QStringLiteral("current"), raw(*document.current));
  return QJsonDocument(root).toJson(QJsonDocument::Indented);
}

std::optional<ChatDocument> chat_from_json(const QByteArray& json, QString* error) {
  Reader reader(error);
  QJsonParseError parse{};
  const QJsonDocument parsed = QJsonDocument::fromJson(json, &parse);
  if (parse.error != QJsonParseError::NoError) {
    reader.fail(QString(), QStringLiteral("not valid JSON (%1 at byte %2)")
                               .arg(parse.errorString())
                               .arg(parse.offset));
    return std::nullopt;
  }
  const QJsonObject root = parsed.object();
  if (!parsed.isObject() ||
      root.value(QStringLiteral("format")).toString() != QLatin1String(kChatFileFormat)) {
    reader.fail(QString(), QStringLiteral("not a Quire chat export (no \"format\": \"%1\")")
                               .arg(QLatin1String(kChatFileFormat)));
    return std::nullopt;
  }
  const QJsonValue version = root.value(QStringLiteral("version"));
  if (!version.isDouble() || version.toInt(-1) < 1) {
    reader.fail(QStringLiteral("version"), QStringLiteral("expected a positive integer"));
    return std::nullopt;
  }
  if (version.toInt() > kChatFileVersion) {
    reader.fail(QString(),
                QStringLiteral("written by a newer version of Quire (format version %1; "
                               "this version reads up to %2). Update Quire to import it.")
                    .arg(version.toInt())
                    .arg(kChatFileVersion));
    return std::nullopt;
  }
  ChatDocument document;
  if (!reader.string(root, QStringLiteral("title"), QString(), true, &document.title) ||
      !reader.time(root, QStringLiteral("created"), QString(), &document.created) ||
      !reader.time(root, QStringLiteral("updated"), QString(), &document.updated)) {
    return std::nullopt;
  }
  const QJsonValue model = root.value(QStringLiteral("model"));
  if (!model.isUndefined()) {
    const QJsonObject object = model.toObject();
    if (!model.isObject() || !reader.string(object, QStringLiteral("dir"), QStringLiteral("model."),
                                            false, &document.model.model_dir)) {
      if (!model.isObject())
        reader.fail(QStringLiteral("model"), QStringLiteral("expected an object"));
      return std::nullopt;
    }
    document.model.settings = object.value(QStringLiteral("settings")).toObject();
  }
  const QJsonValue messages = root.value(QStringLiteral("messages"));
  if (!messages.isArray()) {
    reader.fail(QStringLiteral("messages"), QStringLiteral("expected an array"));
    return std::nullopt;
  }
  // Version 1 has no branches: its messages are one, in order.
  const bool tree = version.toInt() >= 2;
  if (tree && !reader.settings(root.value(QStringLiteral("chat_settings")), &document.settings)) {
    return std::nullopt;
  }
  const QJsonArray array = messages.toArray();
  QSet<qint64> ids;
  for (qsizetype i = 0; i < array.size(); ++i) {
    Message message;
    const QString where = QStringLiteral("messages[%1]").arg(i);
    if (!reader.message(array.at(i), where, &message)) return std::nullopt;
    message.position = static_cast<int>(i);
    if (tree) {
      const QJsonObject object = array.at(i).toObject();
      std::optional<MessageId> id;
      if (!reader.id(object.value(QStringLiteral("id")), where + QStringLiteral(".id"), &id) ||
          !reader.id(object.value(QStringLiteral("parent")), where + QStringLiteral(".parent"),
                     &message.parent)) {
        return std::nullopt;
      }
      // Either every message has an id or none has (one branch).
      if (id.has_value() != (i == 0 ? id.has_value() : !ids.isEmpty())) {
        reader.fail(where + QStringLiteral(".id"),
                    QStringLiteral("expected an id on every message or on none"));
        return std::nullopt;
      }
      if (id && ids.contains(raw(*id))) {
        reader.fail(where + QStringLiteral(".id"),
                    QStringLiteral("%1 is the id of an earlier message").arg(raw(*id)));
        return std::nullopt;
      }
      if (message.parent && !ids.contains(raw(*message.parent))) {
        reader.fail(where + QStringLiteral(".parent"),
                    QStringLiteral("expected the id of an earlier message"));
        return std::nullopt;
      }
      if (id) {
        ids.insert(raw(*id));
        message.id = *id;
      }
    }
    document.messages << message;
  }
  if (tree && !ids.isEmpty()) {
    const QJsonValue current = root.value(QStringLiteral("current"));
    if (!reader.id(current, QStringLiteral("current"), &document.current)) return std::nullopt;
    if (document.current && !ids.contains(raw(*document.current))) {
      reader.fail(QStringLiteral("current"), QStringLiteral("expected the id of a message"));
      return std::nullopt;
    }
  }
  // Positions are depths, as in the store.
  QHash<qint64, int> depth;
  for (Message& message : document.messages) {
    if (raw(message.id) == 0) break;
    message.position = message.parent ? depth.value(raw(*message.parent)) + 1 : 0;
    depth.insert(raw(message.id), message.position);
  }
  return document;
}

}  // namespace quire::store
