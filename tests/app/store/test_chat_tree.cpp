// Chats as trees: edit and resend and regenerate add siblings, the current
// path follows the branch selected last (across a restart), branches are
// copied into new chats and deleted with undo; chats keep settings of their own.

#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>

#include "quire/app/store/chat_store.h"
#include "quire/app/store/reply_writer.h"
#include "store_test_helpers.h"
#include "test_main.h"

using namespace quire::store;
using quire::store::test::ManualTime;

namespace {

QStringList texts(const QList<Message>& messages) {
  QStringList out;
  for (const Message& message : messages)
    out << message.text;
  return out;
}

QList<int> positions(const QList<Message>& messages) {
  QList<int> out;
  for (const Message& message : messages)
    out << message.position;
  return out;
}

}  // namespace

class ChatTreeTest : public QObject {
  Q_OBJECT

  std::unique_ptr<QTemporaryDir> dir_;
  ManualTime time_;
  std::unique_ptr<ChatStore> store_;
  ChatId chat_{};
  // q1 -> a1 -> q2 -> a2, each with token ids.
  QList<MessageId> ids_;

  QString path() const { return dir_->filePath(QStringLiteral("chats.sqlite")); }
  QStringList current() const { return texts(store_->current_path(chat_)); }

 private slots:
  void init() {
    dir_ = std::make_unique<QTemporaryDir>();
    time_ = ManualTime();
    store_ = std::make_unique<ChatStore>();
    QVERIFY(store_->open(test::options(path(), &time_)));
    chat_ = *store_->create_chat(QStringLiteral("tree"));
    ids_.clear();
    for (const char* text : {"q1", "a1", "q2", "a2"}) {
      const Role role = text[0] == 'q' ? Role::User : Role::Assistant;
      ids_ << *store_->append_message(chat_, role, QString::fromLatin1(text),
                                      std::vector<std::int32_t>{text[1], 7});
    }
  }

  void cleanup() { store_.reset(); }

  void appendedMessagesFormOneBranch() {
    const QList<Message> path = store_->current_path(chat_);
    QCOMPARE(texts(path), (QStringList{"q1", "a1", "q2", "a2"}));
    QCOMPARE(positions(path), (QList<int>{0, 1, 2, 3}));
    QCOMPARE(path[0].parent, std::nullopt);
    QCOMPARE(path[1].parent, std::optional<MessageId>(ids_[0]));
    QCOMPARE(path[3].parent, std::optional<MessageId>(ids_[2]));
    QCOMPARE(store_->messages(chat_), path);
    QCOMPARE(store_->message_tree(chat_), path);
    QCOMPARE(store_->siblings(ids_[2]), std::optional<Siblings>(Siblings{{ids_[2]}, 0}));
  }

  void editAndResendAddsASibling() {
    QSignalSpy changed(store_.get(), &ChatStore::chat_changed);
    time_.advance_ms(5000);
    const auto edited =
        store_->add_message(chat_, ids_[1], Role::User, QStringLiteral("q2, better"));
    QVERIFY2(edited, qPrintable(store_->error_string()));
    QCOMPARE(changed.size(), 1);
    QCOMPARE(current(), (QStringList{"q1", "a1", "q2, better"}));
    QCOMPARE(store_->message(*edited)->position, 2);
    QCOMPARE(store_->siblings(*edited), std::optional<Siblings>(Siblings{{ids_[2], *edited}, 1}));
    QCOMPARE(store_->siblings(ids_[2]), std::optional<Siblings>(Siblings{{ids_[2], *edited}, 0}));
    QCOMPARE(store_->message_tree(chat_).size(), 5);
    QCOMPARE(store_->chat(chat_)->message_count, 5);
    QCOMPARE(store_->chat(chat_)->updated, time_.now());

    // The reply goes below the edited message; the old branch is untouched.
    const auto reply = store_->begin_reply(chat_, QStringLiteral("tiny"));
    QCOMPARE(store_->message(*reply)->parent, edited);
    QCOMPARE(current(), (QStringList{"q1", "a1", "q2, better", ""}));
    QCOMPARE(store_->message(ids_[3])->text, QStringLiteral("a2"));
    QCOMPARE(store_->message(ids_[3])->tokens, (std::vector<std::int32_t>{'2', 7}));

    // Editing the first message: first messages are siblings too.
    const auto first = store_->add_message(chat_, std::nullopt, Role::User, QStringLiteral("q1'"));
    QCOMPARE(current(), QStringList{"q1'"});
    QCOMPARE(store_->siblings(*first), std::optional<Siblings>(Siblings{{ids_[0], *first}, 1}));

    // A parent from another chat is refused.
    const auto other = store_->create_chat(QStringLiteral("other"));
    QVERIFY(!store_->add_message(*other, ids_[0], Role::User, QStringLiteral("x")));
    QCOMPARE(store_->error(), StoreError::InvalidArgument);
    QVERIFY(!store_->add_message(chat_, MessageId{999}, Role::User, QStringLiteral("x")));
    QCOMPARE(store_->error(), StoreError::NotFound);
  }

