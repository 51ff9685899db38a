// The preset a chat's settings were chosen from: stored by name beside the
// settings, read back after the store reopens, cleared, and refused for a chat
// that does not exist.

#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>

#include "quire/app/store/chat_store.h"
#include "store_test_helpers.h"
#include "test_main.h"

using namespace quire::store;
using quire::store::test::ManualTime;

class TestChatPreset : public QObject {
  Q_OBJECT

 private slots:
  void storedReadBackAndCleared() {
    QTemporaryDir dir;
    ManualTime time;
    const QString path = dir.filePath(QStringLiteral("chats.sqlite"));
    ChatId chat{};
    {
      ChatStore store;
      QVERIFY(store.open(test::options(path, &time)));
      chat = *store.create_chat(QStringLiteral("story"));
      QCOMPARE(store.chat_preset(chat), std::optional<QString>());
      QSignalSpy changed(&store, &ChatStore::chat_changed);
      QVERIFY(store.set_chat_preset(chat, QStringLiteral("Creative")));
      QCOMPARE(changed.count(), 1);
    }
    ChatStore store;
    QVERIFY(store.open(test::options(path, &time)));
    QCOMPARE(store.chat_preset(chat), std::optional<QString>(QStringLiteral("Creative")));
    QVERIFY(store.set_chat_preset(chat, std::nullopt));
    QCOMPARE(store.chat_preset(chat), std::optional<QString>());
    QVERIFY(!store.set_chat_preset(ChatId{9999}, QStringLiteral("Code")));
    QCOMPARE(store.error(), StoreError::NotFound);
    QVERIFY(!store.chat_preset(ChatId{9999}));
  }
};

QUIRE_TEST(TestChatPreset)
#include "test_chat_preset.moc"
