// The settings of one chat: each field follows the global value until it is
// made the chat's own, and says which it does.

#include <QCheckBox>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QLabel>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QSignalSpy>
#include <QSpinBox>
#include <QTest>
#include <memory>

#include "quire/ui/chat_settings_panel.h"
#include "test_main.h"

using quire::ui::ChatDefaults;
using quire::ui::ChatOverrides;
using quire::ui::ChatSettingsPanel;

namespace {

ChatDefaults global_values() {
  ChatDefaults defaults;
  defaults.system_prompt = QStringLiteral("You are terse.");
  defaults.sampling.temperature = 0.8;
  defaults.sampling.top_p = 0.95;
  defaults.sampling.min_p = 0.05;
  defaults.sampling.repetition_penalty = 1.0;
  defaults.max_new_tokens = 1024;
  defaults.prompt_format = QStringLiteral("auto");
  return defaults;
}

}  // namespace

class TestChatSettingsPanel : public QObject {
  Q_OBJECT

 private slots:
  void init() {
    panel_ = std::make_unique<ChatSettingsPanel>();
    panel_->setPromptFormats(
        {QStringLiteral("template"), QStringLiteral("chatml"), QStringLiteral("llama3")});
    panel_->setDefaults(global_values());
    panel_->setOverrides(ChatOverrides{});
  }
  void cleanup() { panel_.reset(); }

  void everyFieldFollowsTheGlobalValueAtFirst() {
    QCOMPARE(panel_->overrides(), ChatOverrides{});
    for (const char* name :
         {"chatSystemPrompt", "chatTemperature", "chatTopP", "chatMinP", "chatRepetitionPenalty",
          "chatMaxNewTokens", "chatPromptFormat", "chatUseTools"}) {
      const QString field = QLatin1String(name);
      QVERIFY2(!own(field)->isChecked(), name);
      QVERIFY2(!panel_->findChild<QWidget*>(field)->isEnabled(), name);
    }
    QCOMPARE(state("chatTemperature"), QStringLiteral("Default: 0.80"));
    QCOMPARE(state("chatTopP"), QStringLiteral("Default: 0.95"));
    QCOMPARE(state("chatMinP"), QStringLiteral("Default: 0.05"));
    QCOMPARE(state("chatRepetitionPenalty"), QStringLiteral("Default: 1.00"));
    QCOMPARE(state("chatMaxNewTokens"), QStringLiteral("Default: 1,024 tokens"));
    QCOMPARE(state("chatSystemPrompt"), QStringLiteral("Default: “You are terse.”"));
    QCOMPARE(state("chatPromptFormat"), QStringLiteral("Default: Automatic (from the model)"));
    QCOMPARE(state("chatUseTools"), QStringLiteral("Default: on"));
    QVERIFY(tools()->isChecked());
    // The greyed fields show the global values.
    QCOMPARE(real("chatTemperature")->value(), 0.8);
    QCOMPARE(panel_->findChild<QSpinBox*>(QStringLiteral("chatMaxNewTokens"))->value(), 1024);
    QCOMPARE(prompt()->toPlainText(), QStringLiteral("You are terse."));
    QVERIFY(!reset()->isEnabled());
  }

  void editedFieldsComeOutAsExactValues() {
    QSignalSpy edited(panel_.get(), &ChatSettingsPanel::edited);
    own(QStringLiteral("chatTemperature"))->setChecked(true);
    QVERIFY(real("chatTemperature")->isEnabled());
    real("chatTemperature")->setValue(0.0);
    own(QStringLiteral("chatMaxNewTokens"))->setChecked(true);
    panel_->findChild<QSpinBox*>(QStringLiteral("chatMaxNewTokens"))->setValue(12);
    own(QStringLiteral("chatSystemPrompt"))->setChecked(true);
    prompt()->setPlainText(QStringLiteral("Answer in French."));
    own(QStringLiteral("chatPromptFormat"))->setChecked(true);
    format()->setCurrentIndex(format()->findData(QStringLiteral("chatml")));
    QVERIFY(edited.count() >= 4);

    ChatOverrides expected;
    expected.temperature = 0.0;
    expected.max_new_tokens = 12;
    expected.system_prompt = QStringLiteral("Answer in French.");
    expected.prompt_format = QStringLiteral("chatml");
    QCOMPARE(panel_->overrides(), expected);
    QCOMPARE(state("chatTemperature"),
             QStringLiteral("This chat's own value; the default is 0.80"));
    QCOMPARE(state("chatTopP"), QStringLiteral("Default: 0.95"));
    QVERIFY(reset()->isEnabled());
  }

