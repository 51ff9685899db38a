// The chat view's branches: the "‹ 2/3 ›" switcher under a message with
// other versions, Branch and Delete on a message, and the Undo bar after a
// version was deleted. The view only asks; the app answers.

#include <QLabel>
#include <QSignalSpy>
#include <QTest>
#include <QToolButton>

#include "chat_test_support.h"
#include "message_widget.h"
#include "quire/ui/chat_view.h"
#include "test_main.h"

using namespace quire::ui;
using namespace quire::ui::testing;

namespace {

ChatMessageView withSiblings(ChatMessageView message, int index, int count) {
  message.siblingIndex = index;
  message.siblingCount = count;
  return message;
}

QString positionOf(const ChatView& view, qint64 id) {
  const auto* label =
      visibleChild<QLabel>(messageWidget(view, id), QStringLiteral("branchPosition"));
  return label ? label->text() : QString();
}

QToolButton* arrow(const ChatView& view, qint64 id, const char* name) {
  return visibleChild<QToolButton>(messageWidget(view, id), QString::fromLatin1(name));
}

}  // namespace

class BranchSwitcherTest : public QObject {
  Q_OBJECT

 private slots:
  void showsThePositionAmongTheVersionsAndOffersOnlyTheNeighboursThatExist() {
    ChatView view;
    view.resize(700, 600);
    view.show();
    view.setMessages({withSiblings(userMessage(1, QStringLiteral("Hello!")), 0, 3),
                      withSiblings(assistantMessage(2, QStringLiteral("Hi.")), 1, 3),
                      withSiblings(userMessage(3, QStringLiteral("And?")), 2, 3),
                      assistantMessage(4, QStringLiteral("That is all."))});

    QCOMPARE(positionOf(view, 1), QStringLiteral("1/3"));
    QVERIFY(!arrow(view, 1, "previousBranchButton")->isEnabled());
    QVERIFY(arrow(view, 1, "nextBranchButton")->isEnabled());

    QCOMPARE(positionOf(view, 2), QStringLiteral("2/3"));
    QVERIFY(arrow(view, 2, "previousBranchButton")->isEnabled());
    QVERIFY(arrow(view, 2, "nextBranchButton")->isEnabled());
    QCOMPARE(arrow(view, 2, "previousBranchButton")->text(), QStringLiteral("‹"));
    QCOMPARE(arrow(view, 2, "nextBranchButton")->text(), QStringLiteral("›"));

    QCOMPARE(positionOf(view, 3), QStringLiteral("3/3"));
    QVERIFY(arrow(view, 3, "previousBranchButton")->isEnabled());
    QVERIFY(!arrow(view, 3, "nextBranchButton")->isEnabled());

    // A message with no other version has nothing to switch.
    QVERIFY(!visibleChild<QWidget>(messageWidget(view, 4), QStringLiteral("branchSwitcher")));
    QCOMPARE(positionOf(view, 4), QString());
  }

  void theArrowsAskForTheNeighbouringVersion() {
    ChatView view;
    view.resize(700, 600);
    view.show();
    view.setMessages({userMessage(1, QStringLiteral("Hello!")),
                      withSiblings(assistantMessage(2, QStringLiteral("Hi.")), 1, 2)});
    QSignalSpy switches(&view, &ChatView::branchSwitchRequested);
    QTest::mouseClick(arrow(view, 2, "previousBranchButton"), Qt::LeftButton);
    QCOMPARE(switches.count(), 1);
    QCOMPARE(switches[0][0].toLongLong(), 2);
    QCOMPARE(switches[0][1].toInt(), -1);
    // A disabled arrow asks for nothing.
    QTest::mouseClick(arrow(view, 2, "nextBranchButton"), Qt::LeftButton);
    QCOMPARE(switches.count(), 1);

    // The app answers with the other version in its place.
    view.setMessages({userMessage(1, QStringLiteral("Hello!")),
                      withSiblings(assistantMessage(5, QStringLiteral("Hello there.")), 0, 2)});
    QCOMPARE(positionOf(view, 5), QStringLiteral("1/2"));
    QTest::mouseClick(arrow(view, 5, "nextBranchButton"), Qt::LeftButton);
    QCOMPARE(switches.count(), 2);
    QCOMPARE(switches[1][0].toLongLong(), 5);
    QCOMPARE(switches[1][1].toInt(), 1);
  }

