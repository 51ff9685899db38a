// The settings a chat overrides (system prompt, sampling, prompt format):
// one nullable column each, NULL meaning "use the global setting".

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>

#include "chat_store_impl.h"

namespace quire::store {
namespace {

// A set but empty prompt stays set: QtSql would bind a null QString as NULL.
QVariant text_or_null(const std::optional<QString>& value) {
  if (!value) return QVariant(QMetaType::fromType<QString>());
  return QVariant(value->isNull() ? QStringLiteral("") : *value);
}
QVariant number_or_null(const std::optional<double>& value) {
  return value ? QVariant(*value) : QVariant(QMetaType::fromType<double>());
}

// A JSON column: NULL when `json` is empty.
QVariant json_or_null(bool empty, const QJsonDocument& json) {
  if (empty) return QVariant(QMetaType::fromType<QString>());
  return QVariant(QString::fromUtf8(json.toJson(QJsonDocument::Compact)));
}

QJsonObject biases_json(const QMap<QString, double>& biases) {
  QJsonObject object;
  for (auto it = biases.begin(); it != biases.end(); ++it)
    object.insert(it.key(), it.value());
  return object;
}

std::optional<QString> text_of(const QVariant& value) {
  if (value.isNull()) return std::nullopt;
  return value.toString();
}
std::optional<double> number_of(const QVariant& value) {
  if (value.isNull()) return std::nullopt;
  return value.toDouble();
}

}  // namespace

namespace detail {

std::optional<ChatSettings> read_settings(StoreState& d, ChatId chat) {
  Run run(d.sql(),
          QStringLiteral("SELECT system_prompt, temperature, top_p, min_p,"
                         " repetition_penalty, max_new_tokens, prompt_format,"
                         " tools_enabled, always_allowed_tools, tuned_sampling, context_overflow,"
                         " banned_strings, logit_bias_text FROM chats WHERE id = ?"));
  run << raw(chat);
  if (!run.exec()) {
    d.fail_sql(QStringLiteral("read a chat's settings"), run.error());
    return std::nullopt;
  }
  if (!run.next()) {
    d.fail(StoreError::NotFound, QStringLiteral("There is no chat %1.").arg(raw(chat)));
    return std::nullopt;
  }
  ChatSettings settings;
  settings.system_prompt = text_of(run.value(0));
  settings.temperature = number_of(run.value(1));
  settings.top_p = number_of(run.value(2));
  settings.min_p = number_of(run.value(3));
  settings.repetition_penalty = number_of(run.value(4));
  if (!run.value(5).isNull()) settings.max_new_tokens = run.value(5).toInt();
  settings.prompt_format = text_of(run.value(6));
  if (!run.value(7).isNull()) settings.tools_enabled = run.value(7).toLongLong() != 0;
  if (!run.value(8).isNull()) {
    for (const QJsonValue& tool :
         QJsonDocument::fromJson(run.value(8).toString().toUtf8()).array()) {
      if (tool.isString()) settings.always_allowed_tools << tool.toString();
    }
  }
  if (!run.value(9).isNull()) {
    // Written by write_settings from checked values; a value that no longer
    // reads (edited by hand) follows the global settings again.
    TunedSampling tuned;
    const QJsonDocument stored = QJsonDocument::fromJson(run.value(9).toString().toUtf8());
    if (stored.isObject() && TunedSampling::from_json(stored.object(), &tuned).isEmpty()) {
      settings.tuned_sampling = tuned;
    }
  }
  settings.context_overflow = text_of(run.value(10));
  // Both written from checked values; entries that no longer read (edited
  // by hand) are left out.
  for (const QJsonValue& text :
       QJsonDocument::fromJson(run.value(11).toString().toUtf8()).array()) {
    if (text.isString() && !text.toString().isEmpty()) settings.banned_strings << text.toString();
  }
  const QJsonObject biases = QJsonDocument::fromJson(run.value(12).toString().toUtf8()).object();
  for (auto it = biases.begin(); it != biases.end(); ++it) {
    const double bias = it.value().toDouble(kLogitBiasLimit + 1);
    if (!it.key().isEmpty() && bias >= -kLogitBiasLimit && bias <= kLogitBiasLimit)
      settings.logit_bias_text.insert(it.key(), bias);
  }
  return settings;
}

bool write_settings(StoreState& d, ChatId chat, const ChatSettings& settings) {
  const QString problem = settings.problem();
  if (!problem.isEmpty()) {
    return d.fail(StoreError::InvalidArgument,
                  QStringLiteral("The chat's settings were not changed: %1.").arg(problem));
  }
  Run run(d.sql(),
          QStringLiteral("UPDATE chats SET system_prompt = ?, temperature = ?, top_p = ?,"
                         " min_p = ?, repetition_penalty = ?, max_new_tokens = ?,"
                         " prompt_format = ?, tools_enabled = ?,"
                         " always_allowed_tools = ?, tuned_sampling = ?, context_overflow = ?,"
                         " banned_strings = ?, logit_bias_text = ? WHERE id = ?"));
  run << text_or_null(settings.system_prompt) << number_or_null(settings.temperature)
      << number_or_null(settings.top_p) << number_or_null(settings.min_p)
      << number_or_null(settings.repetition_penalty)
      << (settings.max_new_tokens ? QVariant(*settings.max_new_tokens)
                                  : QVariant(QMetaType::fromType<int>()))
      << text_or_null(settings.prompt_format)
      << (settings.tools_enabled ? QVariant(*settings.tools_enabled ? 1 : 0)
                                 : QVariant(QMetaType::fromType<int>()))
      << (settings.always_allowed_tools.isEmpty()
              ? QVariant(QMetaType::fromType<QString>())
              : QVariant(QString::fromUtf8(
                    QJsonDocument(QJsonArray::fromStringList(settings.always_allowed_tools))
                        .toJson(QJsonDocument::Compact))))
      << (settings.tuned_sampling
              ? QVariant(QString::fromUtf8(QJsonDocument(settings.tuned_sampling->to_json())
                                               .toJson(QJsonDocument::Compact)))
              : QVariant(QMetaType::fromType<QString>()))
      << text_or_null(settings.context_overflow)
      << json_or_null(settings.banned_strings.isEmpty(),
                      QJsonDocument(QJsonArray::fromStringList(settings.banned_strings)))
      << json_or_null(settings.logit_bias_text.isEmpty(),
                      QJsonDocument(biases_json(settings.logit_bias_text)))
      << raw(chat);
  if (!run.exec()) return d.fail_sql(QStringLiteral("save a chat's settings"), run.error());
  if (run.rows_affected() == 0) {
    return d.fail(StoreError::NotFound, QStringLiteral("There is no chat %1.").arg(raw(chat)));
  }
  return true;
}

}  // namespace detail

std::optional<ChatSettings> ChatStore::chat_settings(ChatId chat) const {
  if (!d_->require_open()) return std::nullopt;
  auto settings = detail::read_settings(*d_, chat);
  if (settings) d_->succeed();
  return settings;
}

bool ChatStore::set_chat_settings(ChatId chat, const ChatSettings& settings) {
  if (!d_->require_open()) return false;
  if (!detail::write_settings(*d_, chat, settings)) return false;
  d_->succeed();
  emit chat_changed(chat);
  return true;
}

}  // namespace quire::store
