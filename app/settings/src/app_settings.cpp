#include "quire/app/app_settings.h"

#include <QSettings>
#include <algorithm>
#include <memory>
#include <utility>

#include "quire/ui/settings_limits.h"
#include "settings_table.h"
#include "stored_values.h"

namespace quire::app {
namespace {

const QString kFormatVersionKey = QStringLiteral("meta/format_version");
const QString kHostCacheKey = QStringLiteral("engine/host_cache_mib");

// INI everywhere, the registry on Windows included: one format to read, to
// test and to repair by hand.
std::unique_ptr<QSettings> open_settings(const QString& file_path) {
  if (file_path.isEmpty()) {
    return std::make_unique<QSettings>(QSettings::IniFormat, QSettings::UserScope,
                                       AppSettings::kOrganization, AppSettings::kApplication);
  }
  return std::make_unique<QSettings>(file_path, QSettings::IniFormat);
}

}  // namespace

QString SettingsProblem::text() const {
  if (key.isEmpty()) return reason;
  return QStringLiteral("%1: \"%2\" %3; using the default").arg(key, stored, reason);
}

AppSettings::AppSettings() {
  resetToDefaults();
}

AppSettings::AppSettings(QString file_path) : file_path_(std::move(file_path)) {
  resetToDefaults();
}

QList<SettingKey> AppSettings::keys() {
  QList<SettingKey> keys;
  for (const SettingRow& row : setting_rows())
    keys.append({row.key, row.default_text});
  return keys;
}

void AppSettings::resetToDefaults() {
  for (const SettingRow& row : setting_rows())
    row.reset(*this);
}

QString AppSettings::filePath() const {
  return open_settings(file_path_)->fileName();
}

QList<SettingsProblem> AppSettings::load() {
  resetToDefaults();
  error_.clear();
  QList<SettingsProblem> problems;
  const std::unique_ptr<QSettings> stored = open_settings(file_path_);
  if (stored->status() != QSettings::NoError) {
    problems.append(
        {QString(), QString(),
         QStringLiteral("%1 could not be read; using the defaults").arg(stored->fileName())});
    return problems;
  }
  for (const SettingRow& row : setting_rows()) {
    const QVariant value = stored->value(row.key);
    // Missing, or an empty list, which QSettings writes as @Invalid().
    if (!value.isValid()) continue;
    const QString reason = row.load(*this, value);
    if (reason.isEmpty()) continue;
    row.reset(*this);
    problems.append({row.key, stored::describe(value), reason});
  }
  if (!stored->contains(kHostCacheKey) && free_memory_) {
    engine.host_cache_mib =
        std::min(host_cache_default_mib(free_memory_()), ui::limits::kHostCacheMib.max);
  }
  return problems;
}

bool AppSettings::save() {
  error_.clear();
  const std::unique_ptr<QSettings> stored = open_settings(file_path_);
  for (const SettingRow& row : setting_rows())
    stored->setValue(row.key, row.store(*this));
  stored->setValue(kFormatVersionKey, kFormatVersion);
  stored->sync();
  if (stored->status() == QSettings::NoError) return true;
  error_ = stored->status() == QSettings::AccessError
               ? QStringLiteral("%1 could not be written").arg(stored->fileName())
               : QStringLiteral("%1 could not be read back to update it").arg(stored->fileName());
  return false;
}

QList<SettingsProblem> AppSettings::normalize() {
  QList<SettingsProblem> problems;
  for (const SettingRow& row : setting_rows()) {
    const QVariant value = row.store(*this);
    const QString reason = row.load(*this, value);
    if (reason.isEmpty()) continue;
    row.reset(*this);
    problems.append({row.key, stored::describe(value), reason});
  }
  return problems;
}

QList<SettingsProblem> AppSettings::setEngineSettings(const ui::EngineSettings& settings) {
  engine = settings;
  return normalize();
}

QList<SettingsProblem> AppSettings::setServerSettings(const ui::ServerSettings& settings) {
  server = settings;
  return normalize();
}

void AppSettings::rememberModel(const QString& directory) {
  if (directory.isEmpty()) return;
  engine.recent_models.removeAll(directory);
  engine.recent_models.prepend(directory);
  while (engine.recent_models.size() > ui::limits::kMaxRecentModels) {
    engine.recent_models.removeLast();
  }
}

}  // namespace quire::app
