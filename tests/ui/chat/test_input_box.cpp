#include <QAction>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QSignalSpy>
#include <QTest>

#include "quire/ui/input_box.h"
#include "test_main.h"

using quire::ui::InputBox;

namespace {

QPlainTextEdit* editorOf(InputBox& box) {
  return box.findChild<QPlainTextEdit*>(QStringLiteral("messageInput"));
}
QPushButton* button(InputBox& box, const char* name) {
  return box.findChild<QPushButton*>(QString::fromLatin1(name));
}

}  // namespace

class InputBoxTest : public QObject {
  Q_OBJECT

 private slots:
  void deleteInAnEmptyBoxIsLeftToTheWindow() {
    QWidget window;
    auto* box = new InputBox(&window);
    auto* action = new QAction(&window);
    action->setShortcut(QKeySequence::Delete);
    action->setShortcutContext(Qt::WindowShortcut);
    window.addAction(action);
    QSignalSpy triggered(action, &QAction::triggered);
    window.show();
    window.activateWindow();
    QVERIFY(QTest::qWaitForWindowActive(&window));
    box->focusInput();
    QTest::keyClicks(editorOf(*box), QStringLiteral("ab"));
    QTest::keyClick(editorOf(*box), Qt::Key_Home);
    QTest::keyClick(editorOf(*box), Qt::Key_Delete);
    QCOMPARE(box->text(), QStringLiteral("b"));
    QTest::keyClick(editorOf(*box), Qt::Key_Delete);
    QCOMPARE(box->text(), QString());
    QCOMPARE(triggered.count(), 0);
    QTest::keyClick(editorOf(*box), Qt::Key_Delete);
    QCOMPARE(triggered.count(), 1);
  }

  void enterSendsAndClears() {
    InputBox box;
    box.show();
    QSignalSpy sent(&box, &InputBox::sendRequested);
    QTest::keyClicks(editorOf(box), QStringLiteral("hello there"));
    QVERIFY(button(box, "sendButton")->isEnabled());
    QTest::keyClick(editorOf(box), Qt::Key_Return);
    QCOMPARE(sent.count(), 1);
    QCOMPARE(sent[0][0].toString(), QStringLiteral("hello there"));
    QCOMPARE(box.text(), QString());
    QVERIFY(!button(box, "sendButton")->isEnabled());

    QTest::keyClicks(editorOf(box), QStringLiteral("keypad"));
    QTest::keyClick(editorOf(box), Qt::Key_Enter, Qt::KeypadModifier);
    QCOMPARE(sent.count(), 2);
  }

  void shiftEnterStartsANewLine() {
    InputBox box;
    box.show();
    QSignalSpy sent(&box, &InputBox::sendRequested);
    QTest::keyClicks(editorOf(box), QStringLiteral("first"));
    QTest::keyClick(editorOf(box), Qt::Key_Return, Qt::ShiftModifier);
    QTest::keyClicks(editorOf(box), QStringLiteral("second"));
    QCOMPARE(sent.count(), 0);
    QCOMPARE(box.text(), QStringLiteral("first\nsecond"));
    QTest::mouseClick(button(box, "sendButton"), Qt::LeftButton);
    QCOMPARE(sent.count(), 1);
    QCOMPARE(sent[0][0].toString(), QStringLiteral("first\nsecond"));
  }

  void doesNotSendBlankText() {
    InputBox box;
    box.show();
    QSignalSpy sent(&box, &InputBox::sendRequested);
    QTest::keyClick(editorOf(box), Qt::Key_Return);
    QTest::keyClicks(editorOf(box), QStringLiteral("   "));
    QTest::keyClick(editorOf(box), Qt::Key_Return, Qt::ShiftModifier);
    QVERIFY(!box.canSend());
    QVERIFY(!button(box, "sendButton")->isEnabled());
    QTest::keyClick(editorOf(box), Qt::Key_Return);
    box.send();
    QCOMPARE(sent.count(), 0);
  }

  void trimsBlankLinesButKeepsIndentation() {
    InputBox box;
    QSignalSpy sent(&box, &InputBox::sendRequested);
    box.setText(QStringLiteral("\n \n    indented code\n  more\n\n  "));
    box.send();
    QCOMPARE(sent.count(), 1);
    QCOMPARE(sent[0][0].toString(), QStringLiteral("    indented code\n  more"));
  }

  void stopReplacesSendWhileGenerating() {
    InputBox box;
    box.show();
    QSignalSpy sent(&box, &InputBox::sendRequested);
    QSignalSpy stopped(&box, &InputBox::stopRequested);
    QVERIFY(!button(box, "stopButton")->isVisible());
    box.setGenerating(true);
    QVERIFY(box.isGenerating());
    QVERIFY(button(box, "stopButton")->isVisible());
    QVERIFY(!button(box, "sendButton")->isVisible());
    QVERIFY(!button(box, "stopButton")->accessibleName().isEmpty());

    // Typing the next message goes on; Enter does not send it yet.
    QTest::keyClicks(editorOf(box), QStringLiteral("next question"));
    QTest::keyClick(editorOf(box), Qt::Key_Return);
    QCOMPARE(sent.count(), 0);
    QCOMPARE(box.text(), QStringLiteral("next question"));

    QTest::mouseClick(button(box, "stopButton"), Qt::LeftButton);
    QCOMPARE(stopped.count(), 1);
    QTest::keyClick(editorOf(box), Qt::Key_Escape);
    QCOMPARE(stopped.count(), 2);

    box.setGenerating(false);
    QVERIFY(!button(box, "stopButton")->isVisible());
    QVERIFY(button(box, "sendButton")->isVisible());
    QTest::keyClick(editorOf(box), Qt::Key_Escape);
    QCOMPARE(stopped.count(), 2);
    QTest::keyClick(editorOf(box), Qt::Key_Return);
    QCOMPARE(sent.count(), 1);
  }

  void showsPlaceholderText() {
    InputBox box;
    QVERIFY(!box.placeholderText().isEmpty());
    box.setPlaceholderText(QStringLiteral("Ask Llama"));
    QCOMPARE(editorOf(box)->placeholderText(), QStringLiteral("Ask Llama"));
  }

  void growsWithItsTextUpToALimit() {
    InputBox box;
    box.resize(400, 100);
    box.show();
    QVERIFY(QTest::qWaitForWindowExposed(&box));
    box.setMaximumLines(4);
    const int oneLine = editorOf(box)->height();
    box.setText(QStringLiteral("1\n2\n3"));
    QTRY_VERIFY(editorOf(box)->height() > oneLine);
    const int threeLines = editorOf(box)->height();
    box.setText(QStringLiteral("1\n2\n3\n4"));
    QTRY_VERIFY(editorOf(box)->height() > threeLines);
    const int fourLines = editorOf(box)->height();
    box.setText(QStringLiteral("1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n11\n12"));
    QTest::qWait(20);
    QCOMPARE(editorOf(box)->height(), fourLines);
    box.clear();
    QTRY_COMPARE(editorOf(box)->height(), oneLine);
  }
};

QUIRE_TEST(InputBoxTest)
#include "test_input_box.moc"
