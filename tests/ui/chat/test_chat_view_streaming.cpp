#include <QElapsedTimer>
#include <QLabel>
#include <QScrollArea>
#include <QScrollBar>
#include <QTest>
#include <QTextDocument>
#include <QToolButton>

#include "chat_test_support.h"
#include "code_block_widget.h"
#include "document_view.h"
#include "message_widget.h"
#include "quire/ui/chat_view.h"
#include "test_main.h"

using namespace quire::ui;
using namespace quire::ui::testing;

namespace {

// Text views settle their heights over a few layout passes after a change.
void waitForStableRange(const QScrollBar* bar) {
  int stable = 0;
  int last = bar->maximum();
  for (int i = 0; i < 100 && stable < 3; ++i) {
    QTest::qWait(20);
    stable = bar->maximum() == last ? stable + 1 : 0;
    last = bar->maximum();
  }
}

}  // namespace

// Streaming into the view, scrolling while it happens, and long conversations.
class ChatViewStreamingTest : public QObject {
  Q_OBJECT

 private slots:
  void streamedTextIsCoalesced() {
    ChatView view;
    view.resize(600, 400);
    view.show();
    ChatMessageView reply = assistantMessage(9, {});
    reply.streaming = true;
    view.appendMessage(reply);
    QTest::qWait(2 * 1000 / ChatView::kMaxRendersPerSecond);

    // A burst of deltas in one go: no render until the event loop runs, then one.
    const int before = view.renderCount();
    QString expected;
    for (int i = 0; i < 300; ++i) {
      const QString delta = QStringLiteral("word%1 ").arg(i);
      expected += delta;
      view.appendToMessage(9, delta);
    }
    QCOMPARE(view.renderCount(), before);
    QTRY_COMPARE(view.renderCount(), before + 1);
    QTest::qWait(3 * 1000 / ChatView::kMaxRendersPerSecond);
    QCOMPARE(view.renderCount(), before + 1);
    QCOMPARE(firstText(messageWidget(view, 9))->document()->toPlainText(), expected.trimmed());
    QCOMPARE(view.message(9)->text, expected);

    // A steady trickle for 600 ms: at most ~20 renders a second.
    const int start = view.renderCount();
    QElapsedTimer clock;
    clock.start();
    int deltas = 0;
    while (clock.elapsed() < 600) {
      view.appendToMessage(9, QStringLiteral("x"));
      ++deltas;
      QTest::qWait(2);
    }
    view.flushPendingRenders();
    const int renders = view.renderCount() - start;
    const int allowed =
        static_cast<int>(clock.elapsed()) * ChatView::kMaxRendersPerSecond / 1000 + 2;
    QVERIFY2(renders <= allowed, qPrintable(QStringLiteral("%1 renders").arg(renders)));
    QVERIFY(renders >= 3);
    QVERIFY(deltas > renders);

    // The end of the stream renders at once and leaves nothing pending.
    reply = *view.message(9);
    reply.streaming = false;
    reply.stats = QStringLiteral("300 tokens · 40.0 tok/s");
    const int beforeEnd = view.renderCount();
    view.updateMessage(reply);
    QCOMPARE(view.renderCount(), beforeEnd + 1);
    QTest::qWait(2 * 1000 / ChatView::kMaxRendersPerSecond);
    QCOMPARE(view.renderCount(), beforeEnd + 1);
    QVERIFY(visibleChild<QLabel>(messageWidget(view, 9), QStringLiteral("messageStats")));
  }

  void streamingCodeBlockGrowsInPlace() {
    ChatView view;
    ChatMessageView reply = assistantMessage(4, QStringLiteral("Here:\n```cpp\nint a;"));
    reply.streaming = true;
    view.appendMessage(reply);
    auto* block = messageWidget(view, 4)->findChild<CodeBlockWidget*>();
    QVERIFY(block);
    view.appendToMessage(4, QStringLiteral("\nint b;"));
    view.flushPendingRenders();
    QCOMPARE(messageWidget(view, 4)->findChild<CodeBlockWidget*>(), block);
    QCOMPARE(block->code(), QStringLiteral("int a;\nint b;"));
    view.appendToMessage(4, QStringLiteral("\n```\nDone."));
    view.flushPendingRenders();
    QCOMPARE(block->code(), QStringLiteral("int a;\nint b;"));
    QCOMPARE(
        messageWidget(view, 4)->findChildren<DocumentView*>(QStringLiteral("messageText")).size(),
        2);
  }

