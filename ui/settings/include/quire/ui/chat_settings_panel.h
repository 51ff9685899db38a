#pragma once

// The settings of one chat: its system prompt, sampling, longest reply,
// prompt format and whether the model may call tools. Each field either follows the global value
// (the Settings dialog's, shown greyed beside "Default") or overrides it; "Reset to defaults" makes
// every field follow again. Plain data in and out: the application reads the chat's overrides from
// its store and writes back what overrides() returns.
//
// Object names: "chatSettingsPanel", "resetChatSettings", and per field
// <field> (the editor), <field>Override (the check box that makes it the
// chat's own) and <field>State (what it follows now), where <field> is one of
// "chatSystemPrompt", "chatTemperature", "chatTopP", "chatMinP",
// "chatRepetitionPenalty", "chatMaxNewTokens", "chatPromptFormat",
// "chatUseTools", "chatTunedSampling" (the "Advanced sampling" group: DRY,
// XTC, top-nσ and mirostat, owned together; its fields are named in
// tuned_sampling_editor.h). Below them, "chatTextRules": the banned strings
// and the logit biases by text (text_rules_editor.h), which belong to the
// chat alone and have no Own value box.

#include <QMap>
#include <QString>
#include <QStringList>
#include <QWidget>
#include <memory>
#include <optional>

#include "quire/ui/settings_data.h"
#include "quire/ui/settings_limits.h"

namespace quire::ui {

namespace limits {
// The longest reply a chat may ask for, in tokens; the context bounds it further.
inline constexpr IntRange kMaxNewTokens{1, 1 << 20};
}  // namespace limits

// What a chat overrides; each absent value follows the global one.
struct ChatOverrides {
  std::optional<QString> system_prompt;
  std::optional<double> temperature;
  std::optional<double> top_p;
  std::optional<double> min_p;
  std::optional<double> repetition_penalty;
  std::optional<int> max_new_tokens;
  std::optional<QString> prompt_format;  // "auto" or a format's name
  // Whether the model is offered the enabled tool servers' tools in this
  // chat; false keeps a chat free of tools whatever the global setting.
  std::optional<bool> use_tools;
  std::optional<TunedSampling> tuned_sampling;
  // What happens when the chat outgrows the context: "stop", "drop_oldest"
  // or "truncate_middle" (context_overflow_ids()).
  std::optional<QString> context_overflow;
  // Text the replies must never show, and logit biases by text. They have
  // no global value: empty is none.
  QStringList banned_strings;
  QMap<QString, double> logit_bias_text;

  friend bool operator==(const ChatOverrides&, const ChatOverrides&) = default;
};

// The global values a chat follows where it overrides nothing.
struct ChatDefaults {
  QString system_prompt;
  SamplingDefaults sampling;
  int max_new_tokens = 0;
  QString prompt_format;  // "auto" or a format's name
  bool use_tools = true;  // chats use the enabled tool servers unless told not to
  QString context_overflow = QStringLiteral("drop_oldest");
};

class ChatSettingsPanel : public QWidget {
  Q_OBJECT

 public:
  explicit ChatSettingsPanel(QWidget* parent = nullptr);
  ~ChatSettingsPanel() override;

  // Prompt formats offered besides "auto" (the model's own), as the global
  // settings offer them.
  void setPromptFormats(const QStringList& names);
  // The global values, shown in the fields that follow them.
  void setDefaults(const ChatDefaults& defaults);
  // Shows a chat's overrides. Does not emit edited().
  void setOverrides(const ChatOverrides& overrides);
  // What the fields say now: a value for each field marked as the chat's own.
  ChatOverrides overrides() const;

 public slots:
  // Every field follows the global value again.
  void resetToDefaults();

 signals:
  // The user changed a field or reset them.
  void edited();

 private:
  struct Fields;
  void showDefaults();
  void refreshStates();

  std::unique_ptr<Fields> fields_;
  ChatDefaults defaults_;
  bool writing_ = false;
};

}  // namespace quire::ui
