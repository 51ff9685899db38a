#include "quire/ui/settings_validation.h"

#include <QFileInfo>
#include <QLocale>
#include <QUrl>
#include <algorithm>

namespace quire::ui {
namespace {

QString device_label(const QStringList& names, int index) {
  if (index >= 0 && index < names.size()) return names.at(index);
  return QStringLiteral("device %1").arg(index);
}

// The devices the plan would use: the chosen ones, or every known one.
QList<int> selected_devices(const EngineSettings& settings, const QStringList& names) {
  if (!settings.devices.isEmpty()) return settings.devices;
  QList<int> all;
  for (int i = 0; i < names.size(); ++i)
    all.append(i);
  return all;
}

void check_manual_split(const EngineSettings& settings, const QStringList& names,
                        QList<SettingsIssue>& issues) {
  if (settings.split != EngineSettings::Split::Manual) return;
  const QList<int> devices = selected_devices(settings, names);
  if (devices.isEmpty()) {
    // Device names unknown and "all devices": only "some limit" can be asked.
    bool any = false;
    for (double gb : settings.manual_gb)
      any = any || gb > 0;
    if (!any) {
      issues.append({SettingsIssue::Field::ManualGb, -1,
                     QStringLiteral("Enter the GB Quire may use on at least one device.")});
    }
    return;
  }
  for (int device : devices) {
    if (settings.manual_gb.value(device) > 0) continue;
    issues.append({SettingsIssue::Field::ManualGb, device,
                   QStringLiteral("Enter the GB Quire may use on %1, or leave the device out.")
                       .arg(device_label(names, device))});
  }
}

// The device that holds every layer's pages must be one the plan uses.
void check_cache_device(const EngineSettings& settings, const QStringList& names,
                        QList<SettingsIssue>& issues) {
  const int device = settings.cache_device;
  if (device < 0) return;
  if (!settings.devices.isEmpty() && !settings.devices.contains(device)) {
    issues.append({SettingsIssue::Field::CacheDevice, device,
                   QStringLiteral("The cache device, %1, is not among the chosen devices: choose "
                                  "it too, or keep the cache with its layers.")
                       .arg(device_label(names, device))});
  } else if (!names.isEmpty() && device >= names.size()) {
    issues.append({SettingsIssue::Field::CacheDevice, device,
                   QStringLiteral("The cache device, device %1, is not present on this computer.")
                       .arg(device)});
  }
}

}  // namespace

QList<SettingsIssue> validate_settings(const EngineSettings& settings,
                                       const QStringList& device_names,
                                       qint64 model_context_tokens) {
  QList<SettingsIssue> issues;
  if (is_remote(settings)) {
    // Nothing runs here: only the address can be wrong before connecting.
    QString typed = settings.remote_url.trimmed();
    if (!typed.contains(QStringLiteral("://"))) typed.prepend(QStringLiteral("http://"));
    const QUrl url(typed, QUrl::StrictMode);
    if (!url.isValid() || url.host().isEmpty() ||
        (url.scheme() != QLatin1String("http") && url.scheme() != QLatin1String("https"))) {
      issues.append({SettingsIssue::Field::RemoteUrl, -1,
                     QStringLiteral("This is not an http or https address such as "
                                    "http://gpu-box:8000/v1.")});
    }
    return issues;
  }
  if (!settings.model_directory.isEmpty() && !QFileInfo(settings.model_directory).isDir()) {
    issues.append({SettingsIssue::Field::ModelDirectory, -1,
                   QStringLiteral("There is no folder at this path.")});
  }
  if (!device_names.isEmpty()) {
    for (int device : settings.devices) {
      if (device >= 0 && device < device_names.size()) continue;
      issues.append({SettingsIssue::Field::Devices, device,
                     QStringLiteral("Device %1 is not present on this computer.").arg(device)});
    }
  }
  check_manual_split(settings, device_names, issues);
  check_cache_device(settings, device_names, issues);
  const qint64 context = model_context_tokens > 0
                             ? std::min<qint64>(settings.max_context, model_context_tokens)
                             : settings.max_context;
  if (settings.cache_tokens < context) {
    const QLocale locale;
    issues.append({SettingsIssue::Field::CacheTokens, -1,
                   QStringLiteral("The cache holds %1 tokens, fewer than one full context of %2.")
                       .arg(locale.toString(settings.cache_tokens), locale.toString(context))});
  }
  return issues;
}

}  // namespace quire::ui
