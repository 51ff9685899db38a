#pragma once

// Problems with a set of engine settings that the panel shows next to the
// field concerned and that keep it from applying them. Plain rules over plain
// data, so the application can run the same checks on settings it loaded.

#include <QList>
#include <QString>
#include <QStringList>

#include "quire/ui/settings_data.h"

namespace quire::ui {

struct SettingsIssue {
  enum class Field { ModelDirectory, Devices, ManualGb, CacheTokens, CacheDevice, RemoteUrl };

  Field field = Field::ModelDirectory;
  int device = -1;  // Devices, ManualGb, CacheDevice: the device index concerned, if one
  QString message;  // a sentence a user can act on

  friend bool operator==(const SettingsIssue&, const SettingsIssue&) = default;
};

// `device_names` are the devices the backend offers, by index; when it is
// empty (not known yet) the checks that need them are skipped.
// `model_context_tokens` is the most the chosen model reads (its plan says
// it; 0 when not known): a context setting above it is capped there, so the
// cache need only hold the capped context.
QList<SettingsIssue> validate_settings(const EngineSettings& settings,
                                       const QStringList& device_names,
                                       qint64 model_context_tokens = 0);

}  // namespace quire::ui
