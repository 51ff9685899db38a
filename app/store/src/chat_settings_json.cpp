// The "chat_settings" object of a chat file; presets hold the same object.

#include "quire/app/store/chat_settings_json.h"

#include <QJsonArray>

namespace quire::store {
namespace {

// Checks with a field path: every one that fails says which field and why.
class SettingsReader {
 public:
  SettingsReader(QString prefix, QString* error) : prefix_(std::move(prefix)), error_(error) {}

  bool fail(const QString& field, const QString& problem) {
    if (error_ != nullptr) {
      const QString where = field.isEmpty() ? prefix_.chopped(1) : prefix_ + field;
      *error_ = where.isEmpty() ? problem : where + QStringLiteral(": ") + problem;
    }
    return false;
  }

  bool text(const QJsonObject& object, const QString& key, std::optional<QString>* out) {
    const QJsonValue value = object.value(key);
    if (value.isUndefined() || value.isNull()) return true;
    if (!value.isString()) return fail(key, QStringLiteral("expected a string"));
    *out = value.toString();
    return true;
  }

  bool number(const QJsonObject& object, const QString& key, std::optional<double>* out) {
    const QJsonValue value = object.value(key);
    if (value.isUndefined() || value.isNull()) return true;
    if (!value.isDouble()) return fail(key, QStringLiteral("expected a number"));
    *out = value.toDouble();
    return true;
  }

  bool integer(const QJsonObject& object, const QString& key, std::optional<int>* out) {
    std::optional<double> value;
    if (!number(object, key, &value)) return false;
    if (!value) return true;
    if (*value < -2147483648.0 || *value > 2147483647.0 ||
        *value != static_cast<double>(static_cast<int>(*value))) {
      return fail(key, QStringLiteral("expected an integer"));
    }
    *out = static_cast<int>(*value);
    return true;
  }

  bool boolean(const QJsonObject& object, const QString& key, std::optional<bool>* out) {
    const QJsonValue value = object.value(key);
    if (value.isUndefined() || value.isNull()) return true;
    if (!value.isBool()) return fail(key, QStringLiteral("expected true or false"));
    *out = value.toBool();
    return true;
  }

  // An array of strings; `expected` says what is wrong with anything else.
  bool strings(const QJsonObject& object, const QString& key, const QString& expected,
               QStringList* out) {
    const QJsonValue value = object.value(key);
    if (value.isUndefined() || value.isNull()) return true;
    if (!value.isArray()) return fail(key, expected);
    for (const QJsonValue& text : value.toArray()) {
      if (!text.isString()) return fail(key, expected);
      *out << text.toString();
    }
    return true;
  }

  // {"text": bias, ...}, as the server's text-keyed logit_bias.
  bool biases(const QJsonObject& object, const QString& key, QMap<QString, double>* out) {
    const QJsonValue value = object.value(key);
    if (value.isUndefined() || value.isNull()) return true;
    if (!value.isObject()) return fail(key, QStringLiteral("expected an object of text to bias"));
    const QJsonObject biases = value.toObject();
    for (auto it = biases.begin(); it != biases.end(); ++it) {
      if (!it.value().isDouble()) {
        return fail(key + QStringLiteral("[\"") + it.key() + QStringLiteral("\"]"),
                    QStringLiteral("expected a number"));
      }
      out->insert(it.key(), it.value().toDouble());
    }
    return true;
  }

  // DRY, XTC, top-nσ and mirostat: one object, checked by TunedSampling.
  bool tuned(const QJsonObject& object, const QString& key, std::optional<TunedSampling>* out) {
    const QJsonValue value = object.value(key);
    if (value.isUndefined() || value.isNull()) return true;
    if (!value.isObject()) return fail(key, QStringLiteral("expected an object"));
    TunedSampling tuned;
    const QString problem = TunedSampling::from_json(value.toObject(), &tuned);
    if (!problem.isEmpty()) return fail(key, problem);
    *out = tuned;
    return true;
  }

 private:
  QString prefix_;
  QString* error_;
};

}  // namespace

QJsonObject chat_settings_to_json(const ChatSettings& chat) {
  QJsonObject settings;
  const auto put = [&settings](const char* key, const auto& value) {
    if (value) settings.insert(QLatin1String(key), *value);
  };
  put("system_prompt", chat.system_prompt);
  put("temperature", chat.temperature);
  put("top_p", chat.top_p);
  put("min_p", chat.min_p);
  put("repetition_penalty", chat.repetition_penalty);
  put("max_new_tokens", chat.max_new_tokens);
  put("prompt_format", chat.prompt_format);
  put("tools_enabled", chat.tools_enabled);
  put("context_overflow", chat.context_overflow);
  if (!chat.always_allowed_tools.isEmpty()) {
    settings.insert(QStringLiteral("always_allowed_tools"),
                    QJsonArray::fromStringList(chat.always_allowed_tools));
  }
  if (chat.tuned_sampling) {
    settings.insert(QStringLiteral("tuned_sampling"), chat.tuned_sampling->to_json());
  }
  if (!chat.banned_strings.isEmpty()) {
    settings.insert(QStringLiteral("banned_strings"),
                    QJsonArray::fromStringList(chat.banned_strings));
  }
  if (!chat.logit_bias_text.isEmpty()) {
    QJsonObject biases;
    for (auto it = chat.logit_bias_text.begin(); it != chat.logit_bias_text.end(); ++it)
      biases.insert(it.key(), it.value());
    settings.insert(QStringLiteral("logit_bias"), biases);
  }
  return settings;
}

std::optional<ChatSettings> chat_settings_from_json(const QJsonValue& value, const QString& where,
                                                    QString* error) {
  SettingsReader reader(where.isEmpty() ? QString() : where + QLatin1Char('.'), error);
  ChatSettings out;
  if (value.isUndefined() || value.isNull()) return out;
  if (!value.isObject()) {
    reader.fail(QString(), QStringLiteral("expected an object"));
    return std::nullopt;
  }
  const QJsonObject object = value.toObject();
  if (!reader.text(object, QStringLiteral("system_prompt"), &out.system_prompt) ||
      !reader.number(object, QStringLiteral("temperature"), &out.temperature) ||
      !reader.number(object, QStringLiteral("top_p"), &out.top_p) ||
      !reader.number(object, QStringLiteral("min_p"), &out.min_p) ||
      !reader.number(object, QStringLiteral("repetition_penalty"), &out.repetition_penalty) ||
      !reader.integer(object, QStringLiteral("max_new_tokens"), &out.max_new_tokens) ||
      !reader.text(object, QStringLiteral("prompt_format"), &out.prompt_format) ||
      !reader.boolean(object, QStringLiteral("tools_enabled"), &out.tools_enabled) ||
      !reader.strings(object, QStringLiteral("always_allowed_tools"),
                      QStringLiteral("expected an array of names"), &out.always_allowed_tools) ||
      !reader.text(object, QStringLiteral("context_overflow"), &out.context_overflow) ||
      !reader.tuned(object, QStringLiteral("tuned_sampling"), &out.tuned_sampling) ||
      !reader.strings(object, QStringLiteral("banned_strings"),
                      QStringLiteral("expected an array of strings"), &out.banned_strings) ||
      !reader.biases(object, QStringLiteral("logit_bias"), &out.logit_bias_text)) {
    return std::nullopt;
  }
  const QString problem = out.problem();
  if (!problem.isEmpty()) {
    reader.fail(QString(), problem);
    return std::nullopt;
  }
  return out;
}

}  // namespace quire::store
