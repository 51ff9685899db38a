// The folder of presets: built-ins overridden by files of the same name, save
// and read back, rename and delete, import under a free name, export, and
// resolving what `--preset` and the server's "preset" name.

#include <QDir>
#include <QFile>
#include <QTemporaryDir>
#include <QTest>

#include "quire/app/presets/preset_library.h"
#include "test_main.h"

using quire::presets::Preset;
using quire::presets::PresetLibrary;

namespace {

void write_text(const QString& path, const QByteArray& bytes) {
  QFile file(path);
  QVERIFY(file.open(QIODevice::WriteOnly));
  file.write(bytes);
}

Preset sample_preset(const QString& name, double temperature) {
  Preset preset;
  preset.name = name;
  preset.settings.temperature = temperature;
  preset.settings.system_prompt = QStringLiteral("Be brief.");
  return preset;
}

}  // namespace

class TestPresetLibrary : public QObject {
  Q_OBJECT

 private slots:
  void an_empty_folder_lists_the_built_ins() {
    QTemporaryDir dir;
    const PresetLibrary library(dir.filePath(QStringLiteral("presets")));
    QCOMPARE(library.names(), (QStringList{QStringLiteral("Precise"), QStringLiteral("Balanced"),
                                           QStringLiteral("Creative"), QStringLiteral("Code")}));
    QVERIFY(library.find(QStringLiteral("Creative"))->built_in);
  }

  void save_find_and_list() {
    QTemporaryDir dir;
    PresetLibrary library(dir.filePath(QStringLiteral("presets")));
    QString error;
    QVERIFY2(library.save(sample_preset(QStringLiteral("Zeta"), 0.3), &error), qPrintable(error));
    QVERIFY2(library.save(sample_preset(QStringLiteral("Alpha"), 0.4), &error), qPrintable(error));
    QVERIFY(QFile::exists(dir.filePath(QStringLiteral("presets/Alpha.json"))));
    QCOMPARE(library.names().mid(4),
             (QStringList{QStringLiteral("Alpha"), QStringLiteral("Zeta")}));
    QCOMPARE(library.find(QStringLiteral("Alpha")), sample_preset(QStringLiteral("Alpha"), 0.4));
    QVERIFY(!library.save(sample_preset(QStringLiteral("a/b"), 0.4), &error));
    QCOMPARE(error, QStringLiteral("Cannot save \"a/b\": a preset name cannot contain '/'."));
  }

  void a_user_preset_overrides_a_built_in() {
    QTemporaryDir dir;
    PresetLibrary library(dir.path());
    QString error;
    QVERIFY(library.save(sample_preset(QStringLiteral("Creative"), 1.5), &error));
    const QList<Preset> presets = library.list();
    QCOMPARE(presets.size(), 4);
    QCOMPARE(presets[2], sample_preset(QStringLiteral("Creative"), 1.5));
    // Deleting the override brings the built-in back; the built-in itself stays.
    QVERIFY(library.remove(QStringLiteral("Creative"), &error));
    QVERIFY(library.find(QStringLiteral("Creative"))->built_in);
    QVERIFY(!library.remove(QStringLiteral("Creative"), &error));
    QCOMPARE(error, QStringLiteral("\"Creative\" is built in and cannot be deleted."));
    QVERIFY(!library.rename(QStringLiteral("Code"), QStringLiteral("Mine"), &error));
    QCOMPARE(error, QStringLiteral("\"Code\" is built in and cannot be renamed; duplicate it "
                                   "and rename the copy."));
  }

  void rename_moves_the_file() {
    QTemporaryDir dir;
    PresetLibrary library(dir.path());
    QString error;
    QVERIFY(library.save(sample_preset(QStringLiteral("Old"), 0.5), &error));
    QVERIFY(library.save(sample_preset(QStringLiteral("Taken"), 0.6), &error));
    QVERIFY2(library.rename(QStringLiteral("Old"), QStringLiteral("New"), &error),
             qPrintable(error));
    QVERIFY(!library.find(QStringLiteral("Old")));
    QCOMPARE(library.find(QStringLiteral("New")), sample_preset(QStringLiteral("New"), 0.5));
    QVERIFY(!library.rename(QStringLiteral("New"), QStringLiteral("Taken"), &error));
    QCOMPARE(error,
             QStringLiteral("A preset named \"Taken\" exists already; choose another name."));
    QVERIFY(!library.rename(QStringLiteral("New"), QStringLiteral("Precise"), &error));
  }