  void followsTheEndUntilTheUserScrollsUp() {
    ChatView view;
    view.resize(520, 360);
    view.show();
    QVERIFY(QTest::qWaitForWindowExposed(&view));
    view.setMessages(longConversation(16));
    QScrollBar* bar = view.findChild<QScrollArea*>()->verticalScrollBar();
    QTRY_VERIFY(bar->maximum() > 0);
    QTRY_COMPARE(bar->value(), bar->maximum());
    QVERIFY(view.isPinnedToBottom());

    ChatMessageView reply = assistantMessage(100, {});
    reply.streaming = true;
    view.appendMessage(reply);
    int maximum = bar->maximum();
    for (int i = 0; i < 10; ++i) {
      view.appendToMessage(100, QStringLiteral("A new line of the reply, number %1.\n\n").arg(i));
      QTest::qWait(30);
    }
    QTRY_VERIFY(bar->maximum() > maximum);
    QTRY_COMPARE(bar->value(), bar->maximum());

    // The user scrolls up: more text must not move what they read.
    bar->setValue(bar->maximum() / 2);
    QVERIFY(!view.isPinnedToBottom());
    auto* jump = view.findChild<QToolButton*>(QStringLiteral("jumpToLatestButton"));
    QVERIFY(jump->isVisible());
    const int held = bar->value();
    maximum = bar->maximum();
    for (int i = 0; i < 10; ++i) {
      view.appendToMessage(100, QStringLiteral("More text while scrolled up, %1.\n\n").arg(i));
      QTest::qWait(30);
    }
    QTRY_VERIFY(bar->maximum() > maximum);
    QTest::qWait(50);
    QCOMPARE(bar->value(), held);

    // Back to the end: following resumes.
    QTest::mouseClick(jump, Qt::LeftButton);
    QVERIFY(view.isPinnedToBottom());
    QCOMPARE(bar->value(), bar->maximum());
    QVERIFY(!jump->isVisible());
    maximum = bar->maximum();
    view.appendToMessage(100, QStringLiteral("\n\nAnd the last paragraph.\n\nReally."));
    QTRY_VERIFY(bar->maximum() > maximum);
    QTRY_COMPARE(bar->value(), bar->maximum());
  }

  void buildsLongConversationsLazily() {
    ChatView view;
    view.resize(600, 500);
    view.show();
    QVERIFY(QTest::qWaitForWindowExposed(&view));
    QElapsedTimer clock;
    clock.start();
    view.setMessages(longConversation(2000));
    qInfo("2000 messages set in %lld ms", static_cast<long long>(clock.elapsed()));
    QCOMPARE(view.messageCount(), 2000);
    QCOMPARE(view.builtMessageCount(), qsizetype{ChatView::kInitialBatch});
    QVERIFY(messageWidget(view, 2000));
    QVERIFY(!messageWidget(view, 1));

    // Scrolling up builds older messages a batch at a time, without a jump.
    view.setMessages(longConversation(250));
    QScrollBar* bar = view.findChild<QScrollArea*>()->verticalScrollBar();
    waitForStableRange(bar);
    QCOMPARE(bar->value(), bar->maximum());
    QWidget* viewport = view.findChild<QScrollArea*>()->viewport();
    while (view.builtMessageCount() < view.messageCount()) {
      const qsizetype built = view.builtMessageCount();
      MessageWidget* oldest = messageWidget(view, view.messageCount() - built + 1);
      bar->setValue(0);
      const int top = oldest->mapTo(viewport, QPoint(0, 0)).y();
      QTRY_VERIFY(view.builtMessageCount() > built);
      waitForStableRange(bar);
      QVERIFY(qAbs(oldest->mapTo(viewport, QPoint(0, 0)).y() - top) <= 2);
    }
    QVERIFY(messageWidget(view, 1));
    QVERIFY(!view.isPinnedToBottom());

    // Back at the end, the old widgets are released again.
    view.scrollToBottom();
    QTRY_COMPARE(view.builtMessageCount(), qsizetype{ChatView::kInitialBatch});
    waitForStableRange(bar);
    QVERIFY(view.isPinnedToBottom());
    QCOMPARE(bar->value(), bar->maximum());
    QVERIFY(!messageWidget(view, 1));
  }
};

QUIRE_TEST(ChatViewStreamingTest)
#include "test_chat_view_streaming.moc"