  void anEmptySystemPromptOfItsOwnIsKept() {
    // "No system prompt" in this chat differs from following the global one.
    own(QStringLiteral("chatSystemPrompt"))->setChecked(true);
    prompt()->clear();
    ChatOverrides expected;
    expected.system_prompt = QString();
    QCOMPARE(panel_->overrides(), expected);
  }

  void followingAgainShowsTheGlobalValue() {
    own(QStringLiteral("chatTopP"))->setChecked(true);
    real("chatTopP")->setValue(0.5);
    own(QStringLiteral("chatTopP"))->setChecked(false);
    QCOMPARE(real("chatTopP")->value(), 0.95);
    QVERIFY(!real("chatTopP")->isEnabled());
    QCOMPARE(panel_->overrides(), ChatOverrides{});
  }

  void showsAChatsOverrides() {
    ChatOverrides chat;
    chat.min_p = 0.1;
    chat.repetition_penalty = 1.15;
    chat.prompt_format = QStringLiteral("llama3");
    QSignalSpy edited(panel_.get(), &ChatSettingsPanel::edited);
    panel_->setOverrides(chat);
    QCOMPARE(edited.count(), 0);
    QCOMPARE(panel_->overrides(), chat);
    QVERIFY(own(QStringLiteral("chatMinP"))->isChecked());
    QCOMPARE(real("chatMinP")->value(), 0.1);
    QCOMPARE(format()->currentData().toString(), QStringLiteral("llama3"));
    QCOMPARE(state("chatPromptFormat"),
             QStringLiteral("This chat's own value; the default is Automatic (from the model)"));
    // Another chat's overrides replace these entirely.
    ChatOverrides other;
    other.temperature = 1.5;
    panel_->setOverrides(other);
    QCOMPARE(panel_->overrides(), other);
    QCOMPARE(real("chatMinP")->value(), 0.05);
  }

  void resetMakesEveryFieldFollowAgain() {
    ChatOverrides chat;
    chat.temperature = 0.0;
    chat.system_prompt = QStringLiteral("Be brief.");
    chat.max_new_tokens = 8;
    panel_->setOverrides(chat);
    QSignalSpy edited(panel_.get(), &ChatSettingsPanel::edited);
    QTest::mouseClick(reset(), Qt::LeftButton);
    QCOMPARE(edited.count(), 1);
    QCOMPARE(panel_->overrides(), ChatOverrides{});
    QCOMPARE(real("chatTemperature")->value(), 0.8);
    QCOMPARE(prompt()->toPlainText(), QStringLiteral("You are terse."));
    QCOMPARE(state("chatSystemPrompt"), QStringLiteral("Default: “You are terse.”"));
    QVERIFY(!reset()->isEnabled());
  }

  void toolsCanBeTurnedOffForOneChat() {
    QSignalSpy edited(panel_.get(), &ChatSettingsPanel::edited);
    own(QStringLiteral("chatUseTools"))->setChecked(true);
    // Owning starts from the global value: tools on.
    ChatOverrides expected;
    expected.use_tools = true;
    QCOMPARE(panel_->overrides(), expected);
    QVERIFY(tools()->isEnabled());
    QCOMPARE(tools()->text(), QStringLiteral("Use tools in this chat"));
    tools()->click();
    expected.use_tools = false;
    QCOMPARE(panel_->overrides(), expected);
    QCOMPARE(edited.count(), 2);
    QCOMPARE(state("chatUseTools"), QStringLiteral("This chat's own value; the default is on"));
  }

  void theToolsSettingRoundTrips_data() {
    QTest::addColumn<bool>("globalTools");
    QTest::addColumn<bool>("chatTools");
    QTest::newRow("off in a chat, on globally") << true << false;
    QTest::newRow("on in a chat, off globally") << false << true;
  }

  void theToolsSettingRoundTrips() {
    QFETCH(bool, globalTools);
    QFETCH(bool, chatTools);
    ChatDefaults defaults = global_values();
    defaults.use_tools = globalTools;
    panel_->setDefaults(defaults);
    QCOMPARE(tools()->isChecked(), globalTools);
    QCOMPARE(state("chatUseTools"),
             globalTools ? QStringLiteral("Default: on") : QStringLiteral("Default: off"));

    ChatOverrides chat;
    chat.use_tools = chatTools;
    chat.temperature = 0.3;
    panel_->setOverrides(chat);
    QCOMPARE(panel_->overrides(), chat);
    QVERIFY(own(QStringLiteral("chatUseTools"))->isChecked());
    QCOMPARE(tools()->isChecked(), chatTools);

    // Following again shows the global value and overrides nothing.
    own(QStringLiteral("chatUseTools"))->setChecked(false);
    QCOMPARE(tools()->isChecked(), globalTools);
    QVERIFY(!tools()->isEnabled());
    QVERIFY(!panel_->overrides().use_tools.has_value());
  }

