// The chat settings' "Advanced sampling" group: it follows the global DRY,
// XTC, top-nσ and mirostat values until owned, is owned as one group, and
// reads and writes every field.

#include <QCheckBox>
#include <QDoubleSpinBox>
#include <QLabel>
#include <QLineEdit>
#include <QSignalSpy>
#include <QSpinBox>
#include <QTest>
#include <memory>

#include "quire/ui/chat_settings_panel.h"
#include "test_main.h"

using quire::ui::ChatDefaults;
using quire::ui::ChatOverrides;
using quire::ui::ChatSettingsPanel;
using quire::ui::TunedSampling;

namespace {

TunedSampling every_tuned_value() {
  TunedSampling tuned;
  tuned.dry_multiplier = 0.8;
  tuned.dry_base = 2.25;
  tuned.dry_allowed_length = 4;
  tuned.dry_range = 512;
  tuned.dry_sequence_breakers = {QStringLiteral("\n"), QStringLiteral("\"")};
  tuned.xtc_threshold = 0.15;
  tuned.xtc_probability = 0.5;
  tuned.top_n_sigma = 1.5;
  tuned.mirostat = true;
  tuned.mirostat_tau = 4.5;
  tuned.mirostat_eta = 0.25;
  return tuned;
}

}  // namespace

class TestChatTunedSamplingPanel : public QObject {
  Q_OBJECT

 private slots:
  void init() {
    panel_ = std::make_unique<ChatSettingsPanel>();
    ChatDefaults defaults;
    defaults.max_new_tokens = 512;
    panel_->setDefaults(defaults);
    panel_->setOverrides(ChatOverrides{});
  }
  void cleanup() { panel_.reset(); }

  void followsTheGlobalValuesUntilOwned() {
    QVERIFY(!panel_->findChild<QWidget*>(QStringLiteral("chatTunedSampling"))->isEnabled());
    QCOMPARE(state(), QStringLiteral("Default: all off"));
    ChatDefaults defaults;
    defaults.sampling.tuned.dry_multiplier = 0.8;
    defaults.sampling.tuned.xtc_probability = 0.5;
    panel_->setDefaults(defaults);
    QCOMPARE(state(), QStringLiteral("Default: DRY 0.80, XTC 0.50 above 0.10"));
    QCOMPARE(real("chatDryMultiplier")->value(), 0.8);
    QCOMPARE(panel_->overrides(), ChatOverrides{});
  }

  void ownedItReadsEveryField() {
    QSignalSpy edited(panel_.get(), &ChatSettingsPanel::edited);
    own()->setChecked(true);
    real("chatDryMultiplier")->setValue(0.8);
    real("chatDryBase")->setValue(2.25);
    panel_->findChild<QSpinBox*>(QStringLiteral("chatDryAllowedLength"))->setValue(4);
    panel_->findChild<QSpinBox*>(QStringLiteral("chatDryRange"))->setValue(512);
    QLineEdit* breakers = panel_->findChild<QLineEdit*>(QStringLiteral("chatDryBreakers"));
    QCOMPARE(breakers->text(), QStringLiteral("\"\\n\", \":\", \"\\\"\", \"*\""));
    breakers->selectAll();
    QTest::keyClicks(breakers, QStringLiteral("\"\\n\", \"\\\"\""));
    real("chatXtcThreshold")->setValue(0.15);
    real("chatXtcProbability")->setValue(0.5);
    real("chatTopNSigma")->setValue(1.5);
    panel_->findChild<QCheckBox*>(QStringLiteral("chatMirostat"))->setChecked(true);
    real("chatMirostatTau")->setValue(4.5);
    real("chatMirostatEta")->setValue(0.25);
    QCOMPARE(panel_->overrides().tuned_sampling, std::optional<TunedSampling>(every_tuned_value()));
    QVERIFY(edited.size() >= 12);
    QCOMPARE(state(), QStringLiteral("This chat's own value; the default is all off"));
  }

  void breakersThatDoNotReadKeepTheLastList() {
    own()->setChecked(true);
    QLineEdit* breakers = panel_->findChild<QLineEdit*>(QStringLiteral("chatDryBreakers"));
    breakers->selectAll();
    QTest::keyClicks(breakers, QStringLiteral("\"###\", \"unclosed"));
    QCOMPARE(panel_->overrides().tuned_sampling->dry_sequence_breakers,
             (QStringList{QStringLiteral("###")}));
    breakers->selectAll();
    QTest::keyClick(breakers, Qt::Key_Delete);  // empty: no breakers
    QCOMPARE(panel_->overrides().tuned_sampling->dry_sequence_breakers, QStringList());
  }

  void aChatsOwnValuesAreShown() {
    ChatOverrides chat;
    chat.tuned_sampling = every_tuned_value();
    panel_->setOverrides(chat);
    QVERIFY(own()->isChecked());
    QCOMPARE(real("chatTopNSigma")->value(), 1.5);
    QCOMPARE(panel_->findChild<QLineEdit*>(QStringLiteral("chatDryBreakers"))->text(),
             QStringLiteral("\"\\n\", \"\\\"\""));
    QCOMPARE(panel_->overrides(), chat);
    panel_->resetToDefaults();
    QCOMPARE(panel_->overrides(), ChatOverrides{});
    QCOMPARE(real("chatTopNSigma")->value(), 0.0);
  }

 private:
  QCheckBox* own() const {
    return panel_->findChild<QCheckBox*>(QStringLiteral("chatTunedSamplingOverride"));
  }
  QString state() const {
    return panel_->findChild<QLabel*>(QStringLiteral("chatTunedSamplingState"))->text();
  }
  QDoubleSpinBox* real(const char* name) const {
    return panel_->findChild<QDoubleSpinBox*>(QLatin1String(name));
  }

  std::unique_ptr<ChatSettingsPanel> panel_;
};

QUIRE_TEST(TestChatTunedSamplingPanel)
#include "test_chat_tuned_sampling_panel.moc"