  void regenerateKeepsTheOldReply() {
    const auto reply = store_->begin_reply_after(ids_[2], QStringLiteral("tiny"));
    QVERIFY(reply);
    QCOMPARE(store_->message(*reply)->stats->stop_reason, QString::fromLatin1(kStopInterrupted));
    {
      ReplyWriter writer(*store_, *reply,
                         {.interval_ms = 0, .clock = [] { return 0; }, .timer = false});
      writer.append(QStringLiteral("a2, again"), std::vector<std::int32_t>{5, 6});
      GenerationStats stats;
      stats.stop_reason = QStringLiteral("eos");
      QVERIFY(writer.finish(stats));
    }
    QCOMPARE(current(), (QStringList{"q1", "a1", "q2", "a2, again"}));
    QCOMPARE(store_->message(*reply)->tokens, (std::vector<std::int32_t>{5, 6}));
    QCOMPARE(store_->siblings(*reply), std::optional<Siblings>(Siblings{{ids_[3], *reply}, 1}));
    const Message old = *store_->message(ids_[3]);
    QCOMPARE(old.text, QStringLiteral("a2"));
    QCOMPARE(old.tokens, (std::vector<std::int32_t>{'2', 7}));

    // "<": back to the first reply.
    QVERIFY(store_->select_message(ids_[3]));
    QCOMPARE(current(), (QStringList{"q1", "a1", "q2", "a2"}));
  }

  void selectingFollowsTheBranchSeenLast() {
    // Below a1: q2 -> a2 and q2b -> a2b; below a2: two replies.
    const auto q2b = *store_->add_message(chat_, ids_[1], Role::User, QStringLiteral("q2b"));
    const auto a2b = *store_->begin_reply(chat_, QString());
    QVERIFY(store_->select_message(ids_[2]));
    QCOMPARE(current(), (QStringList{"q1", "a1", "q2", "a2"}));
    const auto a2c = *store_->begin_reply_after(ids_[2], QString());
    QVERIFY(store_->write_reply(a2c, QStringLiteral("a2c"), {}, std::nullopt));
    QVERIFY(store_->select_message(ids_[3]));
    QCOMPARE(current(), (QStringList{"q1", "a1", "q2", "a2"}));

    // Away to q2b and back: q2's branch comes back with a2, seen last there.
    QVERIFY(store_->select_message(q2b));
    QCOMPARE(current(), (QStringList{"q1", "a1", "q2b", ""}));
    QCOMPARE(store_->current_path(chat_).last().id, a2b);
    QVERIFY(store_->select_message(ids_[2]));
    QCOMPARE(current(), (QStringList{"q1", "a1", "q2", "a2"}));

    // The choice is stored.
    store_->close();
    QVERIFY(store_->open(test::options(path(), &time_)));
    QCOMPARE(current(), (QStringList{"q1", "a1", "q2", "a2"}));
    QVERIFY(store_->select_message(a2c));
    store_->close();
    QVERIFY(store_->open(test::options(path(), &time_)));
    QCOMPARE(current(), (QStringList{"q1", "a1", "q2", "a2c"}));
    QVERIFY(!store_->select_message(MessageId{999}));
    QCOMPARE(store_->error(), StoreError::NotFound);
  }

