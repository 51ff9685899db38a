#pragma once

// "Chat settings…": a dialog over the chat on show that edits what the chat
// overrides of the global settings and saves it in the store, where every
// later reply of that chat reads it (ChatController::requestFor). On the
// empty page of a new chat the values wait for its first message, which
// creates the chat. Object names: "chatSettingsDialog", "chatSettingsButtons".

#include <QObject>
#include <QStringList>
#include <functional>
#include <optional>

#include "quire/app/presets/preset_chooser.h"
#include "quire/app/store/chat_store.h"
#include "quire/ui/chat_settings_panel.h"

class QDialog;
class QWidget;

namespace quire::gui {

class ChatController;

class ChatSettingsEditor : public QObject {
  Q_OBJECT

 public:
  // The global values a chat follows, read each time the dialog opens.
  using Defaults = std::function<ui::ChatDefaults()>;

  // `presets`: the library the preset chooser offers; it must outlive the editor.
  ChatSettingsEditor(store::ChatStore& store, ChatController& chats, QWidget& window,
                     Defaults defaults, const presets::PresetLibrary& presets,
                     QObject* parent = nullptr);
  ~ChatSettingsEditor() override;

  // Prompt formats offered besides "auto", as the global settings offer them.
  void setPromptFormats(const QStringList& names);
  const QStringList& promptFormats() const { return prompt_formats_; }
  QDialog* dialog() const { return dialog_; }
  ui::ChatSettingsPanel* panel() const { return panel_; }
  presets::PresetChooser* presetChooser() const { return chooser_; }

 public slots:
  // Shows the dialog with the settings of the chat on show.
  void open();
  // Saves what the dialog shows for the chat it was opened over.
  void save();
  // Another chat (or a new, empty one) is on show: values kept for the new
  // chat's first message are dropped. A new chat starts from the default
  // preset, if any: its values wait for the first message as if chosen.
  void chatShown();
  // The preset new chats start from (Settings → Default preset for new
  // chats); empty: none. The empty page of a new chat on show takes it now,
  // unless its values were edited.
  void setDefaultPreset(const QString& name);

 signals:
  // The settings could not be saved (the store failed or refused them).
  void problem(const QString& text);

 private:
  void onChatCreated(store::ChatId chat);
  // A preset chosen: its values replace the fields (the tools choice stays).
  void applyPreset(const presets::Preset& preset);
  // The values of the default preset, waiting for a new chat's first message.
  void startFromDefaultPreset();

  store::ChatStore& store_;
  ChatController& chats_;
  Defaults defaults_;
  QDialog* dialog_ = nullptr;
  ui::ChatSettingsPanel* panel_ = nullptr;
  presets::PresetChooser* chooser_ = nullptr;
  // The chat the dialog was opened over; nullopt: the new chat not created yet.
  std::optional<store::ChatId> editing_;
  // Saved on the empty page of a new chat: written when its first message
  // creates it.
  std::optional<store::ChatSettings> pending_;
  std::optional<QString> pending_preset_;
  QStringList prompt_formats_;
  const presets::PresetLibrary& presets_;
  QString default_preset_;
  // pending_ holds the default preset's values as taken, not the user's edits.
  bool pending_is_default_ = false;
};

}  // namespace quire::gui
