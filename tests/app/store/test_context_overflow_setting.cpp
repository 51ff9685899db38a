// A chat's context policy: kept with its settings in the database, across a
// reopen, and in its JSON file; a name the engine does not know is refused.

#include <QTemporaryDir>
#include <QTest>

#include "quire/app/store/chat_export.h"
#include "quire/app/store/chat_store.h"
#include "store_test_helpers.h"
#include "test_main.h"

using namespace quire::store;

class ContextOverflowSettingTest : public QObject {
  Q_OBJECT

  std::unique_ptr<QTemporaryDir> dir_;

  QString database() const { return dir_->filePath(QStringLiteral("chats.sqlite")); }

 private slots:
  void init() { dir_ = std::make_unique<QTemporaryDir>(); }

  void thePolicySurvivesAReopen() {
    ChatId chat{};
    {
      ChatStore store;
      QVERIFY(store.open(test::options(database())));
      chat = *store.create_chat(QStringLiteral("long chat"));
      QCOMPARE(store.chat_settings(chat)->context_overflow, std::optional<QString>());
      ChatSettings settings;
      settings.context_overflow = QStringLiteral("truncate_middle");
      settings.temperature = 0.5;
      QVERIFY2(store.set_chat_settings(chat, settings), qPrintable(store.error_string()));
    }
    ChatStore store;
    QVERIFY(store.open(test::options(database())));
    const std::optional<ChatSettings> settings = store.chat_settings(chat);
    QVERIFY(settings);
    QCOMPARE(settings->context_overflow, std::optional(QStringLiteral("truncate_middle")));
    QCOMPARE(settings->temperature, std::optional(0.5));
    QVERIFY(!settings->is_empty());
  }

  void anUnknownPolicyIsRefused() {
    ChatStore store;
    QVERIFY(store.open(test::options(database())));
    const ChatId chat = *store.create_chat(QStringLiteral("chat"));
    ChatSettings settings;
    settings.context_overflow = QStringLiteral("sideways");
    QVERIFY(!store.set_chat_settings(chat, settings));
    QVERIFY2(store.error_string().contains(
                 QStringLiteral("context_overflow must be stop, drop_oldest, truncate_middle "
                                "(got \"sideways\")")),
             qPrintable(store.error_string()));
    QCOMPARE(store.chat_settings(chat)->context_overflow, std::optional<QString>());
  }

  void theJsonFileKeepsThePolicy() {
    ChatStore store;
    QVERIFY(store.open(test::options(database())));
    const ChatId chat = *store.create_chat(QStringLiteral("chat"));
    ChatSettings settings;
    settings.context_overflow = QStringLiteral("stop");
    QVERIFY(store.set_chat_settings(chat, settings));
    const QByteArray json = chat_to_json(*store.document(chat));
    QVERIFY2(json.contains("\"context_overflow\": \"stop\""), json.constData());
    QString error;
    const std::optional<ChatDocument> read = chat_from_json(json, &error);
    QVERIFY2(read, qPrintable(error));
    QCOMPARE(read->settings.context_overflow, std::optional(QStringLiteral("stop")));
    const ChatId imported = *store.insert_document(*read);
    QCOMPARE(store.chat_settings(imported)->context_overflow,
             std::optional(QStringLiteral("stop")));

    // A file naming a policy Quire does not know is refused by name.
    QByteArray bad = json;
    bad.replace("\"context_overflow\": \"stop\"", "\"context_overflow\": \"sideways\"");
    QVERIFY(!chat_from_json(bad, &error));
    QVERIFY2(error.contains(QStringLiteral("context_overflow")), qPrintable(error));
  }
};

QUIRE_TEST(ContextOverflowSettingTest)

#include "test_context_overflow_setting.moc"
