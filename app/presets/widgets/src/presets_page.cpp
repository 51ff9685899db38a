#include "quire/app/presets/presets_page.h"

#include <QFileDialog>
#include <QHBoxLayout>
#include <QInputDialog>
#include <QLabel>
#include <QListWidget>
#include <QPushButton>
#include <QVBoxLayout>

#include "quire/app/presets/preset_overrides.h"
#include "quire/ui/chat_settings_panel.h"

namespace quire::presets {
namespace {

QPushButton* page_button(const QString& text, const char* name, QWidget* parent) {
  auto* button = new QPushButton(text, parent);
  button->setObjectName(QLatin1String(name));
  return button;
}

}  // namespace

PresetsPage::PresetsPage(PresetLibrary& library, QWidget* parent)
    : QWidget(parent), library_(library) {
  setObjectName(QStringLiteral("presetsPage"));
  auto* layout = new QHBoxLayout(this);
  auto* left = new QVBoxLayout;
  list_ = new QListWidget(this);
  list_->setObjectName(QStringLiteral("presetList"));
  left->addWidget(list_, 1);
  auto* buttons = new QHBoxLayout;
  QPushButton* create = page_button(tr("New"), "newPreset", this);
  QPushButton* duplicate = page_button(tr("Duplicate"), "duplicatePreset", this);
  rename_ = page_button(tr("Rename"), "renamePreset", this);
  delete_ = page_button(tr("Delete"), "deletePreset", this);
  for (QPushButton* button : {create, duplicate, rename_, delete_})
    buttons->addWidget(button);
  left->addLayout(buttons);
  auto* files = new QHBoxLayout;
  QPushButton* import = page_button(tr("Import…"), "importPreset", this);
  QPushButton* exporting = page_button(tr("Export…"), "exportPreset", this);
  files->addWidget(import);
  files->addWidget(exporting);
  left->addLayout(files);
  layout->addLayout(left, 1);

  auto* right = new QVBoxLayout;
  editor_ = new ui::ChatSettingsPanel(this);
  editor_->setObjectName(QStringLiteral("presetEditor"));
  // Tools are a chat's own choice, never a preset's.
  for (const char* name : {"chatUseTools", "chatUseToolsOverride", "chatUseToolsState"}) {
    if (QWidget* field = editor_->findChild<QWidget*>(QLatin1String(name))) field->hide();
  }
  right->addWidget(editor_, 1);
  QPushButton* save = page_button(tr("Save preset"), "savePreset", this);
  right->addWidget(save, 0, Qt::AlignRight);
  message_ = new QLabel(this);
  message_->setObjectName(QStringLiteral("presetMessage"));
  message_->setWordWrap(true);
  message_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  right->addWidget(message_);
  layout->addLayout(right, 2);

  connect(list_, &QListWidget::currentRowChanged, this, [this] { showSelected(); });
  connect(create, &QPushButton::clicked, this, [this] {
    askName(tr("New preset"), library_.free_name(tr("New preset")), &PresetsPage::createPreset);
  });
  connect(duplicate, &QPushButton::clicked, this, [this] {
    askName(tr("Duplicate preset"), library_.free_name(selectedName()),
            &PresetsPage::duplicateSelected);
  });
  connect(rename_, &QPushButton::clicked, this,
          [this] { askName(tr("Rename preset"), selectedName(), &PresetsPage::renameSelected); });
  connect(delete_, &QPushButton::clicked, this, [this] { deleteSelected(); });
  connect(import, &QPushButton::clicked, this, [this] { askImport(); });
  connect(exporting, &QPushButton::clicked, this, [this] { askExport(); });
  connect(save, &QPushButton::clicked, this, [this] { saveSelected(); });
  reload();
}

QString PresetsPage::message() const {
  return message_->text();
}

QString PresetsPage::selectedName() const {
  const QListWidgetItem* item = list_->currentItem();
  return item != nullptr ? item->data(Qt::UserRole).toString() : QString();
}

void PresetsPage::setDefaults(const ui::ChatDefaults& defaults) {
  editor_->setDefaults(defaults);
}

void PresetsPage::setPromptFormats(const QStringList& names) {
  editor_->setPromptFormats(names);
}

void PresetsPage::reload() {
  const QString selected = selectedName();
  QStringList problems;
  const QList<Preset> presets = library_.list(&problems);
  const QSignalBlocker quiet(list_);
  list_->clear();
  for (const Preset& preset : presets) {
    auto* item = new QListWidgetItem(
        preset.built_in ? tr("%1 (built in)").arg(preset.name) : preset.name, list_);
    item->setData(Qt::UserRole, preset.name);
  }
  if (!problems.isEmpty())
    say(tr("Some preset files could not be read:\n%1").arg(problems.join(u'\n')));
  select(selected.isEmpty() && !presets.isEmpty() ? presets.first().name : selected);
}

void PresetsPage::select(const QString& name) {
  for (int row = 0; row < list_->count(); ++row) {
    if (list_->item(row)->data(Qt::UserRole).toString() == name) {
      list_->setCurrentRow(row);
      showSelected();
      return;
    }
  }
}

void PresetsPage::showSelected() {
  const std::optional<Preset> preset = library_.find(selectedName());
  editor_->setOverrides(preset ? preset_overrides(preset->settings) : ui::ChatOverrides{});
  const bool user = preset && library_.has_file(preset->name);
  rename_->setEnabled(user);
  // Deleting an override brings the built-in back; a built-in itself stays.
  delete_->setEnabled(user);
}

void PresetsPage::say(const QString& text) {
  message_->setText(text);
}

bool PresetsPage::createPreset(const QString& name) {
  Preset preset;
  preset.name = name;
  if (library_.find(name)) {
    say(tr("A preset named \"%1\" exists already; choose another name.").arg(name));
    return false;
  }
  QString error;
  if (!library_.save(preset, &error)) {
    say(error);
    return false;
  }
  reload();
  select(name);
  say(tr("Created \"%1\".").arg(name));
  emit libraryChanged();
  return true;
}

bool PresetsPage::duplicateSelected(const QString& name) {
  std::optional<Preset> preset = library_.find(selectedName());
  if (!preset) return false;
  if (library_.find(name)) {
    say(tr("A preset named \"%1\" exists already; choose another name.").arg(name));
    return false;
  }
  preset->name = name;
  preset->settings = preset_settings(editor_->overrides());
  QString error;
  if (!library_.save(*preset, &error)) {
    say(error);
    return false;
  }
  reload();
  select(name);
  say(tr("Duplicated as \"%1\".").arg(name));
  emit libraryChanged();
  return true;
}

bool PresetsPage::renameSelected(const QString& name) {
  QString error;
  if (!library_.rename(selectedName(), name, &error)) {
    say(error);
    return false;
  }
  reload();
  select(name);
  say(tr("Renamed to \"%1\".").arg(name));
  emit libraryChanged();
  return true;
}

bool PresetsPage::deleteSelected() {
  const QString name = selectedName();
  QString error;
  if (!library_.remove(name, &error)) {
    say(error);
    return false;
  }
  reload();
  say(library_.find(name) ? tr("Deleted your \"%1\"; the built-in one is back.").arg(name)
                          : tr("Deleted \"%1\".").arg(name));
  emit libraryChanged();
  return true;
}

bool PresetsPage::importFile(const QString& path) {
  QString error;
  const std::optional<Preset> preset = library_.import_file(path, &error);
  if (!preset) {
    say(tr("Cannot import %1").arg(error));
    return false;
  }
  reload();
  select(preset->name);
  say(tr("Imported \"%1\".").arg(preset->name));
  emit libraryChanged();
  return true;
}

bool PresetsPage::exportSelected(const QString& path) {
  QString error;
  if (!library_.export_file(selectedName(), path, &error)) {
    say(error);
    return false;
  }
  say(tr("Exported \"%1\" to %2.").arg(selectedName(), path));
  return true;
}

bool PresetsPage::saveSelected() {
  Preset preset;
  preset.name = selectedName();
  if (preset.name.isEmpty()) return false;
  preset.settings = preset_settings(editor_->overrides());
  QString error;
  if (!library_.save(preset, &error)) {
    say(error);
    return false;
  }
  reload();
  say(tr("Saved \"%1\".").arg(preset.name));
  emit libraryChanged();
  return true;
}

void PresetsPage::askName(const QString& title, const QString& suggested,
                          bool (PresetsPage::*action)(const QString&)) {
  bool ok = false;
  const QString name =
      QInputDialog::getText(this, title, tr("Name:"), QLineEdit::Normal, suggested, &ok);
  if (ok) (this->*action)(name.trimmed());
}

void PresetsPage::askImport() {
  const QString path = QFileDialog::getOpenFileName(this, tr("Import a preset"), QString(),
                                                    tr("Quire presets (*.json)"));
  if (!path.isEmpty()) importFile(path);
}

void PresetsPage::askExport() {
  if (selectedName().isEmpty()) return;
  const QString path = QFileDialog::getSaveFileName(this, tr("Export a preset"),
                                                    selectedName() + QStringLiteral(".json"),
                                                    tr("Quire presets (*.json)"));
  if (!path.isEmpty()) exportSelected(path);
}

}  // namespace quire::presets
