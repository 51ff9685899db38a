// The chat settings' banned strings and logit biases by text: shown from a
// chat's overrides, added and removed with the list buttons, read back by
// overrides(), cleared by "Reset to defaults", and the bias field ignores a
// wheel it has no focus for.

#include <QApplication>
#include <QDoubleSpinBox>
#include <QLineEdit>
#include <QListWidget>
#include <QPushButton>
#include <QSignalSpy>
#include <QTableWidget>
#include <QTest>
#include <QWheelEvent>
#include <memory>

#include "quire/ui/chat_settings_panel.h"
#include "test_main.h"

using quire::ui::ChatDefaults;
using quire::ui::ChatOverrides;
using quire::ui::ChatSettingsPanel;

class TestChatTextRulesPanel : public QObject {
  Q_OBJECT

  template <typename T>
  T* child(const char* name) const {
    T* found = panel_->findChild<T*>(QLatin1String(name));
    if (found == nullptr) qFatal("no child named %s", name);
    return found;
  }

 private slots:
  void init() {
    panel_ = std::make_unique<ChatSettingsPanel>();
    ChatDefaults defaults;
    defaults.max_new_tokens = 512;
    panel_->setDefaults(defaults);
    panel_->setOverrides(ChatOverrides{});
  }
  void cleanup() { panel_.reset(); }

  void showsAChatsRulesAndReadsThemBack() {
    ChatOverrides chat;
    chat.banned_strings = {QStringLiteral("As an AI"), QStringLiteral("\n###")};
    chat.logit_bias_text = {{QStringLiteral(" Sure"), -5}, {QStringLiteral("Indeed"), 2.5}};
    panel_->setOverrides(chat);
    auto* banned = child<QListWidget>("chatBannedStrings");
    QCOMPARE(banned->count(), 2);
    QCOMPARE(banned->item(0)->text(), QStringLiteral("As an AI"));
    QCOMPARE(banned->item(1)->text(), QStringLiteral("⏎###"));  // a line break stays visible
    auto* biases = child<QTableWidget>("chatTextBiases");
    QCOMPARE(biases->rowCount(), 2);
    QCOMPARE(biases->item(0, 0)->text(), QStringLiteral(" Sure"));
    QCOMPARE(biases->item(0, 1)->text(), QStringLiteral("-5.00"));
    QCOMPARE(panel_->overrides(), chat);
    // The rules are the chat's own: Reset to defaults is offered, and clears them.
    QVERIFY(child<QPushButton>("resetChatSettings")->isEnabled());
    panel_->resetToDefaults();
    QCOMPARE(panel_->overrides(), ChatOverrides{});
    QCOMPARE(banned->count(), 0);
  }

  void addsAndRemovesEntries() {
    QSignalSpy edited(panel_.get(), &ChatSettingsPanel::edited);
    auto* add_banned = child<QPushButton>("chatAddBannedString");
    QVERIFY(!add_banned->isEnabled());  // nothing typed yet
    child<QLineEdit>("chatBannedStringInput")->setText(QStringLiteral("delve"));
    QVERIFY(add_banned->isEnabled());
    add_banned->click();
    // The same text twice is one entry.
    child<QLineEdit>("chatBannedStringInput")->setText(QStringLiteral("delve"));
    add_banned->click();
    QCOMPARE(panel_->overrides().banned_strings, QStringList{QStringLiteral("delve")});
    QCOMPARE(child<QLineEdit>("chatBannedStringInput")->text(), QString());

    child<QLineEdit>("chatBiasTextInput")->setText(QStringLiteral(" however"));
    child<QDoubleSpinBox>("chatBiasValueInput")->setValue(-12.5);
    child<QPushButton>("chatAddTextBias")->click();
    // Adding a text again replaces its bias.
    child<QLineEdit>("chatBiasTextInput")->setText(QStringLiteral(" however"));
    child<QDoubleSpinBox>("chatBiasValueInput")->setValue(-20);
    child<QPushButton>("chatAddTextBias")->click();
    const QMap<QString, double> expected{{QStringLiteral(" however"), -20.0}};
    QCOMPARE(panel_->overrides().logit_bias_text, expected);
    QCOMPARE(edited.count(), 3);

    auto* banned = child<QListWidget>("chatBannedStrings");
    auto* remove_banned = child<QPushButton>("chatRemoveBannedString");
    QVERIFY(!remove_banned->isEnabled());  // nothing chosen
    banned->setCurrentRow(0);
    QVERIFY(remove_banned->isEnabled());
    remove_banned->click();
    QVERIFY(panel_->overrides().banned_strings.isEmpty());
    child<QTableWidget>("chatTextBiases")->selectRow(0);
    child<QPushButton>("chatRemoveTextBias")->click();
    QVERIFY(panel_->overrides().logit_bias_text.isEmpty());
    QCOMPARE(edited.count(), 5);
  }

  void theBiasFieldIgnoresAWheelWithoutFocus() {
    auto* value = child<QDoubleSpinBox>("chatBiasValueInput");
    const double before = value->value();
    const QPointF inside(value->width() / 2.0, value->height() / 2.0);
    QWheelEvent up(inside, value->mapToGlobal(inside), QPoint(), QPoint(0, 120), Qt::NoButton,
                   Qt::NoModifier, Qt::NoScrollPhase, false);
    QApplication::sendEvent(value, &up);
    QCOMPARE(value->value(), before);
  }

 private:
  std::unique_ptr<ChatSettingsPanel> panel_;
};

QUIRE_TEST(TestChatTextRulesPanel)
#include "test_chat_text_rules_panel.moc"
