// The tool calls of a reply: one card per call under its text, approval
// buttons only while a call waits, each answer reported once with the
// message's and the call's ids, updates in place, long text folded.

#include <QFontInfo>
#include <QLabel>
#include <QPointer>
#include <QPushButton>
#include <QSignalSpy>
#include <QTest>
#include <QToolButton>

#include "chat_test_support.h"
#include "document_view.h"
#include "message_widget.h"
#include "quire/ui/chat_view.h"
#include "test_main.h"
#include "tool_call_card.h"
#include "tool_call_text.h"

using namespace quire::ui;
using namespace quire::ui::testing;
using State = ToolCallView::State;

namespace {

ToolCallView readFileCall(State state = State::AwaitingApproval) {
  ToolCallView call;
  call.id = QStringLiteral("call-1");
  call.server = QStringLiteral("filesystem");
  call.tool = QStringLiteral("read_file");
  call.arguments = QStringLiteral("{\"path\": \"/home/ada/notes.txt\"}");
  call.state = state;
  return call;
}

QString numberedLines(int count) {
  QStringList list;
  for (int i = 1; i <= count; ++i)
    list << QStringLiteral("row %1").arg(i);
  return list.join(u'\n');
}

// A conversation whose reply (id 2) made `calls`.
struct ToolChat {
  explicit ToolChat(const QList<ToolCallView>& calls) {
    view.resize(760, 700);
    view.show();
    ChatMessageView reply = assistantMessage(2, QStringLiteral("Let me look at that file."));
    reply.toolCalls = calls;
    view.setMessages({userMessage(1, QStringLiteral("What is in my notes?")), reply});
  }
  MessageWidget* reply() const { return messageWidget(view, 2); }
  QList<ToolCallCard*> cards() const {
    return reply()->findChildren<ToolCallCard*>(QStringLiteral("toolCallCard"));
  }
  ToolCallCard* card() const { return cards().value(0); }
  template <typename T>
  T* part(const char* name) const {
    return visibleChild<T>(card(), QLatin1String(name));
  }

  ChatView view;
};

QStringList visibleDecisionButtons(const ToolCallCard* card) {
  QStringList names;
  for (const char* name : {"allowOnceButton", "alwaysAllowButton", "denyButton"}) {
    if (visibleChild<QPushButton>(card, QLatin1String(name))) names << QLatin1String(name);
  }
  return names;
}

}  // namespace

class ToolCallCardTest : public QObject {
  Q_OBJECT

 private slots:
  void argumentsAreIndentedInTheModelsOrder_data() {
    QTest::addColumn<QString>("arguments");
    QTest::addColumn<QString>("shown");
    QTest::newRow("object") << QStringLiteral("{\"path\":\"/tmp/a.txt\",\"limit\":20}")
                            << QStringLiteral("{\n  \"path\": \"/tmp/a.txt\",\n  \"limit\": 20\n}");
    QTest::newRow("order and numbers kept")
        << QStringLiteral("{\"z\": 1.50, \"a\": [1, 2]}")
        << QStringLiteral("{\n  \"z\": 1.50,\n  \"a\": [\n    1,\n    2\n  ]\n}");
    QTest::newRow("punctuation inside strings")
        << QStringLiteral("{\"query\":\"a, {b}: [c] \\\"d\\\"\"}")
        << QStringLiteral("{\n  \"query\": \"a, {b}: [c] \\\"d\\\"\"\n}");
    QTest::newRow("empty containers stay short")
        << QStringLiteral("{\"tags\": [], \"meta\": {}}")
        << QStringLiteral("{\n  \"tags\": [],\n  \"meta\": {}\n}");
    QTest::newRow("empty object") << QStringLiteral("{ }") << QStringLiteral("No arguments");
    QTest::newRow("no text") << QString() << QStringLiteral("No arguments");
    QTest::newRow("not JSON") << QStringLiteral("path=/tmp, {oops")
                              << QStringLiteral("path=/tmp, {oops");
  }

