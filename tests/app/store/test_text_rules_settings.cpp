// A chat's banned strings and logit biases by text: kept by the store across
// a reopen, kept by a chat of schema version 7 that is upgraded (which had
// none), carried by the chat file both ways, and refused when malformed.

#include <QTemporaryDir>
#include <QTest>

#include "quire/app/store/chat_export.h"
#include "quire/app/store/chat_settings_json.h"
#include "quire/app/store/chat_store.h"
#include "store_test_helpers.h"
#include "test_main.h"

using namespace quire::store;

namespace {

ChatSettings text_rules() {
  ChatSettings settings;
  settings.banned_strings = {QStringLiteral("As an AI"), QStringLiteral("\n\n###"),
                             QStringLiteral("42")};
  settings.logit_bias_text = {{QStringLiteral(" Sure"), -5.5}, {QStringLiteral("7"), 100}};
  return settings;
}

}  // namespace

class TextRulesSettingsTest : public QObject {
  Q_OBJECT

  std::unique_ptr<QTemporaryDir> dir_;

  QString path() const { return dir_->filePath(QStringLiteral("chats.sqlite")); }

 private slots:
  void init() { dir_ = std::make_unique<QTemporaryDir>(); }

  void theStoreKeepsThemAcrossAReopen() {
    ChatSettings settings = text_rules();
    settings.temperature = 0.6;
    ChatId chat{};
    {
      ChatStore store;
      QVERIFY(store.open(test::options(path())));
      chat = *store.create_chat(QStringLiteral("rules"));
      QVERIFY(store.chat_settings(chat)->banned_strings.isEmpty());
      QVERIFY2(store.set_chat_settings(chat, settings), qPrintable(store.error_string()));
    }
    ChatStore store;
    QVERIFY(store.open(test::options(path())));
    QCOMPARE(store.chat_settings(chat), std::optional<ChatSettings>(settings));
    settings.banned_strings.clear();
    settings.logit_bias_text.clear();
    QVERIFY(store.set_chat_settings(chat, settings));
    QCOMPARE(store.chat_settings(chat), std::optional<ChatSettings>(settings));
  }

  void aVersion7ChatIsUpgradedKeepingItsSettings() {
    ChatSettings settings;
    settings.system_prompt = QStringLiteral("Be brief.");
    settings.context_overflow = QStringLiteral("stop");
    ChatId chat{};
    {
      ChatStore store;
      QVERIFY(store.open(test::options(path())));
      chat = *store.create_chat(QStringLiteral("old"));
      QVERIFY(store.set_chat_settings(chat, settings));
      QVERIFY(store.set_chat_preset(chat, QStringLiteral("Precise")));
    }
    {
      // The file as version 7 left it: no columns for the text rules, no
      // image tables (version 9).
      test::RawDatabase raw(path());
      QVERIFY(raw.exec({QStringLiteral("DROP TRIGGER images_unused"),
                        QStringLiteral("DROP TRIGGER message_images_message_gone"),
                        QStringLiteral("DROP TRIGGER message_images_deleted_gone"),
                        QStringLiteral("DROP TABLE message_images"),
                        QStringLiteral("DROP TABLE images"),
                        QStringLiteral("ALTER TABLE chats DROP COLUMN banned_strings"),
                        QStringLiteral("ALTER TABLE chats DROP COLUMN logit_bias_text"),
                        QStringLiteral("PRAGMA user_version = 7")}));
    }
    ChatStore store;
    QVERIFY2(store.open(test::options(path())), qPrintable(store.error_string()));
    QCOMPARE(store.chat_settings(chat), std::optional<ChatSettings>(settings));
    QCOMPARE(store.chat_preset(chat), std::optional<QString>(QStringLiteral("Precise")));
    ChatSettings with_rules = text_rules();
    with_rules.system_prompt = settings.system_prompt;
    QVERIFY(store.set_chat_settings(chat, with_rules));
    QCOMPARE(store.chat_settings(chat), std::optional<ChatSettings>(with_rules));
  }

  void malformedRulesAreRefusedByName() {
    ChatStore store;
    QVERIFY(store.open(test::options(path())));
    const ChatId chat = *store.create_chat(QStringLiteral("rules"));
    ChatSettings settings;
    settings.logit_bias_text.insert(QStringLiteral("Sure"), 150);
    QVERIFY(!store.set_chat_settings(chat, settings));
    QCOMPARE(store.error_string(),
             QStringLiteral("The chat's settings were not changed: logit_bias for \"Sure\" must "
                            "be from -100 to 100 (got 150)."));
    settings.logit_bias_text.clear();
    settings.banned_strings << QString();
    QCOMPARE(settings.problem(), QStringLiteral("banned_strings must not hold an empty string"));
  }

  void theChatFileCarriesThemBothWays() {
    ChatDocument document;
    document.title = QStringLiteral("rules");
    document.created = QDateTime::fromMSecsSinceEpoch(1714564800000, Qt::UTC);
    document.updated = document.created;
    document.settings = text_rules();
    const QByteArray json = chat_to_json(document);
    QVERIFY(json.contains("\"banned_strings\""));
    QVERIFY(json.contains("\" Sure\": -5.5"));
    QString error;
    const std::optional<ChatDocument> read = chat_from_json(json, &error);
    QVERIFY2(read, qPrintable(error));
    QCOMPARE(*read, document);
  }

  void badFilesAreRefusedNamingTheField_data() {
    QTest::addColumn<QByteArray>("settings");
    QTest::addColumn<QString>("message");
    QTest::newRow("banned not a list") << QByteArray(R"({"banned_strings": "no"})")
                                       << "chat_settings.banned_strings: expected an array of "
                                          "strings";
    QTest::newRow("banned empty") << QByteArray(R"({"banned_strings": [""]})")
                                  << "chat_settings: banned_strings must not hold an empty string";
    QTest::newRow("bias not a number") << QByteArray(R"({"logit_bias": {"Sure": "-5"}})")
                                       << "chat_settings.logit_bias[\"Sure\"]: expected a number";
    QTest::newRow("bias out of range")
        << QByteArray(R"({"logit_bias": {"Sure": -101}})")
        << "chat_settings: logit_bias for \"Sure\" must be from -100 to 100 (got -101)";
  }

  void badFilesAreRefusedNamingTheField() {
    QFETCH(QByteArray, settings);
    QFETCH(QString, message);
    QString error;
    QVERIFY(!chat_from_json(test::chat_file_with_settings(settings), &error));
    QCOMPARE(error, message);
  }
};

QUIRE_TEST(TextRulesSettingsTest)
#include "test_text_rules_settings.moc"
