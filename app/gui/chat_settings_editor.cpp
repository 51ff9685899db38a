#include "chat_settings_editor.h"

#include <QDialog>
#include <QDialogButtonBox>
#include <QVBoxLayout>
#include <utility>

#include "chat_controller.h"
#include "chat_overrides.h"

namespace quire::gui {

ChatSettingsEditor::ChatSettingsEditor(store::ChatStore& store, ChatController& chats,
                                       QWidget& window, Defaults defaults, QObject* parent)
    : QObject(parent), store_(store), chats_(chats), defaults_(std::move(defaults)) {
  dialog_ = new QDialog(&window);
  dialog_->setObjectName(QStringLiteral("chatSettingsDialog"));
  dialog_->setWindowModality(Qt::WindowModal);
  auto* layout = new QVBoxLayout(dialog_);
  panel_ = new ui::ChatSettingsPanel(dialog_);
  layout->addWidget(panel_);
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
  panel_->setPromptFormats(names);
}

void ChatSettingsEditor::open() {
  editing_ = chats_.currentChat();
  store::ChatSettings settings;
  QString title = tr("New chat");
  if (editing_) {
    settings = store_.chat_settings(*editing_).value_or(store::ChatSettings{});
    if (const std::optional<store::ChatSummary> summary = store_.chat(*editing_))
      title = summary->title;
  } else if (pending_) {
    settings = *pending_;
  }
  dialog_->setWindowTitle(tr("Chat settings — %1").arg(title));
  panel_->setDefaults(defaults_());
  panel_->setOverrides(to_overrides(settings));
  dialog_->open();
}

void ChatSettingsEditor::save() {
  store::ChatSettings settings = to_chat_settings(panel_->overrides());
  if (!editing_) {
    pending_ = settings;
    return;
  }
  // The tools the user allowed always are no field of the panel: they stay.
  if (const std::optional<store::ChatSettings> stored = store_.chat_settings(*editing_))
    settings.always_allowed_tools = stored->always_allowed_tools;
  if (!store_.set_chat_settings(*editing_, settings)) {
    emit problem(tr("The chat's settings could not be saved: %1").arg(store_.error_string()));
  }
}

void ChatSettingsEditor::chatShown() {
  pending_.reset();
}

void ChatSettingsEditor::onChatCreated(store::ChatId chat) {
  // Values wait only on the empty page of a new chat, and showing any other
  // chat drops them: a branch, made from a chat on show, never takes them.
  if (!pending_ || chats_.currentChat() != chat) return;
  const store::ChatSettings settings = *std::exchange(pending_, std::nullopt);
  if (!store_.set_chat_settings(chat, settings)) {
    emit problem(tr("The chat's settings could not be saved: %1").arg(store_.error_string()));
  }
}

}  // namespace quire::gui