  void appendAndReplaceWorkAlongTheCurrentPath() {
    const auto q2b = *store_->add_message(chat_, ids_[1], Role::User, QStringLiteral("q2b"));
    const auto reply = store_->replace_last_reply(chat_, QString());
    QCOMPARE(store_->message(*reply)->parent, std::optional<MessageId>(q2b));
    const auto replaced = store_->replace_last_reply(chat_, QString());
    QVERIFY(!store_->message(*reply));
    QCOMPARE(store_->message(*replaced)->parent, std::optional<MessageId>(q2b));
    QCOMPARE(store_->message_tree(chat_).size(), 6);

    // Drop removes what is below the edited message, in every branch.
    QVERIFY(
        store_->edit_message(ids_[1], QStringLiteral("a1, edited"), ChatStore::Following::Drop));
    QCOMPARE(texts(store_->message_tree(chat_)), (QStringList{"q1", "a1, edited"}));
    QCOMPARE(store_->append_message(chat_, Role::User, QStringLiteral("q3")).has_value(), true);
    QCOMPARE(current(), (QStringList{"q1", "a1, edited", "q3"}));
  }

  void deletedBranchComesBackExactly() {
    const auto q2b = *store_->add_message(chat_, ids_[1], Role::User, QStringLiteral("q2b"));
    QVERIFY(store_->select_message(ids_[2]));
    const QList<Message> before = store_->message_tree(chat_);
    QSignalSpy changed(store_.get(), &ChatStore::chat_changed);

    time_.advance_ms(1000);
    QVERIFY(store_->delete_branch(ids_[2]));
    QCOMPARE(changed.size(), 1);
    // The path falls back to the sibling that is left.
    QCOMPARE(current(), (QStringList{"q1", "a1", "q2b"}));
    QCOMPARE(store_->chat(chat_)->message_count, 3);
    QVERIFY(!store_->message(ids_[3]));
    QVERIFY(store_->search(QStringLiteral("a2")).isEmpty());
    QVERIFY(!store_->delete_branch(ids_[2]));
    QCOMPARE(store_->error(), StoreError::NotFound);
    QVERIFY(!store_->restore_branch(ids_[3]));  // inside the branch, not its top
    QCOMPARE(store_->error(), StoreError::NotFound);

    QVERIFY(store_->restore_branch(ids_[2]));
    QCOMPARE(store_->message_tree(chat_), before);
    QCOMPARE(current(), (QStringList{"q1", "a1", "q2", "a2"}));
    QCOMPARE(store_->search(QStringLiteral("a2")).size(), 1);
    QVERIFY(!store_->restore_branch(ids_[2]));

    // With nothing left below a1, the path ends there.
    QVERIFY(store_->delete_branch(q2b));
    QVERIFY(store_->delete_branch(ids_[2]));
    QCOMPARE(current(), (QStringList{"q1", "a1"}));
    // Undo in any order while the message a branch followed is there.
    QVERIFY(store_->restore_branch(q2b));
    QVERIFY(store_->restore_branch(ids_[2]));
    QCOMPARE(store_->message_tree(chat_).size(), 5);

    // Once the message it followed is gone, a branch cannot come back.
    QVERIFY(store_->delete_branch(ids_[2]));
    QVERIFY(store_->edit_message(ids_[0], QStringLiteral("q1"), ChatStore::Following::Drop));
    QVERIFY(!store_->restore_branch(ids_[2]));
    QCOMPARE(store_->error(), StoreError::NotFound);
    QVERIFY2(store_->error_string().contains(QStringLiteral("deleted since")),
             qPrintable(store_->error_string()));
  }

  void deletedBranchesArePurgedWithDeletedChats() {
    QVERIFY(store_->delete_branch(ids_[2]));
    time_.advance_ms(1000);
    QCOMPARE(store_->purge_previous_sessions(), 0);
    QVERIFY(store_->restore_branch(ids_[2]));
    QVERIFY(store_->delete_branch(ids_[2]));
    time_.advance_ms(1000);
    store_->close();
    QVERIFY(store_->open(test::options(path(), &time_)));
    QCOMPARE(store_->purge_previous_sessions(), 0);
    QVERIFY(!store_->restore_branch(ids_[2]));
    QCOMPARE(store_->error(), StoreError::NotFound);
    test::RawDatabase raw(path());
    QCOMPARE(raw.value(QStringLiteral("SELECT COUNT(*) FROM deleted_messages")).toInt(), 0);
  }