  void argumentsAreIndentedInTheModelsOrder() {
    QFETCH(QString, arguments);
    QFETCH(QString, shown);
    QCOMPARE(prettyToolArguments(arguments), shown);
  }

  void statesAreWordedForPeople_data() {
    QTest::addColumn<State>("state");
    QTest::addColumn<QString>("summary");
    QTest::addColumn<QString>("text");
    QTest::newRow("awaiting") << State::AwaitingApproval << QString()
                              << QStringLiteral("Waiting for your approval");
    QTest::newRow("running") << State::Running << QString() << QStringLiteral("Running…");
    QTest::newRow("done") << State::Done << QStringLiteral("412 characters")
                          << QStringLiteral("Done · 412 characters");
    QTest::newRow("done, no summary") << State::Done << QString() << QStringLiteral("Done");
    QTest::newRow("failed") << State::Failed << QStringLiteral("the process exited with code 3")
                            << QStringLiteral("Failed: the process exited with code 3");
    QTest::newRow("denied") << State::Denied << QString() << QStringLiteral("Denied: not run");
    QTest::newRow("timed out") << State::TimedOut << QStringLiteral("no answer in 60 s")
                               << QStringLiteral("Timed out: no answer in 60 s");
    QTest::newRow("cancelled") << State::Cancelled << QString() << QStringLiteral("Cancelled");
  }

  void statesAreWordedForPeople() {
    QFETCH(State, state);
    QFETCH(QString, summary);
    QFETCH(QString, text);
    ToolCallView call = readFileCall(state);
    call.summary = summary;
    QCOMPARE(toolCallStateText(call), text);
  }

  void aCallShowsServerToolArgumentsAndState() {
    ToolChat chat({readFileCall()});
    QCOMPARE(chat.cards().size(), 1);
    QCOMPARE(chat.card()->property("callId").toString(), QStringLiteral("call-1"));
    QCOMPARE(chat.part<QLabel>("toolCallTitle")->text(), QStringLiteral("filesystem › read_file"));
    QCOMPARE(chat.part<QLabel>("toolCallState")->text(),
             QStringLiteral("Waiting for your approval"));
    QCOMPARE(chat.part<DocumentView>("toolCallArguments")->toPlainText(),
             QStringLiteral("{\n  \"path\": \"/home/ada/notes.txt\"\n}"));
    QVERIFY(QFontInfo(chat.part<DocumentView>("toolCallArguments")->font()).fixedPitch());
    QCOMPARE(chat.card()->accessibleName(), QStringLiteral("Tool call filesystem › read_file"));
    // The card sits in the reply, after its text.
    QVERIFY(chat.reply()->isAncestorOf(chat.card()));
    QVERIFY(!chat.part<DocumentView>("toolCallResult"));
  }

  void decisionButtonsShowOnlyWhileACallWaits_data() {
    QTest::addColumn<State>("state");
    QTest::addColumn<QStringList>("buttons");
    QTest::addColumn<bool>("stop");
    const QStringList all{QStringLiteral("allowOnceButton"), QStringLiteral("alwaysAllowButton"),
                          QStringLiteral("denyButton")};
    QTest::newRow("awaiting") << State::AwaitingApproval << all << false;
    QTest::newRow("running") << State::Running << QStringList() << true;
    QTest::newRow("done") << State::Done << QStringList() << false;
    QTest::newRow("failed") << State::Failed << QStringList() << false;
    QTest::newRow("denied") << State::Denied << QStringList() << false;
    QTest::newRow("timed out") << State::TimedOut << QStringList() << false;
    QTest::newRow("cancelled") << State::Cancelled << QStringList() << false;
  }

  void decisionButtonsShowOnlyWhileACallWaits() {
    QFETCH(State, state);
    QFETCH(QStringList, buttons);
    QFETCH(bool, stop);
    ToolChat chat({readFileCall(state)});
    QCOMPARE(visibleDecisionButtons(chat.card()), buttons);
    QCOMPARE(chat.part<QToolButton>("stopToolCallButton") != nullptr, stop);
  }

