#pragma once

// Chat settings' preset chooser: a list of the library's presets and a line
// that says which one the chat's values came from — "Preset: Creative", or
// "Preset: Creative (changed)" once they were edited. Choosing a preset asks
// the owner (chosen()) to copy its values into the chat's fields.
//
// Object names: "chatPresetChooser" (the combo box; its first item is "None"),
// "chatPresetState" (the line).

#include <QString>
#include <QWidget>
#include <optional>

#include "quire/app/presets/preset_library.h"

class QComboBox;
class QLabel;

namespace quire::presets {

class PresetChooser : public QWidget {
  Q_OBJECT

 public:
  explicit PresetChooser(const PresetLibrary& library, QWidget* parent = nullptr);

  // Lists the library again and shows `preset` as the chat's, compared with
  // the chat's values `current`. Emits nothing.
  void show(const std::optional<QString>& preset, const store::ChatSettings& current);
  // The chat's values changed: the line says whether they still are the preset's.
  void compare(const store::ChatSettings& current);
  // The preset the chat's values came from; nullopt: none.
  const std::optional<QString>& preset() const { return preset_; }
  QString stateText() const;

  // "Preset: NAME", "Preset: NAME (changed)", or "No preset".
  static QString describe(const std::optional<QString>& preset, bool changed);

 signals:
  // The user chose a preset; its values are for the chat's fields.
  void chosen(const quire::presets::Preset& preset);

 private:
  void onActivated(int index);
  // A wheel over the closed list, without focus, scrolls the dialog instead
  // of choosing a preset (which would overwrite the fields).
  bool eventFilter(QObject* watched, QEvent* event) override;

  const PresetLibrary& library_;
  QComboBox* combo_ = nullptr;
  QLabel* state_ = nullptr;
  std::optional<QString> preset_;
};

}  // namespace quire::presets
