#pragma once

// A folder of preset files (NAME.json) plus the built-in presets. A file's
// name is the preset's name in the library; the "name" inside a file is what
// an import goes by. Writes are atomic (QSaveFile).

#include <QList>
#include <QString>
#include <QStringList>
#include <optional>

#include "quire/app/presets/preset.h"

namespace quire::presets {

// $XDG_CONFIG_HOME/quire/presets (~/.config/quire/presets), for the app and
// quire-cli alike.
QString default_presets_dir();

class PresetLibrary {
 public:
  explicit PresetLibrary(QString dir);

  const QString& dir() const { return dir_; }

  // Built-ins and the folder's presets, a user preset replacing a built-in of
  // the same name; built-ins first in their order, then the rest by name.
  // Files that cannot be read are left out and described in *problems.
  QList<Preset> list(QStringList* problems = nullptr) const;
  QStringList names() const;
  std::optional<Preset> find(const QString& name) const;
  // Whether the folder holds a file for `name` (a user preset).
  bool has_file(const QString& name) const;

  // Writes the preset's file (creating the folder); replaces one of the same
  // name.
  bool save(const Preset& preset, QString* error);
  // A built-in cannot be renamed (duplicate it instead); `to` must be free.
  bool rename(const QString& from, const QString& to, QString* error);
  // Deletes the user's file; a built-in it overrode shows again. A built-in
  // itself cannot be deleted.
  bool remove(const QString& name, QString* error);

  // `name` when no preset has it, else "name (2)", "name (3)", ...
  QString free_name(const QString& name) const;

  // Reads and validates a preset file and adds it under a free name (its
  // "name", else the file's base name). Errors name the file and the problem.
  std::optional<Preset> import_file(const QString& path, QString* error);
  bool export_file(const QString& name, const QString& path, QString* error) const;

  // What `--preset` and the server's "preset" accept: a preset's name, or the
  // path of a preset file (anything with '/' or ending in ".json"). Errors
  // list the available names.
  std::optional<Preset> resolve(const QString& name_or_file, QString* error) const;

 private:
  QString path_of(const QString& name) const;

  QString dir_;
};

}  // namespace quire::presets