  void eachButtonAnswersTheCallOnce_data() {
    QTest::addColumn<QString>("button");
    QTest::addColumn<QString>("text");
    QTest::addColumn<ToolDecision>("decision");
    QTest::newRow("allow once") << QStringLiteral("allowOnceButton") << QStringLiteral("Allow once")
                                << ToolDecision::AllowOnce;
    QTest::newRow("always") << QStringLiteral("alwaysAllowButton")
                            << QStringLiteral("Always allow in this chat")
                            << ToolDecision::AlwaysAllow;
    QTest::newRow("deny") << QStringLiteral("denyButton") << QStringLiteral("Deny")
                          << ToolDecision::Deny;
  }

  void eachButtonAnswersTheCallOnce() {
    QFETCH(QString, button);
    QFETCH(QString, text);
    QFETCH(ToolDecision, decision);
    ToolChat chat({readFileCall()});
    QSignalSpy decided(&chat.view, &ChatView::toolCallDecided);
    auto* pressed = visibleChild<QPushButton>(chat.card(), button);
    QVERIFY(pressed);
    QCOMPARE(pressed->text(), text);
    QTest::mouseClick(pressed, Qt::LeftButton);
    QCOMPARE(decided.count(), 1);
    QCOMPARE(decided.at(0).at(0).toLongLong(), 2);
    QCOMPARE(decided.at(0).at(1).toString(), QStringLiteral("call-1"));
    QCOMPARE(decided.at(0).at(2).value<ToolDecision>(), decision);

    // Until the app reports the call's new state, no second answer is taken.
    for (const char* name : {"allowOnceButton", "alwaysAllowButton", "denyButton"})
      QVERIFY2(!chat.part<QPushButton>(name)->isEnabled(), name);
    QTest::mouseClick(pressed, Qt::LeftButton);
    QCOMPARE(decided.count(), 1);
  }

  void theButtonsWorkFromTheKeyboard() {
    ToolChat chat({readFileCall()});
    QSignalSpy decided(&chat.view, &ChatView::toolCallDecided);
    auto* deny = chat.part<QPushButton>("denyButton");
    QVERIFY(deny->focusPolicy() & Qt::TabFocus);
    QCOMPARE(deny->accessibleName(), QStringLiteral("Deny this call"));
    QCOMPARE(chat.part<QPushButton>("allowOnceButton")->accessibleName(),
             QStringLiteral("Allow this call once"));
    QCOMPARE(chat.part<QPushButton>("alwaysAllowButton")->accessibleName(),
             QStringLiteral("Always allow this tool in this chat"));
    QTest::keyClick(deny, Qt::Key_Space);
    QCOMPARE(decided.count(), 1);
    QCOMPARE(decided.at(0).at(2).value<ToolDecision>(), ToolDecision::Deny);
  }

  void updateToolCallChangesOneCardInPlace() {
    ToolChat chat({readFileCall()});
    const QPointer<MessageWidget> reply = chat.reply();
    const QPointer<ToolCallCard> card = chat.card();
    const DocumentView* text = firstText(reply);
    const int renders = chat.view.renderCount();

    chat.view.updateToolCall(2, readFileCall(State::Running));
    QCOMPARE(chat.part<QLabel>("toolCallState")->text(), QStringLiteral("Running…"));
    QVERIFY(visibleDecisionButtons(card).isEmpty());
    QVERIFY(chat.part<QToolButton>("stopToolCallButton"));

    ToolCallView done = readFileCall(State::Done);
    done.result = QStringLiteral("Buy milk.\nCall Grace.");
    done.summary = QStringLiteral("21 characters");
    chat.view.updateToolCall(2, done);
    QCOMPARE(chat.part<QLabel>("toolCallState")->text(), QStringLiteral("Done · 21 characters"));
    QCOMPARE(chat.part<DocumentView>("toolCallResult")->toPlainText(), done.result);
    QVERIFY(!chat.part<QToolButton>("stopToolCallButton"));

    // The same widgets, and the reply's text was not rendered again.
    QCOMPARE(chat.reply(), reply.data());
    QCOMPARE(chat.card(), card.data());
    QCOMPARE(firstText(reply), text);
    QCOMPARE(chat.view.renderCount(), renders);
    // What the view holds follows, so a rebuilt widget shows the same.
    QCOMPARE(chat.view.message(2)->toolCalls, QList<ToolCallView>{done});
  }