  void aStreamingReplyKeepsItsBranch() {
    ChatView view;
    view.resize(700, 600);
    view.show();
    ChatMessageView reply = withSiblings(assistantMessage(2, QString()), 1, 2);
    reply.streaming = true;
    view.setMessages({userMessage(1, QStringLiteral("Hello!")), reply});
    QCOMPARE(positionOf(view, 2), QStringLiteral("2/2"));
    QVERIFY(!visibleChild<QWidget>(messageWidget(view, 2), QStringLiteral("branchSwitcher"))
                 ->isEnabled());
    QVERIFY(!visibleChild<QToolButton>(messageWidget(view, 2), QStringLiteral("branchButton")));
    QVERIFY(
        !visibleChild<QToolButton>(messageWidget(view, 2), QStringLiteral("deleteBranchButton")));
  }

  void switchingAndDeletingWaitWhileTheChatGenerates() {
    ChatView view;
    view.resize(700, 600);
    view.show();
    view.setMessages({withSiblings(userMessage(1, QStringLiteral("Hello!")), 1, 3),
                      assistantMessage(2, QStringLiteral("Hi."))});
    QVERIFY(view.isBranchSwitchingEnabled());
    view.setBranchSwitchingEnabled(false);
    QCOMPARE(positionOf(view, 1), QStringLiteral("2/3"));
    QVERIFY(!arrow(view, 1, "previousBranchButton")->isEnabled());
    QVERIFY(!arrow(view, 1, "nextBranchButton")->isEnabled());
    QVERIFY(!arrow(view, 1, "deleteBranchButton"));
    QVERIFY(arrow(view, 1, "branchButton"));
    // Messages that arrive meanwhile follow the same rule.
    view.appendMessage(withSiblings(userMessage(3, QStringLiteral("And?")), 0, 2));
    QVERIFY(!arrow(view, 3, "nextBranchButton")->isEnabled());

    view.setBranchSwitchingEnabled(true);
    QVERIFY(arrow(view, 1, "previousBranchButton")->isEnabled());
    QVERIFY(arrow(view, 1, "nextBranchButton")->isEnabled());
    QVERIFY(arrow(view, 1, "deleteBranchButton"));
    QVERIFY(arrow(view, 3, "nextBranchButton")->isEnabled());
  }

  void branchAndDeleteAskForTheirMessage() {
    ChatView view;
    view.resize(700, 600);
    view.show();
    view.setMessages({userMessage(1, QStringLiteral("Hello!")),
                      withSiblings(assistantMessage(2, QStringLiteral("Hi.")), 0, 2)});
    QSignalSpy branches(&view, &ChatView::branchFromHereRequested);
    QSignalSpy deletions(&view, &ChatView::deleteBranchRequested);

    // Any message starts a new chat; only one of several versions can be deleted.
    QTest::mouseClick(
        visibleChild<QToolButton>(messageWidget(view, 1), QStringLiteral("branchButton")),
        Qt::LeftButton);
    QCOMPARE(branches.count(), 1);
    QCOMPARE(branches[0][0].toLongLong(), 1);
    QVERIFY(
        !visibleChild<QToolButton>(messageWidget(view, 1), QStringLiteral("deleteBranchButton")));
    auto* remove =
        visibleChild<QToolButton>(messageWidget(view, 2), QStringLiteral("deleteBranchButton"));
    QVERIFY(remove);
    QCOMPARE(remove->text(), QStringLiteral("Delete"));
    QTest::mouseClick(remove, Qt::LeftButton);
    QCOMPARE(deletions.count(), 1);
    QCOMPARE(deletions[0][0].toLongLong(), 2);
  }

  void theUndoBarBringsBackTheLatestDeletedBranchUntilItCloses() {
    ChatView view;
    view.resize(700, 600);
    view.show();
    view.setMessages(sampleConversation());
    QSignalSpy undos(&view, &ChatView::undoDeleteBranchRequested);
    QVERIFY(!view.isBranchUndoVisible());

    view.offerBranchUndo(7);
    view.offerBranchUndo(8);  // only the latest can be undone
    QVERIFY(view.isBranchUndoVisible());
    auto* undo = view.findChild<QToolButton*>(QStringLiteral("branchUndoButton"));
    QVERIFY(undo && undo->isVisible());
    QCOMPARE(undo->text(), QStringLiteral("Undo"));
    QTest::mouseClick(undo, Qt::LeftButton);
    QCOMPARE(undos.count(), 1);
    QCOMPARE(undos[0][0].toLongLong(), 8);
    QVERIFY(!view.isBranchUndoVisible());

    // Left alone, the bar closes and the deletion stays.
    view.setBranchUndoTimeout(50);
    view.offerBranchUndo(9);
    QVERIFY(view.isBranchUndoVisible());
    QTRY_VERIFY(!view.isBranchUndoVisible());
    QCOMPARE(undos.count(), 1);
  }
};

QUIRE_TEST(BranchSwitcherTest)
#include "test_branch_switcher.moc"
