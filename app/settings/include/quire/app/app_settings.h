#pragma once

// Quire's settings as one typed object. Every stored key, its default and the
// values it accepts are in one table (src/settings_table.cpp); loading is
// tolerant: a value that is missing keeps its default, a value that cannot be
// used falls back to its default and is reported, and nothing stored can make
// loading fail.

#include <QByteArray>
#include <QList>
#include <QString>
#include <utility>

#include "quire/app/host_cache_default.h"
#include "quire/ui/server_settings.h"
#include "quire/ui/settings_data.h"

namespace quire::app {

// Where the main window was and how it was laid out (Qt's own encodings).
struct WindowState {
  QByteArray geometry;  // QWidget::saveGeometry()
  QByteArray state;     // QMainWindow::saveState()
  QByteArray splitter;  // QSplitter::saveState() of chat list | chat | memory panel

  friend bool operator==(const WindowState&, const WindowState&) = default;
};

struct UiPreferences {
  QString theme;                 // "system", "light" or "dark"
  int chat_font_point_size = 0;  // 0: the system's font size
  bool show_memory_panel = false;
  bool send_with_enter = false;  // Enter sends (Shift+Enter breaks the line); else Ctrl+Enter
  QString last_chat;             // the chat open at exit, reopened at start

  friend bool operator==(const UiPreferences&, const UiPreferences&) = default;
};

// A stored value that could not be used; its default was used instead.
struct SettingsProblem {
  QString key;     // "engine/max_context"; empty for the file as a whole
  QString stored;  // the value as found, for the message
  QString reason;  // "is not a whole number"

  // "engine/max_context: \"lots\" is not a whole number; using the default"
  QString text() const;
  friend bool operator==(const SettingsProblem&, const SettingsProblem&) = default;
};

// One row of the table, for documentation and tests.
struct SettingKey {
  QString key;
  QString default_value;  // as it is stored
};

class AppSettings {
 public:
  inline static const QString kOrganization = QStringLiteral("Quire");
  inline static const QString kApplication = QStringLiteral("quire");
  // Written with every save so a later version can tell what it reads.
  static constexpr int kFormatVersion = 1;

  // Defaults, stored where QSettings(kOrganization, kApplication) keeps them
  // (~/.config/Quire/quire.conf on Linux).
  AppSettings();
  // Defaults, stored in the INI file at `file_path` (tests, portable setups).
  explicit AppSettings(QString file_path);

  ui::EngineSettings engine;
  ui::ServerSettings server;
  WindowState window;
  UiPreferences preferences;

  // The table: every key in the order it is stored, with its default.
  static QList<SettingKey> keys();

  // Replaces every value with what is stored; see the note at the top. A
  // file without a host-memory tier (the first run) gets a share of the
  // memory free now (host_cache_default_mib); once saved, it stays as set.
  QList<SettingsProblem> load();
  // Where load() learns how much memory is free (tests give a figure).
  void setFreeMemorySource(FreeMemorySource source) { free_memory_ = std::move(source); }
  // Writes every value. False, with errorString(), when the file could not be
  // written; QSettings replaces it atomically, so a failed save leaves the old
  // file whole.
  bool save();
  QString errorString() const { return error_; }
  // The file load() and save() use.
  QString filePath() const;

  void resetToDefaults();

  // The engine settings for the panel, and back. Values out of range are
  // replaced by their defaults and reported, exactly as when loading.
  ui::EngineSettings engineSettings() const { return engine; }
  QList<SettingsProblem> setEngineSettings(const ui::EngineSettings& settings);

  // The server settings, checked as when loading (a port outside
  // limits::kServerPort becomes the default, reported).
  QList<SettingsProblem> setServerSettings(const ui::ServerSettings& settings);

  // Puts `directory` first in the recent models, once, keeping the list short.
  void rememberModel(const QString& directory);

  // Values only: where they are stored does not count.
  friend bool operator==(const AppSettings& a, const AppSettings& b) {
    return a.engine == b.engine && a.server == b.server && a.window == b.window &&
           a.preferences == b.preferences;
  }

 private:
  // Sends every value through the table's checks, as if it had been stored
  // and loaded, so values set in code obey the same rules as stored ones.
  QList<SettingsProblem> normalize();

  QString file_path_;  // empty: QSettings' own location for Quire
  FreeMemorySource free_memory_ = system_free_memory;
  QString error_;
};

}  // namespace quire::app
