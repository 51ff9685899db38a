// The current-path model follows the store with fine-grained changes (a
// streamed reply changes its row, a branch switch replaces the rows below the
// branch point), and passes QAbstractItemModelTester throughout.

#include <QAbstractItemModelTester>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>

#include "quire/app/store/chat_path_model.h"
#include "quire/app/store/chat_store.h"
#include "quire/app/store/reply_writer.h"
#include "store_test_helpers.h"
#include "test_main.h"

using namespace quire::store;

class ChatPathModelTest : public QObject {
  Q_OBJECT

  std::unique_ptr<QTemporaryDir> dir_;
  std::unique_ptr<ChatStore> store_;
  std::unique_ptr<ChatPathModel> model_;
  std::unique_ptr<QAbstractItemModelTester> tester_;
  ChatId chat_{};

  QStringList rows() const {
    QStringList out;
    for (int row = 0; row < model_->rowCount(); ++row) {
      const QModelIndex index = model_->index(row);
      out << QStringLiteral("%1 %2/%3")
                 .arg(index.data(ChatPathModel::TextRole).toString())
                 .arg(index.data(ChatPathModel::SiblingIndexRole).toInt() + 1)
                 .arg(index.data(ChatPathModel::SiblingCountRole).toInt());
    }
    return out;
  }

 private slots:
  void init() {
    dir_ = std::make_unique<QTemporaryDir>();
    store_ = std::make_unique<ChatStore>();
    QVERIFY(store_->open(test::options(dir_->filePath(QStringLiteral("chats.sqlite")))));
    model_ = std::make_unique<ChatPathModel>(store_.get());
    tester_ = std::make_unique<QAbstractItemModelTester>(
        model_.get(), QAbstractItemModelTester::FailureReportingMode::QtTest);
    chat_ = *store_->create_chat(QStringLiteral("path"));
    store_->append_message(chat_, Role::User, QStringLiteral("q1"));
    store_->append_message(chat_, Role::Assistant, QStringLiteral("a1"));
  }

  void cleanup() {
    tester_.reset();
    model_.reset();
    store_.reset();
  }

  void showsTheCurrentPathWithSiblings() {
    QCOMPARE(model_->rowCount(), 0);
    model_->set_chat(chat_);
    QCOMPARE(rows(), (QStringList{"q1 1/1", "a1 1/1"}));
    QCOMPARE(model_->index(0).data(ChatPathModel::RoleRole).toString(), QStringLiteral("user"));
    QCOMPARE(model_->index(1).data(Qt::DisplayRole).toString(), QStringLiteral("a1"));
    QCOMPARE(model_->message_at(0), std::optional<MessageId>(store_->current_path(chat_)[0].id));
    QCOMPARE(model_->message_at(2), std::nullopt);
    QCOMPARE(model_->roleNames().value(ChatPathModel::SiblingCountRole),
             QByteArray("siblingCount"));
    model_->set_chat(std::nullopt);
    QCOMPARE(model_->rowCount(), 0);
  }

  void aStreamedReplyChangesItsRowOnly() {
    model_->set_chat(chat_);
    const auto first = *model_->message_at(0);
    QSignalSpy inserted(model_.get(), &QAbstractItemModel::rowsInserted);
    QSignalSpy removed(model_.get(), &QAbstractItemModel::rowsRemoved);
    QSignalSpy changed(model_.get(), &QAbstractItemModel::dataChanged);
    QSignalSpy reset(model_.get(), &QAbstractItemModel::modelReset);

    // Regenerate: the old reply's row goes, the new one comes, as a sibling.
    const auto reply = *store_->begin_reply_after(first, QString());
    QCOMPARE(removed.size(), 1);
    QCOMPARE(removed.first().at(1).toInt(), 1);
    QCOMPARE(inserted.size(), 1);
    QCOMPARE(rows(), (QStringList{"q1 1/1", " 2/2"}));
    {
      ReplyWriter writer(*store_, reply,
                         {.interval_ms = 0, .clock = [] { return 0; }, .timer = false});
      writer.append(QStringLiteral("a1, again"));
    }
    QCOMPARE(rows(), (QStringList{"q1 1/1", "a1, again 2/2"}));
    QCOMPARE(changed.size(), 1);
    QCOMPARE(changed.first().at(0).toModelIndex().row(), 1);
    QCOMPARE(inserted.size(), 1);
    QCOMPARE(reset.size(), 0);

    // "<": back to the first reply; q1 stays where it is.
    QVERIFY(store_->select_message(store_->siblings(reply)->ids.first()));
    QCOMPARE(rows(), (QStringList{"q1 1/1", "a1 1/2"}));
    QCOMPARE(removed.size(), 2);
    QCOMPARE(inserted.size(), 2);

    // Another chat's changes do not touch it.
    const auto other = *store_->create_chat(QStringLiteral("other"));
    store_->append_message(other, Role::User, QStringLiteral("elsewhere"));
    QCOMPARE(inserted.size(), 2);

    // Deleting the shown branch: the path falls back to the other reply.
    QVERIFY(store_->delete_branch(*model_->message_at(1)));
    QCOMPARE(rows(), (QStringList{"q1 1/1", "a1, again 1/1"}));
    store_->close();
    QCOMPARE(model_->rowCount(), 0);
  }
};

QUIRE_TEST(ChatPathModelTest)
#include "test_chat_path_model.moc"
