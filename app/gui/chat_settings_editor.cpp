#include "chat_settings_editor.h"

#include <QDialog>
#include <QDialogButtonBox>
#include <QVBoxLayout>
#include <utility>

#include "chat_controller.h"
#include "chat_overrides.h"
#include "quire/app/presets/preset.h"
#include "quire/app/presets/preset_overrides.h"

namespace quire::gui {

ChatSettingsEditor::ChatSettingsEditor(store::ChatStore& store, ChatController& chats,
                                       QWidget& window, Defaults defaults,
                                       const presets::PresetLibrary& presets, QObject* parent)
    : QObject(parent),
      store_(store),
      chats_(chats),
      defaults_(std::move(defaults)),
      presets_(presets) {
  dialog_ = new QDialog(&window);
  dialog_->setObjectName(QStringLiteral("chatSettingsDialog"));
  dialog_->setWindowModality(Qt::WindowModal);
  auto* layout = new QVBoxLayout(dialog_);
  chooser_ = new presets::PresetChooser(presets, dialog_);
  layout->addWidget(chooser_);
  panel_ = new ui::ChatSettingsPanel(dialog_);
  layout->addWidget(panel_);
  connect(chooser_, &presets::PresetChooser::chosen, this, &ChatSettingsEditor::applyPreset);
  connect(panel_, &ui::ChatSettingsPanel::edited, this,
          [this] { chooser_->compare(to_chat_settings(panel_->overrides())); });
  auto* buttons = new QDialogButtonBox(QDialogButtonBox::Save | QDialogButtonBox::Cancel, dialog_);
  buttons->setObjectName(QStringLiteral("chatSettingsButtons"));
  layout->addWidget(buttons);
  connect(buttons, &QDialogButtonBox::accepted, dialog_, &QDialog::accept);
  connect(buttons, &QDialogButtonBox::rejected, dialog_, &QDialog::reject);
  connect(dialog_, &QDialog::accepted, this, &ChatSettingsEditor::save);
  connect(&chats_, &ChatController::chatCreated, this, &ChatSettingsEditor::onChatCreated);
}

ChatSettingsEditor::~ChatSettingsEditor() = default;

void ChatSettingsEditor::setPromptFormats(const QStringList& names) {
  prompt_formats_ = names;
  panel_->setPromptFormats(names);
}

void ChatSettingsEditor::open() {
  editing_ = chats_.currentChat();
  store::ChatSettings settings;
  QString title = tr("New chat");
  std::optional<QString> preset;
  if (editing_) {
    settings = store_.chat_settings(*editing_).value_or(store::ChatSettings{});
    preset = store_.chat_preset(*editing_);
    if (const std::optional<store::ChatSummary> summary = store_.chat(*editing_))
      title = summary->title;
  } else if (pending_) {
    settings = *pending_;
    preset = pending_preset_;
  }
  dialog_->setWindowTitle(tr("Chat settings — %1").arg(title));
  panel_->setDefaults(defaults_());
  panel_->setOverrides(to_overrides(settings));
  chooser_->show(preset, settings);
  dialog_->open();
}

void ChatSettingsEditor::save() {
  store::ChatSettings settings = to_chat_settings(panel_->overrides());
  if (!editing_) {
    pending_ = settings;
    pending_preset_ = chooser_->preset();
    pending_is_default_ = false;
    return;
  }
  // The tools the user allowed always are no field of the panel: they stay.
  if (const std::optional<store::ChatSettings> stored = store_.chat_settings(*editing_))
    settings.always_allowed_tools = stored->always_allowed_tools;
  if (!store_.set_chat_settings(*editing_, settings) ||
      !store_.set_chat_preset(*editing_, chooser_->preset())) {
    emit problem(tr("The chat's settings could not be saved: %1").arg(store_.error_string()));
  }
}

void ChatSettingsEditor::applyPreset(const presets::Preset& preset) {
  ui::ChatOverrides overrides = presets::preset_overrides(preset.settings);
  overrides.use_tools = panel_->overrides().use_tools;
  panel_->setOverrides(overrides);
  chooser_->compare(to_chat_settings(overrides));
}

void ChatSettingsEditor::chatShown() {
  pending_.reset();
  pending_preset_.reset();
  pending_is_default_ = false;
  if (!chats_.currentChat()) startFromDefaultPreset();
}

void ChatSettingsEditor::setDefaultPreset(const QString& name) {
  default_preset_ = name;
  if (chats_.currentChat() || (pending_ && !pending_is_default_)) return;
  pending_.reset();
  pending_preset_.reset();
  pending_is_default_ = false;
  startFromDefaultPreset();
}

void ChatSettingsEditor::startFromDefaultPreset() {
  if (default_preset_.isEmpty()) return;
  // A preset deleted since it was chosen leaves new chats as they were.
  const std::optional<presets::Preset> preset = presets_.find(default_preset_);
  if (!preset) return;
  pending_ = presets::preset_values(preset->settings);
  pending_preset_ = preset->name;
  pending_is_default_ = true;
}

void ChatSettingsEditor::onChatCreated(store::ChatId chat) {
  // Values wait only on the empty page of a new chat, and showing any other
  // chat drops them: a branch, made from a chat on show, never takes them.
  if (!pending_ || chats_.currentChat() != chat) return;
  const store::ChatSettings settings = *std::exchange(pending_, std::nullopt);
  const std::optional<QString> preset = std::exchange(pending_preset_, std::nullopt);
  pending_is_default_ = false;
  if (!store_.set_chat_settings(chat, settings) || !store_.set_chat_preset(chat, preset)) {
    emit problem(tr("The chat's settings could not be saved: %1").arg(store_.error_string()));
  }
}

}  // namespace quire::gui
