// The preset file: written and read back exactly, malformed files refused with
// the field and the problem, tool fields never part of a preset, and the chat
// file's settings reader shared.

#include <QJsonDocument>
#include <QJsonObject>
#include <QTest>

#include "quire/app/presets/preset.h"
#include "quire/app/store/chat_settings_json.h"
#include "test_main.h"

using quire::presets::Preset;
using quire::store::ChatSettings;

class TestPresetFiles : public QObject {
  Q_OBJECT

 private slots:
  void round_trip() {
    Preset preset;
    preset.name = QStringLiteral("Tutor «français»");
    preset.settings.system_prompt = QStringLiteral("Explain step by step.\n\"Quote\"");
    preset.settings.temperature = 0.35;
    preset.settings.top_p = 0.9;
    preset.settings.min_p = 0.02;
    preset.settings.repetition_penalty = 1.1;
    preset.settings.max_new_tokens = 777;
    preset.settings.prompt_format = QStringLiteral("chatml");
    const QByteArray json = quire::presets::preset_to_json(preset);
    const QJsonObject root = QJsonDocument::fromJson(json).object();
    QCOMPARE(root.value(QStringLiteral("format")).toString(), QStringLiteral("quire-preset"));
    QCOMPARE(root.value(QStringLiteral("version")).toInt(), 1);
    QCOMPARE(root.value(QStringLiteral("settings")).toObject(),
             quire::store::chat_settings_to_json(preset.settings));
    QString error;
    const std::optional<Preset> back = quire::presets::preset_from_json(json, &error);
    QVERIFY2(back.has_value(), qPrintable(error));
    QCOMPARE(*back, preset);
  }

  void tool_fields_are_not_kept() {
    Preset preset;
    preset.name = QStringLiteral("With tools");
    preset.settings.temperature = 0.5;
    preset.settings.tools_enabled = true;
    preset.settings.always_allowed_tools = {QStringLiteral("files/read")};
    const QByteArray json = quire::presets::preset_to_json(preset);
    QVERIFY(!json.contains("tools_enabled"));
    QVERIFY(!json.contains("always_allowed_tools"));
    const QByteArray shared =
        R"({"format": "quire-preset", "version": 1, "name": "X",
            "settings": {"temperature": 0.5, "tools_enabled": true,
                         "always_allowed_tools": ["files/read"]}})";
    const std::optional<Preset> read = quire::presets::preset_from_json(shared, nullptr);
    QVERIFY(read.has_value());
    ChatSettings expected;
    expected.temperature = 0.5;
    QCOMPARE(read->settings, expected);
  }

  void malformed_files_are_refused_data() {
    QTest::addColumn<QByteArray>("json");
    QTest::addColumn<QString>("error");
    QTest::newRow("not json") << QByteArray("{\"format\": ")
                              << QStringLiteral("not valid JSON (unterminated object at byte 11)");
    QTest::newRow("a chat file") << QByteArray(R"({"format": "quire-chat", "version": 3})")
                                 << QStringLiteral(
                                        "not a Quire preset (no \"format\": \"quire-preset\")");
    QTest::newRow("newer") << QByteArray(R"({"format": "quire-preset", "version": 2,
                                            "settings": {}})")
                           << QStringLiteral(
                                  "written by a newer version of Quire (preset version 2; this "
                                  "version reads up to 1). Update Quire to use it.");
    QTest::newRow("no settings") << QByteArray(R"({"format": "quire-preset", "version": 1})")
                                 << QStringLiteral("settings: missing");
    QTest::newRow("settings not an object")
        << QByteArray(R"({"format": "quire-preset", "version": 1, "settings": 3})")
        << QStringLiteral("settings: expected an object");
    QTest::newRow("temperature a string")
        << QByteArray(R"({"format": "quire-preset", "version": 1,
                          "settings": {"temperature": "hot"}})")
        << QStringLiteral("settings.temperature: expected a number");
    QTest::newRow("top_p out of range")
        << QByteArray(R"({"format": "quire-preset", "version": 1, "settings": {"top_p": 2}})")
        << QStringLiteral("settings: top_p must be greater than 0 and at most 1 (got 2)");
    QTest::newRow("max_new_tokens fractional")
        << QByteArray(R"({"format": "quire-preset", "version": 1,
                          "settings": {"max_new_tokens": 1.5}})")
        << QStringLiteral("settings.max_new_tokens: expected an integer");
    QTest::newRow("name with a slash")
        << QByteArray(R"({"format": "quire-preset", "version": 1, "name": "a/b",
                          "settings": {}})")
        << QStringLiteral("name: a preset name cannot contain '/'");
    QTest::newRow("name a number")
        << QByteArray(R"({"format": "quire-preset", "version": 1, "name": 7, "settings": {}})")
        << QStringLiteral("name: expected a string");
  }

  void malformed_files_are_refused() {
    QFETCH(QByteArray, json);
    QFETCH(QString, error);
    QString got;
    QVERIFY(!quire::presets::preset_from_json(json, &got).has_value());
    QCOMPARE(got, error);
  }

  void names_that_cannot_name_a_file() {
    using quire::presets::preset_name_problem;
    QCOMPARE(preset_name_problem(QStringLiteral("Creative")), QString());
    QCOMPARE(preset_name_problem(QString()), QStringLiteral("a preset needs a name"));
    QCOMPARE(preset_name_problem(QStringLiteral(" x")),
             QStringLiteral("a preset name cannot start or end with spaces"));
    QCOMPARE(preset_name_problem(QStringLiteral(".hidden")),
             QStringLiteral("a preset name cannot start with '.'"));
    QCOMPARE(preset_name_problem(QStringLiteral("a:b")),
             QStringLiteral("a preset name cannot contain ':'"));
  }

  void built_ins_are_valid_and_distinct() {
    const QList<Preset> built_ins = quire::presets::built_in_presets();
    QStringList names;
    for (const Preset& preset : built_ins) {
      QVERIFY(preset.built_in);
      QCOMPARE(preset.settings.problem(), QString());
      QVERIFY(preset.settings.system_prompt.has_value());
      QVERIFY(preset.settings.temperature.has_value());
      names << preset.name;
    }
    QCOMPARE(names, (QStringList{QStringLiteral("Precise"), QStringLiteral("Balanced"),
                                 QStringLiteral("Creative"), QStringLiteral("Code")}));
    // Ordered by how freely they sample.
    QVERIFY(*built_ins[0].settings.temperature < *built_ins[1].settings.temperature);
    QVERIFY(*built_ins[1].settings.temperature < *built_ins[2].settings.temperature);
  }
};

QUIRE_TEST(TestPresetFiles)
#include "test_preset_files.moc"
