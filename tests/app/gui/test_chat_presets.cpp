// Presets through the whole program: choosing one in Chat settings copies its
// values into the chat, the chat remembers it ("Preset: Code", then
// "Preset: Code (changed)" after an edit), and its values reach the reply
// request; Model → Presets… imports a file into the list and names a broken
// one.

#include <QAction>
#include <QComboBox>
#include <QDialog>
#include <QDialogButtonBox>
#include <QFile>
#include <QListWidget>
#include <QPushButton>
#include <QSignalSpy>
#include <QTest>

#include "app_test_support.h"
#include "chat_controller.h"
#include "chat_settings_editor.h"
#include "engine_host.h"
#include "main_window.h"
#include "quire/app/presets/preset_chooser.h"
#include "quire/app/presets/preset_library.h"
#include "quire/app/presets/presets_page.h"
#include "quire/ui/chat_settings_panel.h"
#include "test_main.h"

using namespace quire;
using namespace quire::test;

namespace {

void choose_preset(presets::PresetChooser* chooser, const QString& name) {
  auto* combo = chooser->findChild<QComboBox*>(QStringLiteral("chatPresetChooser"));
  const int index = combo->findData(name);
  QVERIFY(index > 0);
  combo->setCurrentIndex(index);
  emit combo->activated(index);
}

void save_chat_settings(QDialog* dialog) {
  dialog->findChild<QDialogButtonBox*>(QStringLiteral("chatSettingsButtons"))
      ->button(QDialogButtonBox::Save)
      ->click();
}

}  // namespace

class ChatPresetsTest : public QObject {
  Q_OBJECT

 private slots:
  void aChosenPresetSetsTheChatsValuesAndReachesTheRequest() {
    AppRun run(demo_model(), 24);
    run.start();
    QVERIFY(run.waitForModel());
    gui::QuireApplication* app = run.app.get();
    QSignalSpy requests(&app->engine(), &gui::EngineHost::replyRequested);
    QVERIFY(run.send(QStringLiteral("Hello!")));
    const store::ChatId chat = *app->chats().currentChat();
    // A short longest reply keeps the test quick.
    presets::Preset code;
    code.name = QStringLiteral("Code");
    code.settings.system_prompt = QStringLiteral("You write code.");
    code.settings.temperature = 0.0;
    code.settings.min_p = 0.2;
    code.settings.max_new_tokens = 6;
    QString error;
    QVERIFY2(app->presets().save(code, &error), qPrintable(error));
    code.built_in = false;

    app->window().chatSettingsAction()->trigger();
    QDialog* dialog = app->chatSettings().dialog();
    QVERIFY(dialog->isVisible());
    presets::PresetChooser* chooser = app->chatSettings().presetChooser();
    QCOMPARE(chooser->stateText(), QStringLiteral("No preset"));
    choose_preset(chooser, QStringLiteral("Code"));
    QCOMPARE(chooser->stateText(), QStringLiteral("Preset: Code"));
    QCOMPARE(app->chatSettings().panel()->overrides().temperature, code.settings.temperature);
    save_chat_settings(dialog);
    QCOMPARE(app->store().chat_settings(chat), std::optional<store::ChatSettings>(code.settings));
    QCOMPARE(app->store().chat_preset(chat), std::optional<QString>(QStringLiteral("Code")));

    // The next reply is asked with the preset's values.
    QVERIFY(run.send(QStringLiteral("Write a loop.")));
    const gui::ReplyRequest request = requests.constLast().first().value<gui::ReplyRequest>();
    QCOMPARE(request.system_prompt, *code.settings.system_prompt);
    QCOMPARE(request.sampling.temperature, *code.settings.temperature);
    QCOMPARE(request.sampling.min_p, *code.settings.min_p);
    QCOMPARE(request.max_new_tokens, *code.settings.max_new_tokens);

    // Opened again: the chat's preset, and "(changed)" once a value is edited.
    app->window().chatSettingsAction()->trigger();
    QCOMPARE(chooser->stateText(), QStringLiteral("Preset: Code"));
    ui::ChatOverrides edited = app->chatSettings().panel()->overrides();
    edited.temperature = 0.9;
    app->chatSettings().panel()->setOverrides(edited);
    emit app->chatSettings().panel()->edited();
    QCOMPARE(chooser->stateText(), QStringLiteral("Preset: Code (changed)"));
    save_chat_settings(dialog);
    QCOMPARE(app->store().chat_preset(chat), std::optional<QString>(QStringLiteral("Code")));
    QCOMPARE(app->store().chat_settings(chat)->temperature, std::optional<double>(0.9));
  }

  void thePresetsDialogImportsFilesAndNamesBrokenOnes() {
    AppRun run(QString(), 24);
    run.start();
    gui::QuireApplication* app = run.app.get();
    app->window().presetsAction()->trigger();
    presets::PresetsPage* page = app->presetsPage();
    QVERIFY(page != nullptr);
    QVERIFY(page->window()->isVisible());
    const QString good = run.data.filePath(QStringLiteral("story.json"));
    QFile file(good);
    QVERIFY(file.open(QIODevice::WriteOnly));
    file.write(R"({"format": "quire-preset", "version": 1, "name": "Storyteller",
                   "settings": {"temperature": 1.1}})");
    file.close();
    QVERIFY(page->importFile(good));
    auto* list = page->findChild<QListWidget*>(QStringLiteral("presetList"));
    QCOMPARE(list->item(list->count() - 1)->text(), QStringLiteral("Storyteller"));
    // The chat settings' chooser offers it too.
    QVERIFY(app->presets().names().contains(QStringLiteral("Storyteller")));

    const QString broken = run.data.filePath(QStringLiteral("broken.json"));
    QFile bad(broken);
    QVERIFY(bad.open(QIODevice::WriteOnly));
    bad.write(R"({"format": "quire-preset", "version": 1, "settings": {"top_p": 7}})");
    bad.close();
    QVERIFY(!page->importFile(broken));
    QCOMPARE(page->message(),
             QStringLiteral("Cannot import ") + broken +
                 QStringLiteral(": settings: top_p must be greater than 0 and at most 1 (got 7)"));
  }
};

QUIRE_TEST(ChatPresetsTest)
#include "test_chat_presets.moc"
