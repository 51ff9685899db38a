// Where a chat's context policy shows itself: the footer's gauge marks what
// sending the next message drops and names it in its tooltip, and the chat
// view draws a divider where the model's context resumes after dropped turns.

#include <QLabel>
#include <QTest>

#include "chat_test_support.h"
#include "context_gauge.h"
#include "message_widget.h"
#include "quire/ui/chat_view.h"
#include "quire/ui/status_line.h"
#include "test_main.h"

using namespace quire::ui;
using namespace quire::ui::testing;

class ContextDropViewTest : public QObject {
  Q_OBJECT

 private slots:
  void initTestCase() { QLocale::setDefault(QLocale(QLocale::English, QLocale::UnitedStates)); }

  void theGaugeMarksAndNamesWhatTheNextTurnDrops() {
    StatusLine line;
    line.resize(900, 30);
    line.show();
    line.setContextFill(1900, 2048);
    auto* gauge = line.findChild<ContextGauge*>(QStringLiteral("contextGauge"));
    QVERIFY(gauge);
    QVERIFY(!gauge->toolTip().contains(QStringLiteral("Sending now")));
    QCOMPARE(gauge->droppedTo(), qint64{0});

    const QString drops = QStringLiteral(
        "Sending now drops turns 1\u20133 (1,840 tokens); the model then reads 60 "
        "tokens again.");
    line.setContextDrop({40, 1880, drops});
    QCOMPARE(gauge->toolTip(),
             QStringLiteral("Context of this chat: 1,900 of 2,048 tokens used (93%).\n") + drops);
    QCOMPARE(gauge->droppedFrom(), qint64{40});
    QCOMPARE(gauge->droppedTo(), qint64{1880});
    QCOMPARE(line.contextDrop().description, drops);
    // The marked section is painted over the fill: the gauge looks different.
    const QImage marked = gauge->grab().toImage();
    line.setContextDrop({});
    QVERIFY(gauge->grab().toImage() != marked);

    // A new fill forgets the old forecast until it is given again.
    line.setContextDrop({40, 1880, drops});
    line.setContextFill(600, 2048);
    QVERIFY(!gauge->toolTip().contains(QStringLiteral("Sending now")));
    QCOMPARE(gauge->droppedTo(), qint64{0});
  }

  void aSectionBeyondTheFillIsClamped() {
    StatusLine line;
    line.setContextFill(500, 2048);
    line.setContextDrop({100, 5000, QStringLiteral("Sending now drops turn 2 (400 tokens).")});
    auto* gauge = line.findChild<ContextGauge*>(QStringLiteral("contextGauge"));
    QCOMPARE(gauge->droppedFrom(), qint64{100});
    QCOMPARE(gauge->droppedTo(), qint64{500});
  }

  void theDividerStandsWhereTheContextResumes() {
    ChatView view;
    view.resize(700, 900);
    view.show();
    QList<ChatMessageView> messages = sampleConversation();
    messages[2].contextResumesHere = true;  // message 3: turns before it were dropped
    view.setMessages(messages);
    for (const ChatMessageView& message : messages) {
      QWidget* divider =
          messageWidget(view, message.id)->findChild<QWidget*>(QStringLiteral("contextDivider"));
      QVERIFY(divider);
      QCOMPARE(divider->isVisibleTo(messageWidget(view, message.id)), message.id == 3);
    }
    QWidget* divider =
        messageWidget(view, 3)->findChild<QWidget*>(QStringLiteral("contextDivider"));
    QCOMPARE(divider->findChild<QLabel*>(QStringLiteral("contextDividerText"))->text(),
             QStringLiteral("Earlier messages are not in the model's context"));
    QVERIFY(!divider->toolTip().isEmpty());

    // It moves when the context resumes later.
    ChatMessageView third = *view.message(3);
    third.contextResumesHere = false;
    view.updateMessage(third);
    ChatMessageView fourth = *view.message(4);
    fourth.contextResumesHere = true;
    view.updateMessage(fourth);
    QVERIFY(!divider->isVisibleTo(messageWidget(view, 3)));
    QVERIFY(messageWidget(view, 4)
                ->findChild<QWidget*>(QStringLiteral("contextDivider"))
                ->isVisibleTo(messageWidget(view, 4)));
  }
};

QUIRE_TEST(ContextDropViewTest)

#include "test_context_drop_view.moc"
