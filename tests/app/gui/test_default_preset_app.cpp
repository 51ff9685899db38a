// Settings → Default preset for new chats: a new chat starts with the
// preset's values and remembers the preset, exactly as choosing it in its
// Chat settings does; chats that exist keep their own; "None" leaves new
// chats following the global settings.

#include <QComboBox>
#include <QPushButton>
#include <QSignalSpy>
#include <QTest>

#include "app_test_support.h"
#include "chat_controller.h"
#include "chat_settings_editor.h"
#include "engine_host.h"
#include "main_window.h"
#include "quire/app/presets/preset.h"
#include "quire/ui/chat_list_widget.h"
#include "quire/ui/settings_panel.h"
#include "test_main.h"

using namespace quire;
using namespace quire::test;

namespace {

// Chooses `data` ("" for None) in Settings and applies it.
bool choose_default_preset(AppRun& run, const QString& data) {
  ui::SettingsPanel& panel = *run.app->window().settingsPanel();
  auto* box = panel.findChild<QComboBox*>(QStringLiteral("defaultPreset"));
  auto* apply = panel.findChild<QPushButton*>(QStringLiteral("applyButton"));
  const int index = box->findData(data);
  if (index < 0) return false;
  box->setCurrentIndex(index);
  if (!apply->isEnabled()) return false;
  apply->click();
  return run.app->settings().engine.default_preset == data;
}

}  // namespace

class DefaultPresetAppTest : public QObject {
  Q_OBJECT

 private slots:
  void aNewChatStartsFromTheDefaultPreset() {
    AppRun run(random_model(), 8);
    run.start();
    QVERIFY(run.waitForModel());
    gui::QuireApplication& app = *run.app;
    QVERIFY(run.send(QStringLiteral("Before any default.")));
    const store::ChatId before = *app.chats().currentChat();

    QVERIFY(choose_default_preset(run, QStringLiteral("Code")));
    std::optional<presets::Preset> chosen;
    for (const presets::Preset& preset : presets::built_in_presets()) {
      if (preset.name == QLatin1String("Code")) chosen = preset;
    }
    QVERIFY(chosen);

    // The chat on show is not touched.
    QCOMPARE(app.store().chat_preset(before), std::optional<QString>());
    QVERIFY(app.store().chat_settings(before)->is_empty());

    // A new chat: its first message creates it with the preset's values.
    emit app.window().chatList()->newChatRequested();
    QVERIFY(!app.chats().currentChat());
    QSignalSpy requests(&app.engine(), &gui::EngineHost::replyRequested);
    QVERIFY(run.send(QStringLiteral("Write a loop.")));
    const store::ChatId chat = *app.chats().currentChat();
    QVERIFY(chat != before);
    QCOMPARE(app.store().chat_settings(chat),
             std::optional<store::ChatSettings>(presets::preset_values(chosen->settings)));
    QCOMPARE(app.store().chat_preset(chat), std::optional<QString>(QStringLiteral("Code")));
    // Its first reply already used them.
    const auto request = requests.constFirst().first().value<gui::ReplyRequest>();
    QCOMPARE(request.sampling.temperature, *chosen->settings.temperature);
    QCOMPARE(request.system_prompt, *chosen->settings.system_prompt);

    // None: the next new chat follows the global settings.
    QVERIFY(choose_default_preset(run, QString()));
    emit app.window().chatList()->newChatRequested();
    QVERIFY(run.send(QStringLiteral("Plain.")));
    const store::ChatId plain = *app.chats().currentChat();
    QVERIFY(plain != chat);
    QVERIFY(app.store().chat_settings(plain)->is_empty());
    QCOMPARE(app.store().chat_preset(plain), std::optional<QString>());
  }
};

QUIRE_TEST(DefaultPresetAppTest)
#include "test_default_preset_app.moc"
