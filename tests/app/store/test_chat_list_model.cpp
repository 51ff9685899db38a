// The sidebar model follows the store with fine-grained changes, and passes
// QAbstractItemModelTester throughout.

#include <QAbstractItemModelTester>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>

#include "quire/app/store/chat_list_model.h"
#include "quire/app/store/chat_store.h"
#include "quire/app/store/reply_writer.h"
#include "store_test_helpers.h"
#include "test_main.h"

using namespace quire::store;
using quire::store::test::ManualTime;

class ChatListModelTest : public QObject {
  Q_OBJECT

  std::unique_ptr<QTemporaryDir> dir_;
  ManualTime time_;
  std::unique_ptr<ChatStore> store_;
  std::unique_ptr<ChatListModel> model_;
  std::unique_ptr<QAbstractItemModelTester> tester_;

  QStringList titles() const {
    QStringList out;
    for (int row = 0; row < model_->rowCount(); ++row) {
      out << model_->index(row).data(ChatListModel::TitleRole).toString();
    }
    return out;
  }

  ChatId add(const QString& title) {
    time_.advance_ms(1000);
    return *store_->create_chat(title);
  }

 private slots:
  void init() {
    dir_ = std::make_unique<QTemporaryDir>();
    time_ = ManualTime();
    store_ = std::make_unique<ChatStore>();
    QVERIFY(store_->open(test::options(dir_->filePath(QStringLiteral("chats.sqlite")), &time_)));
    model_ = std::make_unique<ChatListModel>(store_.get());
    tester_ = std::make_unique<QAbstractItemModelTester>(
        model_.get(), QAbstractItemModelTester::FailureReportingMode::QtTest);
  }

  void cleanup() {
    tester_.reset();
    model_.reset();
    store_.reset();
  }

  void newChatsAppearOnTop() {
    QSignalSpy inserted(model_.get(), &QAbstractItemModel::rowsInserted);
    add(QStringLiteral("first"));
    add(QStringLiteral("second"));
    QCOMPARE(inserted.size(), 2);
    QCOMPARE(inserted.last().at(1).toInt(), 0);
    QCOMPARE(titles(), (QStringList{QStringLiteral("second"), QStringLiteral("first")}));
    const QModelIndex top = model_->index(0);
    QCOMPARE(top.data(Qt::DisplayRole).toString(), QStringLiteral("second"));
    QCOMPARE(top.data(ChatListModel::MessageCountRole).toInt(), 0);
    QCOMPARE(top.data(ChatListModel::LastActivityRole).toDateTime(), time_.now());
    QCOMPARE(model_->chat_at(0),
             std::optional<ChatId>(ChatId{top.data(ChatListModel::IdRole).toLongLong()}));
    QVERIFY(!model_->chat_at(2));
    QVERIFY(model_->roleNames().contains(ChatListModel::MessageCountRole));
  }

  void activityMovesARowToTheTop() {
    const ChatId a = add(QStringLiteral("a"));
    add(QStringLiteral("b"));
    add(QStringLiteral("c"));
    QSignalSpy moved(model_.get(), &QAbstractItemModel::rowsMoved);
    QSignalSpy changed(model_.get(), &QAbstractItemModel::dataChanged);
    time_.advance_ms(1000);
    QVERIFY(store_->append_message(a, Role::User, QStringLiteral("hello")));
    QCOMPARE(moved.size(), 1);
    QCOMPARE(moved.first().at(1).toInt(), 2);  // from row 2
    QCOMPARE(moved.first().at(4).toInt(), 0);  // to the top
    QCOMPARE(changed.size(), 1);
    QCOMPARE(titles(),
             (QStringList{QStringLiteral("a"), QStringLiteral("c"), QStringLiteral("b")}));
    QCOMPARE(model_->index(0).data(ChatListModel::MessageCountRole).toInt(), 1);

    // A streaming reply at the top updates the row in place.
    moved.clear();
    changed.clear();
    const auto reply = store_->begin_reply(a, QString());
    ReplyWriter writer(*store_, *reply, {0, {}, false});
    time_.advance_ms(1000);
    writer.append(QStringLiteral("Hi"));
    QCOMPARE(moved.size(), 0);
    QCOMPARE(changed.size(), 2);
    QCOMPARE(model_->index(0).data(ChatListModel::MessageCountRole).toInt(), 2);
    QCOMPARE(model_->index(0).data(ChatListModel::LastActivityRole).toDateTime(), time_.now());
  }

  void renameChangesDataWithoutMoving() {
    add(QStringLiteral("a"));
    const ChatId b = add(QStringLiteral("b"));
    QSignalSpy changed(model_.get(), &QAbstractItemModel::dataChanged);
    QSignalSpy moved(model_.get(), &QAbstractItemModel::rowsMoved);
    QVERIFY(store_->rename_chat(b, QStringLiteral("bee")));
    QCOMPARE(changed.size(), 1);
    QCOMPARE(changed.first().at(0).value<QModelIndex>().row(), 0);
    QCOMPARE(moved.size(), 0);
    // Editing in the view renames in the store.
    QVERIFY(model_->flags(model_->index(1)) & Qt::ItemIsEditable);
    QVERIFY(model_->setData(model_->index(1), QStringLiteral("ay")));
    QCOMPARE(titles(), (QStringList{QStringLiteral("bee"), QStringLiteral("ay")}));
    QCOMPARE(store_->list_chats().last().title, QStringLiteral("ay"));
  }

  void deleteAndUndoRemoveAndInsertRows() {
    add(QStringLiteral("a"));
    const ChatId b = add(QStringLiteral("b"));
    add(QStringLiteral("c"));
    QSignalSpy removed(model_.get(), &QAbstractItemModel::rowsRemoved);
    QSignalSpy inserted(model_.get(), &QAbstractItemModel::rowsInserted);
    QVERIFY(store_->delete_chat(b));
    QCOMPARE(removed.size(), 1);
    QCOMPARE(removed.first().at(1).toInt(), 1);
    QCOMPARE(titles(), (QStringList{QStringLiteral("c"), QStringLiteral("a")}));
    QCOMPARE(model_->row_of(b), -1);
    QVERIFY(store_->restore_chat(b));
    QCOMPARE(inserted.size(), 1);
    QCOMPARE(inserted.first().at(1).toInt(), 1);  // back in its place by activity
    QCOMPARE(titles(),
             (QStringList{QStringLiteral("c"), QStringLiteral("b"), QStringLiteral("a")}));
  }

  void reopeningResetsTheModel() {
    add(QStringLiteral("a"));
    QSignalSpy reset(model_.get(), &QAbstractItemModel::modelReset);
    const StoreOptions options = test::options(store_->path(), &time_);
    store_->close();
    QCOMPARE(reset.size(), 1);
    QCOMPARE(model_->rowCount(), 0);
    QVERIFY(store_->open(options));
    QCOMPARE(reset.size(), 2);
    QCOMPARE(titles(), QStringList{QStringLiteral("a")});
  }

  void importedChatFindsItsPlace() {
    add(QStringLiteral("newer"));
    ChatDocument old;
    old.title = QStringLiteral("old import");
    old.created = old.updated = time_.now().addYears(-1);
    QVERIFY(store_->insert_document(old));
    QCOMPARE(titles(), (QStringList{QStringLiteral("newer"), QStringLiteral("old import")}));
  }
};

QUIRE_TEST(ChatListModelTest)
#include "test_chat_list_model.moc"
