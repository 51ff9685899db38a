// A chat's "Advanced sampling" (DRY, XTC, top-nσ, mirostat v2) through the
// whole program: set in the Chat settings dialog, saved with the chat, sent
// with its next reply, which the engine samples with them.

#include <QAction>
#include <QCheckBox>
#include <QDialog>
#include <QDialogButtonBox>
#include <QDoubleSpinBox>
#include <QLineEdit>
#include <QPushButton>
#include <QSignalSpy>
#include <QSpinBox>
#include <QTest>

#include "app_test_support.h"
#include "chat_controller.h"
#include "chat_settings_editor.h"
#include "engine_host.h"
#include "main_window.h"
#include "quire/ui/chat_settings_panel.h"
#include "runtime_settings.h"
#include "test_main.h"

using namespace quire;
using namespace quire::test;

namespace {

QDialog* open_tuned_dialog(gui::QuireApplication& app) {
  app.window().chatSettingsAction()->trigger();
  QDialog* dialog = app.chatSettings().dialog();
  return dialog->isVisible() ? dialog : nullptr;
}

template <typename Field>
Field* tuned_field(gui::QuireApplication& app, const char* name) {
  return app.chatSettings().panel()->findChild<Field*>(QLatin1String(name));
}

}  // namespace

class ChatTunedSamplingTest : public QObject {
  Q_OBJECT

 private slots:
  void theEngineGetsEveryValue() {
    ui::SamplingDefaults defaults;
    defaults.temperature = 0.7;
    ui::TunedSampling& tuned = defaults.tuned;
    tuned.dry_multiplier = 0.8;
    tuned.dry_base = 2.25;
    tuned.dry_allowed_length = 4;
    tuned.dry_range = 512;
    tuned.dry_sequence_breakers = {QStringLiteral("\n"), QStringLiteral("「」")};
    tuned.xtc_threshold = 0.15;
    tuned.xtc_probability = 0.5;
    tuned.top_n_sigma = 1.5;
    tuned.mirostat = true;
    tuned.mirostat_tau = 4.5;
    tuned.mirostat_eta = 0.25;
    const engine::SamplingSettings s = gui::sampling_settings(defaults);
    QCOMPARE(s.dry_multiplier, 0.8f);
    QCOMPARE(s.dry_base, 2.25f);
    QCOMPARE(s.dry_allowed_length, 4);
    QCOMPARE(s.dry_range, 512);
    QCOMPARE(s.dry_sequence_breakers, (std::vector<std::string>{"\n", "「」"}));
    QCOMPARE(s.xtc_threshold, 0.15f);
    QCOMPARE(s.xtc_probability, 0.5f);
    QCOMPARE(s.top_n_sigma, 1.5f);
    QCOMPARE(s.mirostat, 2);
    QCOMPARE(s.mirostat_tau, 4.5f);
    QCOMPARE(s.mirostat_eta, 0.25f);
    tuned.mirostat = false;
    QCOMPARE(gui::sampling_settings(defaults).mirostat, 0);
  }

  void advancedSamplingIsSavedAndReachesTheReply() {
    AppRun run(demo_model(), 8);
    run.start();
    QVERIFY(run.waitForModel());
    gui::QuireApplication& app = *run.app;
    QVERIFY(run.send(QStringLiteral("Hello!")));
    const store::ChatId chat = *app.chats().currentChat();

    QDialog* dialog = open_tuned_dialog(app);
    QVERIFY(dialog);
    // Following the global settings: the fields show them and cannot be edited.
    auto* dry = tuned_field<QDoubleSpinBox>(app, "chatDryMultiplier");
    QVERIFY(dry);
    QVERIFY(!dry->isEnabled());
    QCOMPARE(dry->value(), 0.0);
    tuned_field<QCheckBox>(app, "chatTunedSamplingOverride")->setChecked(true);
    QVERIFY(dry->isEnabled());
    dry->setValue(0.8);
    tuned_field<QSpinBox>(app, "chatDryAllowedLength")->setValue(3);
    auto* breakers = tuned_field<QLineEdit>(app, "chatDryBreakers");
    breakers->selectAll();
    QTest::keyClicks(breakers, QStringLiteral("\"\\n\", \"###\""));
    tuned_field<QDoubleSpinBox>(app, "chatXtcProbability")->setValue(0.5);
    tuned_field<QDoubleSpinBox>(app, "chatTopNSigma")->setValue(1.5);
    dialog->findChild<QDialogButtonBox*>(QStringLiteral("chatSettingsButtons"))
        ->button(QDialogButtonBox::Save)
        ->click();
    QVERIFY(!dialog->isVisible());

    store::TunedSampling expected;
    expected.dry_multiplier = 0.8;
    expected.dry_allowed_length = 3;
    expected.dry_sequence_breakers = {QStringLiteral("\n"), QStringLiteral("###")};
    expected.xtc_probability = 0.5;
    expected.top_n_sigma = 1.5;
    QCOMPARE(app.store().chat_settings(chat)->tuned_sampling,
             std::optional<store::TunedSampling>(expected));

    // The next reply carries them to the engine, which samples with them.
    QSignalSpy requests(&app.engine(), &gui::EngineHost::replyRequested);
    const std::optional<store::GenerationStats> reply = run.send(QStringLiteral("Again."));
    QVERIFY(reply);
    QVERIFY2(reply->stop_reason != QLatin1String("error"), qPrintable(reply->stop_reason));
    QVERIFY(!requests.isEmpty());
    const ui::TunedSampling sent =
        requests.constLast().first().value<gui::ReplyRequest>().sampling.tuned;
    QCOMPARE(sent.dry_multiplier, 0.8);
    QCOMPARE(sent.dry_allowed_length, 3);
    QCOMPARE(sent.dry_sequence_breakers, expected.dry_sequence_breakers);
    QCOMPARE(sent.xtc_probability, 0.5);
    QCOMPARE(sent.top_n_sigma, 1.5);
    QVERIFY(!sent.mirostat);

    // Reset: the chat follows the global settings (all off) again.
    dialog = open_tuned_dialog(app);
    QVERIFY(dialog);
    QTest::mouseClick(
        app.chatSettings().panel()->findChild<QPushButton*>(QStringLiteral("resetChatSettings")),
        Qt::LeftButton);
    dialog->findChild<QDialogButtonBox*>(QStringLiteral("chatSettingsButtons"))
        ->button(QDialogButtonBox::Save)
        ->click();
    QCOMPARE(app.store().chat_settings(chat)->tuned_sampling, std::nullopt);
  }
};

QUIRE_TEST(ChatTunedSamplingTest)
#include "test_chat_tuned_sampling.moc"
