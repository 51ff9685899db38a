// The folder of preset files and the built-ins it overrides.

#include "quire/app/presets/preset_library.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QSaveFile>
#include <QStandardPaths>
#include <algorithm>

namespace quire::presets {
namespace {

constexpr char kPresetSuffix[] = ".json";

bool write_atomically(const QString& path, const QByteArray& bytes, QString* error) {
  QSaveFile file(path);
  if (file.open(QIODevice::WriteOnly) && file.write(bytes) == bytes.size() && file.commit())
    return true;
  if (error != nullptr)
    *error = QStringLiteral("Cannot write %1: %2.").arg(path, file.errorString());
  return false;
}

bool is_built_in_name(const QString& name) {
  const QList<Preset> built_ins = built_in_presets();
  return std::any_of(built_ins.begin(), built_ins.end(),
                     [&name](const Preset& preset) { return preset.name == name; });
}

}  // namespace

QString default_presets_dir() {
  // Not AppConfigLocation: that depends on the organization and application
  // names, which the app sets ("Quire/quire") and quire-cli does not; both
  // must find the same folder.
  return QStandardPaths::writableLocation(QStandardPaths::GenericConfigLocation) +
         QStringLiteral("/quire/presets");
}

PresetLibrary::PresetLibrary(QString dir) : dir_(std::move(dir)) {}

QString PresetLibrary::path_of(const QString& name) const {
  return QDir(dir_).filePath(name + QLatin1String(kPresetSuffix));
}

QList<Preset> PresetLibrary::list(QStringList* problems) const {
  QList<Preset> presets = built_in_presets();
  const QStringList files =
      QDir(dir_).entryList({QStringLiteral("*.json")}, QDir::Files | QDir::Readable, QDir::Name);
  QList<Preset> users;
  for (const QString& file : files) {
    const QString name = file.chopped(static_cast<qsizetype>(qstrlen(kPresetSuffix)));
    if (!preset_name_problem(name).isEmpty()) continue;
    QString problem;
    std::optional<Preset> preset = read_preset_file(QDir(dir_).filePath(file), &problem);
    if (!preset) {
      if (problems != nullptr) *problems << problem;
      continue;
    }
    preset->name = name;
    const auto built_in = std::find_if(presets.begin(), presets.end(),
                                       [&name](const Preset& p) { return p.name == name; });
    if (built_in != presets.end())
      *built_in = *preset;
    else
      users << *preset;
  }
  std::sort(users.begin(), users.end(), [](const Preset& a, const Preset& b) {
    return QString::localeAwareCompare(a.name, b.name) < 0;
  });
  return presets + users;
}

QStringList PresetLibrary::names() const {
  QStringList names;
  for (const Preset& preset : list())
    names << preset.name;
  return names;
}

std::optional<Preset> PresetLibrary::find(const QString& name) const {
  if (has_file(name)) {
    std::optional<Preset> preset = read_preset_file(path_of(name), nullptr);
    if (preset) {
      preset->name = name;
      return preset;
    }
  }
  for (const Preset& preset : built_in_presets()) {
    if (preset.name == name) return preset;
  }
  return std::nullopt;
}

bool PresetLibrary::has_file(const QString& name) const {
  return preset_name_problem(name).isEmpty() && QFileInfo(path_of(name)).isFile();
}

bool PresetLibrary::save(const Preset& preset, QString* error) {
  const QString problem = preset_name_problem(preset.name);
  if (!problem.isEmpty()) {
    if (error != nullptr)
      *error = QStringLiteral("Cannot save \"%1\": %2.").arg(preset.name, problem);
    return false;
  }
  const QString settings_problem = preset.settings.problem();
  if (!settings_problem.isEmpty()) {
    if (error != nullptr)
      *error = QStringLiteral("Cannot save \"%1\": %2.").arg(preset.name, settings_problem);
    return false;
  }
  if (!QDir().mkpath(dir_)) {
    if (error != nullptr) *error = QStringLiteral("Cannot create the folder %1.").arg(dir_);
    return false;
  }
  Preset stored = preset;
  stored.built_in = false;
  return write_atomically(path_of(preset.name), preset_to_json(stored), error);
}

bool PresetLibrary::rename(const QString& from, const QString& to, QString* error) {
  const auto fail = [error](const QString& problem) {
    if (error != nullptr) *error = problem;
    return false;
  };
  if (from == to) return true;
  if (!has_file(from)) {
    if (is_built_in_name(from)) {
      return fail(QStringLiteral("\"%1\" is built in and cannot be renamed; duplicate it and "
                                 "rename the copy.")
                      .arg(from));
    }
    return fail(QStringLiteral("There is no preset \"%1\".").arg(from));
  }
  const QString problem = preset_name_problem(to);
  if (!problem.isEmpty())
    return fail(QStringLiteral("Cannot rename to \"%1\": %2.").arg(to, problem));
  if (find(to)) {
    return fail(
        QStringLiteral("A preset named \"%1\" exists already; choose another name.").arg(to));
  }
  std::optional<Preset> preset = find(from);
  if (!preset) return fail(QStringLiteral("Cannot read the preset \"%1\".").arg(from));
  preset->name = to;
  if (!save(*preset, error)) return false;
  if (!QFile::remove(path_of(from))) {
    QFile::remove(path_of(to));
    return fail(QStringLiteral("Cannot remove %1.").arg(path_of(from)));
  }
  return true;
}

bool PresetLibrary::remove(const QString& name, QString* error) {
  if (!has_file(name)) {
    if (error != nullptr) {
      *error = is_built_in_name(name)
                   ? QStringLiteral("\"%1\" is built in and cannot be deleted.").arg(name)
                   : QStringLiteral("There is no preset \"%1\".").arg(name);
    }
    return false;
  }
  if (!QFile::remove(path_of(name))) {
    if (error != nullptr) *error = QStringLiteral("Cannot delete %1.").arg(path_of(name));
    return false;
  }
  return true;
}

QString PresetLibrary::free_name(const QString& name) const {
  const QStringList taken = names();
  if (!taken.contains(name)) return name;
  for (int n = 2;; ++n) {
    const QString candidate = QStringLiteral("%1 (%2)").arg(name).arg(n);
    if (!taken.contains(candidate)) return candidate;
  }
}

std::optional<Preset> PresetLibrary::import_file(const QString& path, QString* error) {
  std::optional<Preset> preset = read_preset_file(path, error);
  if (!preset) return std::nullopt;
  if (preset->name.isEmpty()) {
    preset->name = QFileInfo(path).completeBaseName();
    const QString problem = preset_name_problem(preset->name);
    if (!problem.isEmpty()) {
      if (error != nullptr)
        *error = QStringLiteral("%1: the file has no \"name\" and %2").arg(path, problem);
      return std::nullopt;
    }
  }
  preset->name = free_name(preset->name);
  if (!save(*preset, error)) return std::nullopt;
  return preset;
}

bool PresetLibrary::export_file(const QString& name, const QString& path, QString* error) const {
  const std::optional<Preset> preset = find(name);
  if (!preset) {
    if (error != nullptr) *error = QStringLiteral("There is no preset \"%1\".").arg(name);
    return false;
  }
  return write_atomically(path, preset_to_json(*preset), error);
}

std::optional<Preset> PresetLibrary::resolve(const QString& name_or_file, QString* error) const {
  if (name_or_file.contains(u'/') || name_or_file.contains(u'\\') ||
      name_or_file.endsWith(QLatin1String(kPresetSuffix), Qt::CaseInsensitive)) {
    std::optional<Preset> preset = read_preset_file(name_or_file, error);
    if (preset && preset->name.isEmpty()) preset->name = QFileInfo(name_or_file).completeBaseName();
    return preset;
  }
  std::optional<Preset> preset = find(name_or_file);
  if (!preset && error != nullptr) {
    *error = QStringLiteral("There is no preset \"%1\". Available presets: %2.")
                 .arg(name_or_file, names().join(QStringLiteral(", ")));
  }
  return preset;
}

}  // namespace quire::presets
