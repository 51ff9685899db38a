// The presets page and the chat's preset chooser, offscreen: importing a file
// adds it to the list and shows its values, a broken file gives a message
// naming it and its field, new/save/rename/delete reach the folder, and the
// chooser hands over a preset's values and says when they were changed.

#include <QApplication>
#include <QComboBox>
#include <QFile>
#include <QListWidget>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>
#include <QWheelEvent>

#include "quire/app/presets/preset_chooser.h"
#include "quire/app/presets/presets_page.h"
#include "quire/ui/chat_settings_panel.h"
#include "test_main.h"

using quire::presets::Preset;
using quire::presets::PresetChooser;
using quire::presets::PresetLibrary;
using quire::presets::PresetsPage;

Q_DECLARE_METATYPE(quire::presets::Preset)

namespace {

void write_text(const QString& path, const QByteArray& bytes) {
  QFile file(path);
  QVERIFY(file.open(QIODevice::WriteOnly));
  file.write(bytes);
}

QStringList listed(const PresetsPage& page) {
  QStringList names;
  const auto* list = page.findChild<QListWidget*>(QStringLiteral("presetList"));
  for (int row = 0; row < list->count(); ++row)
    names << list->item(row)->text();
  return names;
}

}  // namespace

class TestPresetsPage : public QObject {
  Q_OBJECT

 private slots:
  void importingAFileAddsItToTheList() {
    QTemporaryDir dir;
    PresetLibrary library(dir.filePath(QStringLiteral("presets")));
    PresetsPage page(library);
    QSignalSpy changed(&page, &PresetsPage::libraryChanged);
    const QString file = dir.filePath(QStringLiteral("shared.json"));
    write_text(file, R"({"format": "quire-preset", "version": 1, "name": "Storyteller",
                         "settings": {"temperature": 1.1, "system_prompt": "Tell a story."}})");
    QVERIFY(page.importFile(file));
    QCOMPARE(changed.count(), 1);
    QCOMPARE(listed(page).last(), QStringLiteral("Storyteller"));
    QCOMPARE(page.selectedName(), QStringLiteral("Storyteller"));
    QCOMPARE(page.editor()->overrides().temperature, std::optional<double>(1.1));
    QCOMPARE(page.message(), QStringLiteral("Imported \"Storyteller\"."));
    // The same file again takes a free name.
    QVERIFY(page.importFile(file));
    QCOMPARE(listed(page).last(), QStringLiteral("Storyteller (2)"));
  }

  void aBrokenFileGivesAMessageNamingIt() {
    QTemporaryDir dir;
    PresetLibrary library(dir.filePath(QStringLiteral("presets")));
    PresetsPage page(library);
    const QStringList before = listed(page);
    const QString file = dir.filePath(QStringLiteral("broken.json"));
    write_text(file, R"({"format": "quire-preset", "version": 1,
                         "settings": {"temperature": "warm"}})");
    QVERIFY(!page.importFile(file));
    QCOMPARE(page.message(), QStringLiteral("Cannot import ") + file +
                                 QStringLiteral(": settings.temperature: expected a number"));
    QCOMPARE(listed(page), before);
  }

  void builtInsAreMarkedAndEditsAreSaved() {
    QTemporaryDir dir;
    PresetLibrary library(dir.path());
    PresetsPage page(library);
    QCOMPARE(listed(page).first(), QStringLiteral("Precise (built in)"));
    QVERIFY(page.createPreset(QStringLiteral("Mine")));
    quire::ui::ChatOverrides values;
    values.temperature = 0.45;
    values.max_new_tokens = 99;
    page.editor()->setOverrides(values);
    QVERIFY(page.saveSelected());
    QCOMPARE(*library.find(QStringLiteral("Mine"))->settings.temperature, 0.45);
    QVERIFY(page.renameSelected(QStringLiteral("Ours")));
    QVERIFY(!library.find(QStringLiteral("Mine")));
    QCOMPARE(*library.find(QStringLiteral("Ours"))->settings.max_new_tokens, 99);
    QVERIFY(!page.createPreset(QStringLiteral("Ours")));
    QCOMPARE(page.message(),
             QStringLiteral("A preset named \"Ours\" exists already; choose another name."));
    QVERIFY(page.deleteSelected());
    QVERIFY(!library.find(QStringLiteral("Ours")));
  }

  void theChooserHandsOverValuesAndSaysWhenTheyChanged() {
    qRegisterMetaType<Preset>();
    QTemporaryDir dir;
    const PresetLibrary library(dir.path());
    PresetChooser chooser(library);
    chooser.show(std::nullopt, {});
    QCOMPARE(chooser.stateText(), QStringLiteral("No preset"));
    QSignalSpy chosen(&chooser, &PresetChooser::chosen);
    auto* combo = chooser.findChild<QComboBox*>(QStringLiteral("chatPresetChooser"));
    const int creative = combo->findData(QStringLiteral("Creative"));
    QVERIFY(creative > 0);
    combo->setCurrentIndex(creative);
    emit combo->activated(creative);
    QCOMPARE(chosen.count(), 1);
    const Preset preset = chosen.first().first().value<Preset>();
    QCOMPARE(preset, *library.find(QStringLiteral("Creative")));
    QCOMPARE(chooser.preset(), std::optional<QString>(QStringLiteral("Creative")));
    QCOMPARE(chooser.stateText(), QStringLiteral("Preset: Creative"));
    quire::store::ChatSettings edited = preset.settings;
    edited.tools_enabled = false;  // a chat's own choice: still the preset's values
    chooser.compare(edited);
    QCOMPARE(chooser.stateText(), QStringLiteral("Preset: Creative"));
    edited.temperature = 0.3;
    chooser.compare(edited);
    QCOMPARE(chooser.stateText(), QStringLiteral("Preset: Creative (changed)"));
    // A chat that remembers its preset shows it when opened again.
    chooser.show(QStringLiteral("Code"), library.find(QStringLiteral("Code"))->settings);
    QCOMPARE(combo->currentText(), QStringLiteral("Code"));
    QCOMPARE(chooser.stateText(), QStringLiteral("Preset: Code"));
  }

  void aWheelOverTheUnfocusedChooserChoosesNothing() {
    qRegisterMetaType<Preset>();
    QTemporaryDir dir;
    const PresetLibrary library(dir.path());
    PresetChooser chooser(library);
    chooser.show(std::nullopt, {});
    QSignalSpy chosen(&chooser, &PresetChooser::chosen);
    auto* combo = chooser.findChild<QComboBox*>(QStringLiteral("chatPresetChooser"));
    const QPointF inside(combo->width() / 2.0, combo->height() / 2.0);
    QWheelEvent down(inside, combo->mapToGlobal(inside), QPoint(), QPoint(0, -120), Qt::NoButton,
                     Qt::NoModifier, Qt::NoScrollPhase, false);
    QApplication::sendEvent(combo, &down);
    QCOMPARE(combo->currentIndex(), 0);
    QCOMPARE(chosen.count(), 0);
    QCOMPARE(chooser.stateText(), QStringLiteral("No preset"));
  }
};

QUIRE_TEST(TestPresetsPage)
#include "test_presets_page.moc"
