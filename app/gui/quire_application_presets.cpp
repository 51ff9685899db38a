// Model → Presets…: the library of presets in a dialog of its own, with the
// global values beside each field as in Chat settings.

#include <QDialog>
#include <QVBoxLayout>

#include "chat_overrides.h"
#include "chat_settings_editor.h"
#include "main_window.h"
#include "quire/app/presets/presets_page.h"
#include "quire/ui/settings_panel.h"
#include "quire_application.h"

namespace quire::gui {

void QuireApplication::openPresets() {
  if (presets_page_ == nullptr) {
    auto* dialog = new QDialog(window_.get());
    dialog->setObjectName(QStringLiteral("presetsDialog"));
    dialog->setWindowTitle(tr("Presets"));
    auto* layout = new QVBoxLayout(dialog);
    presets_page_ = new presets::PresetsPage(*presets_, dialog);
    layout->addWidget(presets_page_);
    connect(presets_page_, &presets::PresetsPage::libraryChanged, this,
            [this] { window_->settingsPanel()->setPresetNames(presets_->names()); });
    dialog->resize(900, 640);
  }
  presets_page_->setPromptFormats(chat_settings_->promptFormats());
  presets_page_->setDefaults(chat_defaults(settings_.engine, options_.max_new_tokens));
  presets_page_->reload();
  QWidget* dialog = presets_page_->window();
  dialog->show();
  dialog->raise();
  dialog->activateWindow();
}

}  // namespace quire::gui
