#pragma once

// The JSON form of a chat's own settings: the "chat_settings" object of a chat
// file, also the "settings" object of a preset file. One reader and one writer,
// so that a field added to ChatSettings reaches every file that holds one.

#include <QJsonObject>
#include <QJsonValue>
#include <QString>
#include <optional>

#include "quire/app/store/chat_types.h"

namespace quire::store {

// Only the values that are set; an empty ChatSettings gives {}.
QJsonObject chat_settings_to_json(const ChatSettings& settings);

// Reads and validates (ChatSettings::problem()) a settings object. Undefined
// or null reads as empty settings. On failure returns nullopt and sets *error
// to the field and the problem, prefixed by `where`, e.g.
// "chat_settings.top_p: expected a number".
std::optional<ChatSettings> chat_settings_from_json(const QJsonValue& value, const QString& where,
                                                    QString* error);

}  // namespace quire::store
