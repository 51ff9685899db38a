// Chats as trees through the whole program: regenerate and edit add versions
// beside the old ones, the switcher shows each branch, every branch goes on
// from the cache, a restart finds them all, a branch becomes a chat of its
// own, and a deleted version comes back with Undo.

#include <QLabel>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QSignalSpy>
#include <QTest>
#include <QToolButton>

#include "app_test_support.h"
#include "chat_controller.h"
#include "main_window.h"
#include "quire/ui/chat_list_widget.h"
#include "quire/ui/chat_view.h"
#include "test_main.h"

using namespace quire;
using namespace quire::test;

namespace {

// The reply's closing marker ("<|im_end|>" and the line break after it) was
// sampled but never run through the model: the next turn computes it.
constexpr int kClosingTokens = 2;

QWidget* messageWidget(gui::MainWindow& window, store::MessageId id) {
  for (QWidget* widget : window.chatView()->findChildren<QWidget*>(QStringLiteral("message"))) {
    if (widget->property("messageId").toLongLong() == store::raw(id)) return widget;
  }
  return nullptr;
}

template <typename T>
T* shownChild(QWidget* parent, const QString& name) {
  if (!parent) return nullptr;
  for (T* child : parent->findChildren<T*>(name)) {
    if (child->isVisibleTo(parent)) return child;
  }
  return nullptr;
}

// Clicks the button `name` of message `id`; false when it is not on show.
bool click(gui::MainWindow& window, store::MessageId id, const char* name) {
  auto* button = shownChild<QAbstractButton>(messageWidget(window, id), QString::fromLatin1(name));
  if (!button || !button->isEnabled()) return false;
  QTest::mouseClick(button, Qt::LeftButton);
  return true;
}

// "2/3" under message `id`, or "" without a switcher.
QString position(gui::MainWindow& window, store::MessageId id) {
  const auto* label =
      shownChild<QLabel>(messageWidget(window, id), QStringLiteral("branchPosition"));
  return label ? label->text() : QString();
}

// The texts of the conversation on show, in order.
QStringList shownTexts(gui::MainWindow& window, const QList<store::Message>& path) {
  QStringList texts;
  for (const store::Message& message : path) {
    if (const auto view = window.chatView()->message(store::raw(message.id))) texts << view->text;
  }
  return texts;
}

QStringList textsOf(const QList<store::Message>& messages) {
  QStringList texts;
  for (const store::Message& message : messages)
    texts << message.text;
  return texts;
}

std::size_t tokensOf(const QList<store::Message>& messages) {
  std::size_t total = 0;
  for (const store::Message& message : messages)
    total += message.tokens.size();
  return total;
}

// Checks that the window shows exactly `path`, each message with its text,
// and that `path` is the current chat's path in the store. The caller returns
// when QTest::currentTestFailed().
void verifyShown(gui::QuireApplication& app, const QList<store::Message>& path) {
  gui::MainWindow& window = app.window();
  QCOMPARE(window.chatView()->messageCount(), path.size());
  QCOMPARE(shownTexts(window, path), textsOf(path));
  const std::optional<store::ChatId> chat = app.chats().currentChat();
  QVERIFY(chat);
  QCOMPARE(app.store().current_path(*chat), path);
}

// Clicks the switcher's `arrow` under message `id`, then verifyShown(path).
void switchTo(gui::QuireApplication& app, store::MessageId id, const char* arrow,
              const QList<store::Message>& path) {
  QVERIFY(click(app.window(), id, arrow));
  verifyShown(app, path);
}

// Clicks `name` on message `id` and waits for the reply it starts.
std::optional<store::GenerationStats> clickAndWait(gui::QuireApplication& app, store::MessageId id,
                                                   const char* name) {
  QSignalSpy finished(&app.chats(), &gui::ChatController::replyFinished);
  if (!click(app.window(), id, name)) return std::nullopt;
  if (finished.isEmpty() && !finished.wait(120'000)) return std::nullopt;
  return finished.first().at(1).value<store::GenerationStats>();
}

}  // namespace

class BranchesTest : public QObject {
  Q_OBJECT

 private slots:
  void regeneratedRepliesAreBranchesThatEachGoOnFromTheCacheAndSurviveARestart() {
    AppRun run(demo_model());
    run.start();
    QVERIFY(run.waitForModel());
    gui::MainWindow& window = run.app->window();
    store::ChatStore& store = run.app->store();

    QVERIFY(run.send(QStringLiteral("Hello!")));
    const store::ChatId chat = *run.app->chats().currentChat();
    const QList<store::Message> asked = store.current_path(chat);
    QCOMPARE(asked.size(), 2);
    const store::Message question = asked[0];
    const store::Message first_reply = asked[1];
    QCOMPARE(position(window, first_reply.id), QString());

    // Regenerate: a second reply beside the first, from the same cached prompt.
    const auto regenerated = clickAndWait(*run.app, first_reply.id, "regenerateButton");
    QVERIFY(regenerated);
    QVERIFY(regenerated->cached_tokens >= regenerated->prompt_tokens - 1);
    const store::Message second_reply = store.current_path(chat).at(1);
    QVERIFY(second_reply.id != first_reply.id);
    QCOMPARE(store.siblings(second_reply.id)->ids,
             (QList<store::MessageId>{first_reply.id, second_reply.id}));
    const QList<store::Message> regenerated_path = store.current_path(chat);
    verifyShown(*run.app, regenerated_path);
    if (QTest::currentTestFailed()) return;
    QCOMPARE(position(window, second_reply.id), QStringLiteral("2/2"));

    // The switcher shows the first reply again, in place of the second.
    switchTo(*run.app, second_reply.id, "previousBranchButton", asked);
    if (QTest::currentTestFailed()) return;
    QVERIFY(!window.chatView()->message(store::raw(second_reply.id)));
    QCOMPARE(position(window, first_reply.id), QStringLiteral("1/2"));

    // Going on from the first reply: only the new question is computed.
    const auto on_first = run.send(QStringLiteral("Tell me a fortune."));
    QVERIFY(on_first);
    const QList<store::Message> first_branch = store.current_path(chat);
    QCOMPARE(first_branch.size(), 4);
    QCOMPARE(first_branch[1].id, first_reply.id);
    const auto shared_first = static_cast<int>(tokensOf(first_branch.mid(0, 2)));
    QVERIFY2(on_first->cached_tokens >= shared_first - kClosingTokens,
             qPrintable(QStringLiteral("%1 cached of %2 shared tokens")
                            .arg(on_first->cached_tokens)
                            .arg(shared_first)));
    QCOMPARE(on_first->computed_tokens, on_first->prompt_tokens - on_first->cached_tokens);
    QVERIFY(on_first->computed_tokens <= on_first->prompt_tokens - shared_first + kClosingTokens);

    // Over to the second reply, and on from it: its history is cached too.
    switchTo(*run.app, first_reply.id, "nextBranchButton", regenerated_path);
    if (QTest::currentTestFailed()) return;
    const auto on_second = run.send(QStringLiteral("Who are you?"));
    QVERIFY(on_second);
    const QList<store::Message> second_branch = store.current_path(chat);
    QCOMPARE(second_branch.size(), 4);
    QCOMPARE(second_branch[1].id, second_reply.id);
    const auto shared_second = static_cast<int>(tokensOf(second_branch.mid(0, 2)));
    QVERIFY2(on_second->cached_tokens >= shared_second - kClosingTokens,
             qPrintable(QStringLiteral("%1 cached of %2 shared tokens")
                            .arg(on_second->cached_tokens)
                            .arg(shared_second)));
    QCOMPARE(on_second->computed_tokens, on_second->prompt_tokens - on_second->cached_tokens);
    QVERIFY(on_second->computed_tokens <=
            on_second->prompt_tokens - shared_second + kClosingTokens);
    QCOMPARE(store.message_tree(chat).size(), 7);

    // A restart shows the branch used last, and the other is one click away.
    run.restart();
    QVERIFY(run.app->chats().currentChat() == chat);
    verifyShown(*run.app, second_branch);
    if (QTest::currentTestFailed()) return;
    QCOMPARE(position(run.app->window(), second_reply.id), QStringLiteral("2/2"));
    switchTo(*run.app, second_reply.id, "previousBranchButton", first_branch);
    if (QTest::currentTestFailed()) return;
    QCOMPARE(first_branch[0].id, question.id);
  }

  void editAndResendKeepsTheOriginalAsAVersion() {
    AppRun run(demo_model());
    run.start();
    QVERIFY(run.waitForModel());
    gui::MainWindow& window = run.app->window();
    store::ChatStore& store = run.app->store();
    QVERIFY(run.send(QStringLiteral("Hello!")));
    QVERIFY(run.send(QStringLiteral("Tell me a fortune.")));
    const store::ChatId chat = *run.app->chats().currentChat();
    const QList<store::Message> original = store.current_path(chat);
    QCOMPARE(original.size(), 4);

    QVERIFY(click(window, original[0].id, "editButton"));
    auto* editor = shownChild<QPlainTextEdit>(messageWidget(window, original[0].id),
                                              QStringLiteral("messageEditor"));
    QVERIFY(editor);
    editor->setPlainText(QStringLiteral("Who are you?"));
    QSignalSpy finished(&run.app->chats(), &gui::ChatController::replyFinished);
    QVERIFY(click(window, original[0].id, "sendEditButton"));
    // While the reply streams into this path the chat stays on it.
    const store::MessageId resent = store.current_path(chat).at(0).id;
    auto* previous = shownChild<QToolButton>(messageWidget(window, resent),
                                             QStringLiteral("previousBranchButton"));
    QVERIFY(previous && !previous->isEnabled());
    QVERIFY(finished.wait(120'000));
    QVERIFY(previous->isEnabled());

    const QList<store::Message> edited = store.current_path(chat);
    QCOMPARE(edited.size(), 2);
    QCOMPARE(edited[0].text, QStringLiteral("Who are you?"));
    QCOMPARE(store.siblings(edited[0].id)->ids,
             (QList<store::MessageId>{original[0].id, edited[0].id}));
    verifyShown(*run.app, edited);
    if (QTest::currentTestFailed()) return;
    QCOMPARE(position(window, edited[0].id), QStringLiteral("2/2"));

    // The original and everything after it are one click away, unchanged.
    switchTo(*run.app, edited[0].id, "previousBranchButton", original);
    if (QTest::currentTestFailed()) return;
    QCOMPARE(position(window, original[0].id), QStringLiteral("1/2"));
  }

  void branchFromHereStartsANewChatWithThePathUpToThatMessage() {
    AppRun run(demo_model());
    run.start();
    QVERIFY(run.waitForModel());
    gui::MainWindow& window = run.app->window();
    store::ChatStore& store = run.app->store();
    QVERIFY(run.send(QStringLiteral("Hello!")));
    QVERIFY(run.send(QStringLiteral("Tell me a fortune.")));
    const store::ChatId source = *run.app->chats().currentChat();
    const QList<store::Message> path = store.current_path(source);

    QVERIFY(click(window, path[1].id, "branchButton"));
    const std::optional<store::ChatId> branch = run.app->chats().currentChat();
    QVERIFY(branch && *branch != source);
    QCOMPARE(run.app->chatList().rowCount(), 2);
    QCOMPARE(window.chatList()->currentChatId(), std::optional<qint64>(store::raw(*branch)));
    QCOMPARE(store.chat(*branch)->title, QStringLiteral("Hello! (branch)"));
    const QList<store::Message> copied = store.current_path(*branch);
    QCOMPARE(textsOf(copied), textsOf(path.mid(0, 2)));
    verifyShown(*run.app, copied);
    if (QTest::currentTestFailed()) return;
    // The source keeps its whole conversation.
    QCOMPARE(store.current_path(source), path);

    // The copy has the source's token ids: its history comes from the cache.
    const auto next = run.send(QStringLiteral("Who are you?"));
    QVERIFY(next);
    const auto shared = static_cast<int>(tokensOf(copied));
    QVERIFY2(
        next->cached_tokens >= shared - kClosingTokens,
        qPrintable(
            QStringLiteral("%1 cached of %2 shared tokens").arg(next->cached_tokens).arg(shared)));
    QCOMPARE(store.current_path(*branch).size(), 4);
    QCOMPARE(store.current_path(source), path);
  }

  void aDeletedVersionGoesAloneAndComesBackWithUndo() {
    AppRun run(demo_model());
    run.start();
    QVERIFY(run.waitForModel());
    gui::MainWindow& window = run.app->window();
    store::ChatStore& store = run.app->store();
    QVERIFY(run.send(QStringLiteral("Hello!")));
    const store::ChatId chat = *run.app->chats().currentChat();
    const store::Message first_reply = store.current_path(chat).at(1);
    QVERIFY(clickAndWait(*run.app, first_reply.id, "regenerateButton"));
    const QList<store::Message> second_path = store.current_path(chat);
    const store::Message second_reply = second_path.at(1);
    // The only version of a message cannot be deleted, one of two can.
    QVERIFY(!shownChild<QToolButton>(messageWidget(window, second_path[0].id),
                                     QStringLiteral("deleteBranchButton")));

    QVERIFY(click(window, second_reply.id, "deleteBranchButton"));
    QCOMPARE(store.current_path(chat).at(1).id, first_reply.id);
    QCOMPARE(store.message_tree(chat).size(), 2);
    verifyShown(*run.app, store.current_path(chat));
    if (QTest::currentTestFailed()) return;
    QCOMPARE(window.chatView()->message(store::raw(first_reply.id))->text, first_reply.text);
    QCOMPARE(position(window, first_reply.id), QString());
    QVERIFY(window.chatView()->isBranchUndoVisible());

    auto* undo = window.chatView()->findChild<QToolButton*>(QStringLiteral("branchUndoButton"));
    QVERIFY(undo && undo->isVisibleTo(window.chatView()));
    QTest::mouseClick(undo, Qt::LeftButton);
    QVERIFY(!window.chatView()->isBranchUndoVisible());
    verifyShown(*run.app, second_path);
    if (QTest::currentTestFailed()) return;
    QCOMPARE(store.message_tree(chat).size(), 3);
    QCOMPARE(position(window, second_reply.id), QStringLiteral("2/2"));
  }
};

QUIRE_TEST(BranchesTest)
#include "test_branches.moc"