  void updateToolCallAddsANewCallAndIgnoresUnknownMessages() {
    ToolChat chat({readFileCall(State::Done)});
    ToolCallView second = readFileCall();
    second.id = QStringLiteral("call-2");
    second.tool = QStringLiteral("list_directory");
    chat.view.updateToolCall(2, second);
    QCOMPARE(chat.cards().size(), 2);
    QCOMPARE(chat.view.message(2)->toolCalls.size(), 2);
    QCOMPARE(chat.view.message(2)->toolCalls.at(1).tool, QStringLiteral("list_directory"));

    chat.view.updateToolCall(99, second);
    QCOMPARE(chat.view.message(2)->toolCalls.size(), 2);
    QVERIFY(!chat.view.message(99));
  }

  void anAnsweredCallTakesAnswersAgainOnceItsStateChanged() {
    ToolChat chat({readFileCall()});
    QSignalSpy decided(&chat.view, &ChatView::toolCallDecided);
    QTest::mouseClick(chat.part<QPushButton>("allowOnceButton"), Qt::LeftButton);
    chat.view.updateToolCall(2, readFileCall(State::Done));
    // A later call under the same id asks anew (a regenerated reply).
    chat.view.updateToolCall(2, readFileCall(State::AwaitingApproval));
    QVERIFY(chat.part<QPushButton>("denyButton")->isEnabled());
    QTest::mouseClick(chat.part<QPushButton>("denyButton"), Qt::LeftButton);
    QCOMPARE(decided.count(), 2);
    QCOMPARE(decided.at(1).at(2).value<ToolDecision>(), ToolDecision::Deny);
  }

  void stopAsksToCancelARunningCall() {
    ToolChat chat({readFileCall(State::Running)});
    QSignalSpy cancel(&chat.view, &ChatView::toolCallCancelRequested);
    auto* stop = chat.part<QToolButton>("stopToolCallButton");
    QCOMPARE(stop->text(), QStringLiteral("Stop"));
    QCOMPARE(stop->accessibleName(), QStringLiteral("Stop filesystem › read_file"));
    QTest::mouseClick(stop, Qt::LeftButton);
    QCOMPARE(cancel.count(), 1);
    QCOMPARE(cancel.at(0).at(0).toLongLong(), 2);
    QCOMPARE(cancel.at(0).at(1).toString(), QStringLiteral("call-1"));
  }

  void aLongResultShowsItsFirstLinesUntilAsked() {
    ToolCallView done = readFileCall(State::Done);
    done.result = numberedLines(20);
    ToolChat chat({done});
    QVERIFY(chat.card()->isResultFolded());
    auto* result = chat.part<DocumentView>("toolCallResult");
    QCOMPARE(result->toPlainText(), numberedLines(4) + QStringLiteral(" …"));
    QVERIFY(result->textInteractionFlags() & Qt::TextSelectableByMouse);
    auto* toggle = chat.part<QToolButton>("toolResultFoldButton");
    QVERIFY(toggle);
    QCOMPARE(toggle->text(), QStringLiteral("Show all 20 lines"));
    QTest::mouseClick(toggle, Qt::LeftButton);
    QCOMPARE(result->toPlainText(), done.result);
    QCOMPARE(toggle->text(), QStringLiteral("Show less"));
    QTest::mouseClick(toggle, Qt::LeftButton);
    QCOMPARE(result->toPlainText(), numberedLines(4) + QStringLiteral(" …"));

    // Six lines are shown whole, with no toggle.
    done.result = numberedLines(6);
    chat.view.updateToolCall(2, done);
    QCOMPARE(result->toPlainText(), numberedLines(6));
    QVERIFY(!chat.part<QToolButton>("toolResultFoldButton"));
  }

