// Long messages fold to their beginning, notes that are no errors look like
// notes, and a reply refused before it started offers no Regenerate.

#include <QLabel>
#include <QTest>
#include <QToolButton>

#include "chat_test_support.h"
#include "document_view.h"
#include "message_fold.h"
#include "message_widget.h"
#include "quire/ui/chat_view.h"
#include "test_main.h"

using namespace quire::ui;
using namespace quire::ui::testing;

namespace {

QString lines(int count) {
  QStringList list;
  for (int i = 1; i <= count; ++i)
    list << QStringLiteral("line %1").arg(i);
  return list.join(u'\n');
}

}  // namespace

class ChatViewFoldingTest : public QObject {
  Q_OBJECT

 private slots:
  void foldsPastTheLimits_data() {
    QTest::addColumn<QString>("text");
    QTest::addColumn<QString>("folded");  // empty: shown whole
    QTest::newRow("short") << QStringLiteral("hello") << QString();
    QTest::newRow("40 lines") << lines(40) << QString();
    QTest::newRow("41 lines") << lines(41) << lines(12) + QStringLiteral(" …");
    QTest::newRow("4000 characters") << QString(4000, u'a') << QString();
    QTest::newRow("one long line")
        << QString(4001, u'a') << QString(1200, u'a') + QStringLiteral(" …");
    const QString words = QStringLiteral("word ").repeated(1000);
    QTest::newRow("words") << words << words.left(1199) + QStringLiteral(" …");
  }

  void foldsPastTheLimits() {
    QFETCH(QString, text);
    QFETCH(QString, folded);
    QCOMPARE(foldedText(text).value_or(QString()), folded);
  }

  void aLongMessageShowsItsBeginningUntilAsked() {
    ChatView view;
    view.resize(700, 600);
    view.show();
    const QString text = QStringLiteral("word ").repeated(20'000).trimmed();
    view.setMessages({userMessage(1, text), assistantMessage(2, lines(60))});

    MessageWidget* asked = messageWidget(view, 1);
    QVERIFY(asked->isFolded());
    QCOMPARE(firstText(asked)->toPlainText(), *foldedText(text));
    auto* toggle = visibleChild<QToolButton>(asked, QStringLiteral("showAllButton"));
    QVERIFY(toggle);
    QCOMPARE(toggle->text(), QStringLiteral("Show all"));
    QTest::mouseClick(toggle, Qt::LeftButton);
    QCOMPARE(firstText(asked)->toPlainText(), text);
    QCOMPARE(toggle->text(), QStringLiteral("Show less"));
    QTest::mouseClick(toggle, Qt::LeftButton);
    QVERIFY(asked->isFolded());
    // Copy and Edit still take the whole message.
    QCOMPARE(view.message(1)->text, text);

    // Replies fold too; a short message has no toggle.
    QVERIFY(messageWidget(view, 2)->isFolded());
    const QString reply = firstText(messageWidget(view, 2))->toPlainText();
    QVERIFY2(
        reply.contains(QStringLiteral("line 12")) && !reply.contains(QStringLiteral("line 13")),
        qPrintable(reply));
    view.appendMessage(userMessage(3, QStringLiteral("Thanks")));
    QVERIFY(!visibleChild<QToolButton>(messageWidget(view, 3), QStringLiteral("showAllButton")));
  }

  void aReplyWatchedWhileStreamingStaysWhole() {
    ChatView view;
    view.resize(700, 600);
    view.show();
    ChatMessageView reply = assistantMessage(2, QStringLiteral("line 1\n"));
    reply.streaming = true;
    view.setMessages({userMessage(1, QStringLiteral("Count to sixty")), reply});
    reply.text = lines(60);
    reply.streaming = false;
    view.updateMessage(reply);
    MessageWidget* widget = messageWidget(view, 2);
    QVERIFY(widget->isFoldable());
    QVERIFY(!widget->isFolded());
    auto* toggle = visibleChild<QToolButton>(widget, QStringLiteral("showAllButton"));
    QVERIFY(toggle);
    QCOMPARE(toggle->text(), QStringLiteral("Show less"));
  }

  void aNoteIsNoError() {
    ChatView view;
    view.resize(700, 500);
    view.show();
    ChatMessageView reply = assistantMessage(2, QStringLiteral("Sure."));
    reply.notice = QStringLiteral(
        "3 turns at the start of this chat no longer fit the context; "
        "the model did not see them.");
    view.setMessages({userMessage(1, QStringLiteral("And then?")), reply});
    auto* notice = visibleChild<QLabel>(messageWidget(view, 2), QStringLiteral("messageNotice"));
    QVERIFY(notice);
    QCOMPARE(notice->text(), reply.notice);
    QVERIFY(!visibleChild<QLabel>(messageWidget(view, 2), QStringLiteral("messageError")));
  }

  void aRefusedReplyOffersNoRegenerate() {
    ChatView view;
    view.resize(700, 500);
    view.show();
    ChatMessageView reply = assistantMessage(2, {});
    reply.error = QStringLiteral("The message does not fit the context");
    reply.canRegenerate = false;
    view.setMessages({userMessage(1, QStringLiteral("A whole book")), reply});
    QVERIFY(!visibleChild<QToolButton>(messageWidget(view, 2), QStringLiteral("regenerateButton")));
    QVERIFY(visibleChild<QToolButton>(messageWidget(view, 1), QStringLiteral("editButton")));
  }
};

QUIRE_TEST(ChatViewFoldingTest)
#include "test_chat_view_folding.moc"