  void limitsAreThoseOfTheGlobalSettings() {
    QCOMPARE(real("chatTemperature")->maximum(), 5.0);
    QCOMPARE(real("chatRepetitionPenalty")->minimum(), 1.0);
    QCOMPARE(real("chatRepetitionPenalty")->maximum(), 3.0);
    QCOMPARE(real("chatMinP")->maximum(), 1.0);
    // A top-p of 0 would leave no token to sample.
    QCOMPARE(real("chatTopP")->minimum(), 0.01);
    QCOMPARE(panel_->findChild<QSpinBox*>(QStringLiteral("chatMaxNewTokens"))->minimum(), 1);
  }

  void offersTheGlobalPromptFormats() {
    QStringList offered;
    for (int i = 0; i < format()->count(); ++i)
      offered << format()->itemData(i).toString();
    QCOMPARE(offered, (QStringList{QStringLiteral("auto"), QStringLiteral("template"),
                                   QStringLiteral("chatml"), QStringLiteral("llama3")}));
  }

  // What the chat does when it outgrows the context: the global default
  // until the chat chooses its own, by the engine's names.
  void theContextPolicyIsAChatSetting() {
    auto* policy = panel_->findChild<QComboBox*>(QStringLiteral("chatContextOverflow"));
    QVERIFY(policy);
    QCOMPARE(policy->count(), 3);
    QCOMPARE(policy->currentData().toString(), QStringLiteral("drop_oldest"));
    QVERIFY(!policy->isEnabled());
    QCOMPARE(state("chatContextOverflow"), QStringLiteral("Default: drop the oldest turns"));

    own(QStringLiteral("chatContextOverflow"))->setChecked(true);
    policy->setCurrentIndex(policy->findData(QStringLiteral("truncate_middle")));
    ChatOverrides expected;
    expected.context_overflow = QStringLiteral("truncate_middle");
    QCOMPARE(panel_->overrides(), expected);
    QCOMPARE(state("chatContextOverflow"),
             QStringLiteral("This chat's own value; the default is drop the oldest turns"));

    ChatOverrides chat;
    chat.context_overflow = QStringLiteral("stop");
    panel_->setOverrides(chat);
    QCOMPARE(policy->currentText(), QStringLiteral("Stop and say so"));
    QCOMPARE(panel_->overrides(), chat);

    ChatDefaults defaults = global_values();
    defaults.context_overflow = QStringLiteral("truncate_middle");
    panel_->setDefaults(defaults);
    panel_->setOverrides(ChatOverrides{});
    QCOMPARE(policy->currentText(), QStringLiteral("Truncate the middle"));
    QCOMPARE(state("chatContextOverflow"), QStringLiteral("Default: truncate the middle"));
  }

  void defaultsChangedLaterShowInFollowingFields() {
    ChatOverrides chat;
    chat.temperature = 0.2;
    panel_->setOverrides(chat);
    ChatDefaults defaults = global_values();
    defaults.sampling.temperature = 1.1;
    defaults.sampling.top_p = 0.9;
    defaults.system_prompt = QString();
    panel_->setDefaults(defaults);
    QCOMPARE(real("chatTemperature")->value(), 0.2);
    QCOMPARE(real("chatTopP")->value(), 0.9);
    QCOMPARE(state("chatTemperature"),
             QStringLiteral("This chat's own value; the default is 1.10"));
    QCOMPARE(state("chatSystemPrompt"), QStringLiteral("Default: none"));
  }

 private:
  QCheckBox* own(const QString& field) const {
    return panel_->findChild<QCheckBox*>(field + QStringLiteral("Override"));
  }
  QString state(const char* field) const {
    return panel_->findChild<QLabel*>(QLatin1String(field) + QStringLiteral("State"))->text();
  }
  QDoubleSpinBox* real(const char* field) const {
    return panel_->findChild<QDoubleSpinBox*>(QLatin1String(field));
  }
  QPlainTextEdit* prompt() const {
    return panel_->findChild<QPlainTextEdit*>(QStringLiteral("chatSystemPrompt"));
  }
  QComboBox* format() const {
    return panel_->findChild<QComboBox*>(QStringLiteral("chatPromptFormat"));
  }
  QCheckBox* tools() const { return panel_->findChild<QCheckBox*>(QStringLiteral("chatUseTools")); }
  QPushButton* reset() const {
    return panel_->findChild<QPushButton*>(QStringLiteral("resetChatSettings"));
  }

  std::unique_ptr<ChatSettingsPanel> panel_;
};

QUIRE_TEST(TestChatSettingsPanel)
#include "test_chat_settings_panel.moc"