  void longArgumentsFoldToo() {
    ToolCallView call = readFileCall();
    QStringList fields;
    for (int i = 1; i <= 15; ++i)
      fields << QStringLiteral("\"k%1\": %1").arg(i);
    call.arguments = u'{' + fields.join(u',') + u'}';
    ToolChat chat({call});
    QVERIFY(chat.card()->isArgumentsFolded());
    QCOMPARE(
        chat.part<DocumentView>("toolCallArguments")->toPlainText(),
        QStringLiteral("{\n  \"k1\": 1,\n  \"k2\": 2,\n  \"k3\": 3,\n  \"k4\": 4,\n  \"k5\": 5,"
                       "\n  \"k6\": 6,\n  \"k7\": 7, …"));
    QTest::mouseClick(chat.part<QToolButton>("toolArgumentsFoldButton"), Qt::LeftButton);
    QCOMPARE(chat.part<DocumentView>("toolCallArguments")->toPlainText(),
             prettyToolArguments(call.arguments));
  }

  void failuresAreInTheErrorColour() {
    ToolCallView failed = readFileCall(State::Failed);
    failed.summary = QStringLiteral("the process exited with code 3");
    ToolChat chat({failed, [] {
                     ToolCallView done = readFileCall(State::Done);
                     done.id = QStringLiteral("call-2");
                     return done;
                   }()});
    const QList<ToolCallCard*> cards = chat.cards();
    QCOMPARE(cards.size(), 2);
    QCOMPARE(cards[0]->tint(), Tint::Error);
    QCOMPARE(cards[1]->tint(), Tint::System);
    auto* failedState = visibleChild<QLabel>(cards[0], QStringLiteral("toolCallState"));
    auto* doneState = visibleChild<QLabel>(cards[1], QStringLiteral("toolCallState"));
    QCOMPARE(failedState->text(), QStringLiteral("Failed: the process exited with code 3"));
    QVERIFY(failedState->palette().color(QPalette::WindowText) !=
            doneState->palette().color(QPalette::WindowText));
    // Once the call ran again and succeeded, the colour is the text's again.
    chat.view.updateToolCall(2, readFileCall(State::Done));
    QCOMPARE(cards[0]->tint(), Tint::System);
    QCOMPARE(failedState->palette().color(QPalette::WindowText),
             doneState->palette().color(QPalette::WindowText));
  }

  void aDeniedCallShowsNoResult() {
    ToolCallView denied = readFileCall(State::Denied);
    denied.result = QStringLiteral("The user declined this call.");
    ToolChat chat({denied});
    QVERIFY(!chat.part<DocumentView>("toolCallResult"));
    QCOMPARE(chat.part<QLabel>("toolCallState")->text(), QStringLiteral("Denied: not run"));
  }

  void onlyRepliesShowCards() {
    ChatView view;
    view.resize(700, 500);
    view.show();
    ChatMessageView question = userMessage(1, QStringLiteral("Hi"));
    question.toolCalls = {readFileCall()};
    view.setMessages({question});
    QVERIFY(messageWidget(view, 1)->findChildren<ToolCallCard*>().isEmpty());
  }

  void anotherVersionOfTheReplyReplacesItsCards() {
    ToolChat chat({readFileCall(State::Done)});
    ChatMessageView other = *chat.view.message(2);
    ToolCallView search = readFileCall();
    search.id = QStringLiteral("call-9");
    search.server = QStringLiteral("web");
    search.tool = QStringLiteral("search");
    other.toolCalls = {search};
    chat.view.updateMessage(other);
    QCOMPARE(chat.cards().size(), 1);
    QCOMPARE(chat.part<QLabel>("toolCallTitle")->text(), QStringLiteral("web › search"));
    other.toolCalls.clear();
    chat.view.updateMessage(other);
    QVERIFY(chat.cards().isEmpty());
  }
};

QUIRE_TEST(ToolCallCardTest)
#include "test_tool_call_card.moc"