  void import_takes_a_free_name() {
    QTemporaryDir dir;
    PresetLibrary library(dir.filePath(QStringLiteral("presets")));
    const QString shared = dir.filePath(QStringLiteral("shared.json"));
    write_text(shared, R"({"format": "quire-preset", "version": 1, "name": "Creative",
                           "settings": {"temperature": 0.9, "min_p": 0.2}})");
    QString error;
    const std::optional<Preset> first = library.import_file(shared, &error);
    QVERIFY2(first.has_value(), qPrintable(error));
    QCOMPARE(first->name, QStringLiteral("Creative (2)"));
    const std::optional<Preset> second = library.import_file(shared, &error);
    QCOMPARE(second->name, QStringLiteral("Creative (3)"));
    QCOMPARE(*library.find(QStringLiteral("Creative (3)"))->settings.min_p, 0.2);
    // A file without a name goes by its file name.
    const QString unnamed = dir.filePath(QStringLiteral("Story time.json"));
    write_text(unnamed, R"({"format": "quire-preset", "version": 1, "settings": {}})");
    QCOMPARE(library.import_file(unnamed, &error)->name, QStringLiteral("Story time"));
  }

  void a_broken_import_names_the_file_and_field() {
    QTemporaryDir dir;
    PresetLibrary library(dir.filePath(QStringLiteral("presets")));
    const QString broken = dir.filePath(QStringLiteral("broken.json"));
    write_text(broken, R"({"format": "quire-preset", "version": 1,
                           "settings": {"min_p": "low"}})");
    QString error;
    QVERIFY(!library.import_file(broken, &error));
    QCOMPARE(error, broken + QStringLiteral(": settings.min_p: expected a number"));
    QCOMPARE(library.names().size(), 4);
  }

  void broken_files_in_the_folder_are_reported_and_skipped() {
    QTemporaryDir dir;
    PresetLibrary library(dir.path());
    write_text(dir.filePath(QStringLiteral("Bad.json")), "not json");
    QString error;
    QVERIFY(library.save(sample_preset(QStringLiteral("Good"), 0.5), &error));
    QStringList problems;
    const QList<Preset> presets = library.list(&problems);
    QCOMPARE(presets.last().name, QStringLiteral("Good"));
    QCOMPARE(problems, (QStringList{dir.filePath(QStringLiteral("Bad.json")) +
                                    QStringLiteral(": not valid JSON (illegal value at byte 1)")}));
  }

  void export_writes_a_file_that_imports_back() {
    QTemporaryDir dir;
    PresetLibrary library(dir.filePath(QStringLiteral("a")));
    const QString path = dir.filePath(QStringLiteral("code.json"));
    QString error;
    QVERIFY2(library.export_file(QStringLiteral("Code"), path, &error), qPrintable(error));
    PresetLibrary other(dir.filePath(QStringLiteral("b")));
    QVERIFY(other.save(sample_preset(QStringLiteral("Unrelated"), 0.5), &error));
    const std::optional<Preset> imported = other.import_file(path, &error);
    QVERIFY2(imported.has_value(), qPrintable(error));
    QCOMPARE(imported->name, QStringLiteral("Code (2)"));
    QCOMPARE(imported->settings, library.find(QStringLiteral("Code"))->settings);
  }

  void resolve_a_name_or_a_file() {
    QTemporaryDir dir;
    const PresetLibrary library(dir.filePath(QStringLiteral("presets")));
    QString error;
    QCOMPARE(library.resolve(QStringLiteral("Code"), &error)->name, QStringLiteral("Code"));
    QVERIFY(!library.resolve(QStringLiteral("Nope"), &error));
    QCOMPARE(error, QStringLiteral("There is no preset \"Nope\". Available presets: Precise, "
                                   "Balanced, Creative, Code."));
    const QString file = dir.filePath(QStringLiteral("mine.json"));
    write_text(file, R"({"format": "quire-preset", "version": 1, "settings": {"top_p": 0.5}})");
    const std::optional<Preset> from_file = library.resolve(file, &error);
    QVERIFY2(from_file.has_value(), qPrintable(error));
    QCOMPARE(from_file->name, QStringLiteral("mine"));
    QCOMPARE(*from_file->settings.top_p, 0.5);
  }
};

QUIRE_TEST(TestPresetLibrary)
#include "test_preset_library.moc"