  void branchFromHereMakesANewChat() {
    ChatSettings settings;
    settings.temperature = 0.25;
    QVERIFY(store_->set_chat_settings(chat_, settings));
    const ModelUse model{QStringLiteral("/models/tiny"), {{QStringLiteral("top_k"), 40}}};
    QVERIFY(store_->set_chat_model(chat_, model));
    QSignalSpy added(store_.get(), &ChatStore::chat_added);
    time_.advance_ms(60000);

    const auto branch = store_->branch_chat(ids_[1], QStringLiteral("tree, branched"));
    QVERIFY2(branch, qPrintable(store_->error_string()));
    QCOMPARE(added.size(), 1);
    const ChatSummary summary = *store_->chat(*branch);
    QCOMPARE(summary.title, QStringLiteral("tree, branched"));
    QCOMPARE(summary.model, model);
    QCOMPARE(summary.created, time_.now());
    QCOMPARE(store_->chat_settings(*branch), std::optional<ChatSettings>(settings));
    const QList<Message> copied = store_->current_path(*branch);
    const QList<Message> original = store_->current_path(chat_);
    QCOMPARE(texts(copied), (QStringList{"q1", "a1"}));
    for (int i = 0; i < copied.size(); ++i) {
      QVERIFY(copied[i].id != original[i].id);
      QCOMPARE(copied[i].tokens, original[i].tokens);
      QCOMPARE(copied[i].created, original[i].created);
      QCOMPARE(copied[i].position, i);
    }
    QCOMPARE(copied[1].parent, std::optional<MessageId>(copied[0].id));
    // The original is as it was, and the copy goes its own way.
    QCOMPARE(texts(original), (QStringList{"q1", "a1", "q2", "a2"}));
    QVERIFY(store_->append_message(*branch, Role::User, QStringLiteral("q2, elsewhere")));
    QCOMPARE(store_->message_tree(chat_).size(), 4);

    QVERIFY(!store_->branch_chat(MessageId{999}, QStringLiteral("x")));
    QCOMPARE(store_->error(), StoreError::NotFound);
  }

  void chatSettingsAreStoredWithTheChat() {
    QCOMPARE(store_->chat_settings(chat_), std::optional<ChatSettings>(ChatSettings{}));
    ChatSettings settings;
    settings.system_prompt = QStringLiteral("You answer in haiku.");
    settings.temperature = 0.0;
    settings.top_p = 0.9;
    settings.min_p = 0.05;
    settings.repetition_penalty = 1.1;
    settings.max_new_tokens = 64;
    settings.prompt_format = QStringLiteral("chatml");
    QSignalSpy changed(store_.get(), &ChatStore::chat_changed);
    QVERIFY(store_->set_chat_settings(chat_, settings));
    QCOMPARE(changed.size(), 1);
    store_->close();
    QVERIFY(store_->open(test::options(path(), &time_)));
    QCOMPARE(store_->chat_settings(chat_), std::optional<ChatSettings>(settings));

    // An empty system prompt is a choice (no system prompt), not "absent".
    ChatSettings partial;
    partial.system_prompt = QString();
    QVERIFY(store_->set_chat_settings(chat_, partial));
    const ChatSettings read = *store_->chat_settings(chat_);
    QCOMPARE(read.system_prompt, std::optional<QString>(QStringLiteral("")));
    QCOMPARE(read.temperature, std::nullopt);
    QCOMPARE(read.max_new_tokens, std::nullopt);

    ChatSettings bad = settings;
    bad.top_p = 1.5;
    QVERIFY(!store_->set_chat_settings(chat_, bad));
    QCOMPARE(store_->error(), StoreError::InvalidArgument);
    QCOMPARE(store_->error_string(),
             QStringLiteral("The chat's settings were not changed: top_p must be greater than 0 "
                            "and at most 1 (got 1.5)."));
    QCOMPARE(store_->chat_settings(chat_), std::optional<ChatSettings>(read));
    bad = ChatSettings{};
    bad.max_new_tokens = 0;
    QCOMPARE(bad.problem(), QStringLiteral("max_new_tokens must be 1 or more (got 0)"));
    QVERIFY(!store_->set_chat_settings(ChatId{999}, settings));
    QCOMPARE(store_->error(), StoreError::NotFound);
    QVERIFY(!store_->chat_settings(ChatId{999}));
    QCOMPARE(store_->error(), StoreError::NotFound);
  }
};

QUIRE_TEST(ChatTreeTest)
#include "test_chat_tree.moc"
