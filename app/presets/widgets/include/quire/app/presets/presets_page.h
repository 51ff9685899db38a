#pragma once

// The library of presets as a page: the list (built-ins marked), New,
// Duplicate, Rename, Delete, Import…, Export…, and the selected preset's
// values in the same fields as Chat settings (tools aside: they belong to a
// chat). Built-ins are read-only until saved, which makes a user preset of
// the same name that overrides them.
//
// Object names: "presetList", "newPreset", "duplicatePreset",
// "renamePreset", "deletePreset", "importPreset", "exportPreset",
// "presetEditor" (a ui::ChatSettingsPanel), "savePreset", "presetMessage"
// (what the last action did, or why it failed).

#include <QString>
#include <QWidget>
#include <optional>

#include "quire/app/presets/preset_library.h"

class QLabel;
class QListWidget;
class QPushButton;

namespace quire::ui {
class ChatSettingsPanel;
struct ChatDefaults;
}  // namespace quire::ui

namespace quire::presets {

class PresetsPage : public QWidget {
  Q_OBJECT

 public:
  explicit PresetsPage(PresetLibrary& library, QWidget* parent = nullptr);

  ui::ChatSettingsPanel* editor() const { return editor_; }
  QString message() const;
  // The selected preset's name; empty when none.
  QString selectedName() const;
  void setDefaults(const ui::ChatDefaults& defaults);
  void setPromptFormats(const QStringList& names);

 public slots:
  // Lists the library again, keeping the selection where it can.
  void reload();
  void select(const QString& name);
  // The actions behind the buttons, once their dialogs have a name or path.
  bool createPreset(const QString& name);
  bool duplicateSelected(const QString& name);
  bool renameSelected(const QString& name);
  bool deleteSelected();
  bool importFile(const QString& path);
  bool exportSelected(const QString& path);
  bool saveSelected();

 signals:
  // The library changed (a preset saved, renamed, deleted or imported).
  void libraryChanged();

 private:
  void showSelected();
  void say(const QString& text);
  void askName(const QString& title, const QString& suggested,
               bool (PresetsPage::*action)(const QString&));
  void askImport();
  void askExport();

  PresetLibrary& library_;
  QListWidget* list_ = nullptr;
  ui::ChatSettingsPanel* editor_ = nullptr;
  QPushButton* rename_ = nullptr;
  QPushButton* delete_ = nullptr;
  QLabel* message_ = nullptr;
};

}  // namespace quire::presets
