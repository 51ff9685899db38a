#pragma once

// A preset: a name plus a chat's settings (system prompt, sampling, longest
// reply, prompt format), as a file people can share:
//   {"format": "quire-preset", "version": 1, "name": "Creative",
//    "settings": {...the chat file's "chat_settings" object...}}
// The settings use the chat file's own reader and writer
// (chat_settings_json.h), so every field a chat gains, a preset gains too.
// The tool fields (tools on or off, tools always allowed) belong to a chat and
// are never part of a preset.

#include <QByteArray>
#include <QList>
#include <QString>
#include <optional>

#include "quire/app/store/chat_types.h"

namespace quire::presets {

inline constexpr char kPresetFileFormat[] = "quire-preset";
inline constexpr int kPresetFileVersion = 1;

struct Preset {
  QString name;
  store::ChatSettings settings;
  // Shipped in the binary; a user preset of the same name overrides it.
  bool built_in = false;
  bool operator==(const Preset&) const = default;
};

// `settings` without the fields a preset does not hold (the tool fields).
store::ChatSettings preset_values(const store::ChatSettings& settings);

// An empty string when `name` can name a preset file, else why not, e.g.
// "a preset name cannot contain '/'".
QString preset_name_problem(const QString& name);

QByteArray preset_to_json(const Preset& preset);
// nullopt with *error naming the field and the problem, e.g.
// "settings.top_p: expected a number". The tool fields are dropped.
std::optional<Preset> preset_from_json(const QByteArray& json, QString* error);
// Reads a preset file; errors start with the file's path.
std::optional<Preset> read_preset_file(const QString& path, QString* error);

// The presets shipped with Quire, in the order the lists show them.
QList<Preset> built_in_presets();

}  // namespace quire::presets
