#include <QAction>
#include <QClipboard>
#include <QGuiApplication>
#include <QLabel>
#include <QPlainTextEdit>
#include <QSignalSpy>
#include <QTest>
#include <QTextBlock>
#include <QTextDocument>
#include <QTextList>
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

// The first fragment of `document` whose text is `text`.
QTextFragment findFragment(const QTextDocument* document, const QString& text) {
  for (QTextBlock block = document->begin(); block.isValid(); block = block.next()) {
    for (auto it = block.begin(); !it.atEnd(); ++it) {
      if (it.fragment().text() == text) return it.fragment();
    }
  }
  return {};
}

}  // namespace

class ChatViewTest : public QObject {
  Q_OBJECT

 private slots:
  void showsEmptyStateForNewChat() {
    ChatView view;
    view.resize(600, 400);
    view.show();
    QVERIFY(view.isShowingEmptyState());
    QVERIFY(view.findChild<QWidget*>(QStringLiteral("emptyState"))->isVisible());
    view.appendMessage(userMessage(1, QStringLiteral("hi")));
    QVERIFY(!view.isShowingEmptyState());
    view.removeMessage(1);
    QVERIFY(view.isShowingEmptyState());
    view.setMessages(sampleConversation());
    QVERIFY(!view.isShowingEmptyState());
    view.clear();
    QVERIFY(view.isShowingEmptyState());
  }

  void rendersAssistantMarkdown() {
    ChatView view;
    view.appendMessage(assistantMessage(
        7, QStringLiteral("## Plan\n\nThis is **bold**, *slanted* and `inline`.\n\n"
                          "- one\n- two\n\n1. first\n2. second\n")));
    const DocumentView* text = firstText(messageWidget(view, 7));
    QVERIFY(text);
    const QTextDocument* document = text->document();

    const QTextBlock heading = document->begin();
    QCOMPARE(heading.text(), QStringLiteral("Plan"));
    QCOMPARE(heading.blockFormat().headingLevel(), 2);
    QVERIFY(heading.charFormat().fontWeight() >= QFont::Bold ||
            findFragment(document, QStringLiteral("Plan")).charFormat().fontWeight() >=
                QFont::Bold);

    const QTextFragment bold = findFragment(document, QStringLiteral("bold"));
    QVERIFY(bold.isValid());
    QVERIFY(bold.charFormat().fontWeight() >= QFont::Bold);
    QVERIFY(findFragment(document, QStringLiteral("slanted")).charFormat().fontItalic());
    const QTextFragment inlineCode = findFragment(document, QStringLiteral("inline"));
    QVERIFY(inlineCode.charFormat().fontFixedPitch());
    QVERIFY(inlineCode.charFormat().background().style() != Qt::NoBrush);

    int bulleted = 0;
    int numbered = 0;
    for (QTextBlock block = document->begin(); block.isValid(); block = block.next()) {
      if (const QTextList* list = block.textList()) {
        const QTextListFormat::Style style = list->format().style();
        bulleted += style == QTextListFormat::ListDisc ? 1 : 0;
        numbered += style == QTextListFormat::ListDecimal ? 1 : 0;
      }
    }
    QCOMPARE(bulleted, 2);
    QCOMPARE(numbered, 2);
    QVERIFY(!document->toPlainText().contains(u'*'));
  }

  void showsUserTextAsTyped() {
    ChatView view;
    view.appendMessage(userMessage(1, QStringLiteral("**not bold**\n# not a heading")));
    const DocumentView* text = firstText(messageWidget(view, 1));
    QCOMPARE(text->document()->toPlainText(), QStringLiteral("**not bold**\n# not a heading"));
  }

  void codeBlocksHaveCopyButtons() {
    ChatView view;
    view.resize(700, 600);
    view.show();
    const QString first = QStringLiteral("def double(x):\n    return x * 2");
    view.appendMessage(assistantMessage(
        3, QStringLiteral("Two blocks:\n\n```python\n%1\n```\n\nand\n\n~~~\nplain\n~~~\n")
               .arg(first)));
    const QList<CodeBlockWidget*> blocks = messageWidget(view, 3)->findChildren<CodeBlockWidget*>();
    QCOMPARE(blocks.size(), 2);
    QCOMPARE(blocks[0]->language(), QStringLiteral("python"));
    const auto* codeView = blocks[0]->findChild<DocumentView*>(QStringLiteral("codeText"));
    QVERIFY(QFontInfo(codeView->font()).fixedPitch());
    QCOMPARE(codeView->lineWrapMode(), QTextEdit::NoWrap);

    QGuiApplication::clipboard()->clear();
    auto* copy = blocks[0]->findChild<QToolButton*>(QStringLiteral("copyCodeButton"));
    QVERIFY(copy);
    QVERIFY(!copy->accessibleName().isEmpty());
    QTest::mouseClick(copy, Qt::LeftButton);
    QCOMPARE(QGuiApplication::clipboard()->text(), first);
    QTest::mouseClick(blocks[1]->findChild<QToolButton*>(QStringLiteral("copyCodeButton")),
                      Qt::LeftButton);
    QCOMPARE(QGuiApplication::clipboard()->text(), QStringLiteral("plain"));
  }

  void copyMessagePutsItsTextOnTheClipboard() {
    ChatView view;
    view.resize(600, 400);
    view.show();
    const QString text = QStringLiteral("Some *Markdown* reply");
    view.appendMessage(assistantMessage(5, text));
    auto* copy =
        visibleChild<QToolButton>(messageWidget(view, 5), QStringLiteral("copyMessageButton"));
    QVERIFY(copy);
    QTest::mouseClick(copy, Qt::LeftButton);
    QCOMPARE(QGuiApplication::clipboard()->text(), text);
  }

  void selectsAndCopiesWithTheKeyboard() {
    ChatView view;
    view.resize(600, 400);
    view.show();
    view.activateWindow();
    QVERIFY(QTest::qWaitForWindowActive(&view));
    view.appendMessage(assistantMessage(5, QStringLiteral("Hello **world**")));
    DocumentView* text = firstText(messageWidget(view, 5));
    QVERIFY(!text->accessibleName().isEmpty());
    QVERIFY(text->textInteractionFlags() & Qt::TextSelectableByKeyboard);
    text->setFocus();
    QGuiApplication::clipboard()->clear();
    QTest::keyClick(text, Qt::Key_End, Qt::ControlModifier);
    QTest::keyClick(text, Qt::Key_Home, Qt::ControlModifier | Qt::ShiftModifier);
    QTest::keySequence(text, QKeySequence::Copy);
    QCOMPARE(QGuiApplication::clipboard()->text(), QStringLiteral("Hello world"));
  }

  // The app's window stops a running reply with Esc (a window-wide shortcut);
  // in a message being edited Esc still cancels the edit, and stops nothing.
  void escapeInAnEditCancelsItBeforeTheWindowsShortcut() {
    ChatView view;
    view.resize(700, 600);
    view.setMessages(sampleConversation());
    auto* stopReply = new QAction(&view);
    stopReply->setShortcut(QKeySequence(Qt::Key_Escape));
    stopReply->setShortcutContext(Qt::WindowShortcut);
    view.addAction(stopReply);
    QSignalSpy stops(stopReply, &QAction::triggered);
    view.show();
    view.activateWindow();
    QVERIFY(QTest::qWaitForWindowActive(&view));

    MessageWidget* question = messageWidget(view, 3);
    QTest::mouseClick(visibleChild<QToolButton>(question, QStringLiteral("editButton")),
                      Qt::LeftButton);
    QVERIFY(question->isEditing());
    auto* editor = visibleChild<QPlainTextEdit>(question, QStringLiteral("messageEditor"));
    QVERIFY(editor);
    editor->setFocus();
    QVERIFY(editor->hasFocus());
    QTest::keyClick(editor, Qt::Key_Escape);
    QVERIFY(!question->isEditing());
    QCOMPARE(stops.count(), 0);

    // Elsewhere in the window the shortcut has Esc.
    view.setFocus();
    QTest::keyClick(&view, Qt::Key_Escape);
    QCOMPARE(stops.count(), 1);
  }

  void editAndResendEmitsTheNewText() {
    ChatView view;
    view.resize(700, 600);
    view.show();
    view.setMessages(sampleConversation());
    QSignalSpy edits(&view, &ChatView::editRequested);
    QVERIFY(!visibleChild<QToolButton>(messageWidget(view, 2), QStringLiteral("editButton")));

    MessageWidget* question = messageWidget(view, 3);
    auto* edit = visibleChild<QToolButton>(question, QStringLiteral("editButton"));
    QVERIFY(edit);
    QTest::mouseClick(edit, Qt::LeftButton);
    QVERIFY(question->isEditing());
    auto* editor = visibleChild<QPlainTextEdit>(question, QStringLiteral("messageEditor"));
    QVERIFY(editor);
    QCOMPARE(editor->toPlainText(), QStringLiteral("And if the file might not exist?"));

    // Escape cancels without a signal.
    QTest::keyClick(editor, Qt::Key_Escape);
    QVERIFY(!question->isEditing());
    QCOMPARE(edits.count(), 0);

    QTest::mouseClick(edit, Qt::LeftButton);
    editor->selectAll();
    QTest::keyClicks(editor, QStringLiteral("What if it is empty?"));
    QTest::keyClick(editor, Qt::Key_Return, Qt::ShiftModifier);
    QTest::keyClicks(editor, QStringLiteral("Or broken?"));
    QCOMPARE(edits.count(), 0);
    QTest::keyClick(editor, Qt::Key_Return);
    QCOMPARE(edits.count(), 1);
    QCOMPARE(edits[0][0].toLongLong(), 3);
    QCOMPARE(edits[0][1].toString(), QStringLiteral("What if it is empty?\nOr broken?"));
    QVERIFY(!question->isEditing());

    // The Send button does the same; the app may rebuild the view from the signal.
    connect(&view, &ChatView::editRequested, &view, [&view](qint64 id, const QString& text) {
      QList<ChatMessageView> kept;
      for (const ChatMessageView& message : sampleConversation()) {
        if (message.id < id) kept.push_back(message);
      }
      kept.push_back(userMessage(id, text));
      view.setMessages(kept);
    });
    QTest::mouseClick(
        visibleChild<QToolButton>(messageWidget(view, 1), QStringLiteral("editButton")),
        Qt::LeftButton);
    QTest::mouseClick(
        visibleChild<QWidget>(messageWidget(view, 1), QStringLiteral("sendEditButton")),
        Qt::LeftButton);
    QCOMPARE(edits.count(), 2);
    QCOMPARE(edits[1][0].toLongLong(), 1);
    QCOMPARE(view.messageCount(), 1);
  }

  void regenerateIsOfferedOnTheLastReply() {
    ChatView view;
    view.resize(700, 600);
    view.show();
    view.setMessages(sampleConversation());
    QSignalSpy regenerations(&view, &ChatView::regenerateRequested);
    QVERIFY(!visibleChild<QToolButton>(messageWidget(view, 2), QStringLiteral("regenerateButton")));
    auto* regenerate =
        visibleChild<QToolButton>(messageWidget(view, 4), QStringLiteral("regenerateButton"));
    QVERIFY(regenerate);
    QVERIFY(!regenerate->accessibleName().isEmpty());
    QTest::mouseClick(regenerate, Qt::LeftButton);
    QCOMPARE(regenerations.count(), 1);
    QCOMPARE(regenerations[0][0].toLongLong(), 4);

    // A new question takes it away; a streaming reply gets it when it ends.
    view.appendMessage(userMessage(5, QStringLiteral("Thanks!")));
    QVERIFY(!visibleChild<QToolButton>(messageWidget(view, 4), QStringLiteral("regenerateButton")));
    ChatMessageView reply = assistantMessage(6, QStringLiteral("You're"));
    reply.streaming = true;
    view.appendMessage(reply);
    QVERIFY(!visibleChild<QToolButton>(messageWidget(view, 6), QStringLiteral("regenerateButton")));
    QVERIFY(visibleChild<QLabel>(messageWidget(view, 6), QStringLiteral("progressLabel")));
    reply.text = QStringLiteral("You're welcome.");
    reply.streaming = false;
    view.updateMessage(reply);
    QVERIFY(visibleChild<QToolButton>(messageWidget(view, 6), QStringLiteral("regenerateButton")));
    QVERIFY(!visibleChild<QLabel>(messageWidget(view, 6), QStringLiteral("progressLabel")));
  }

  // A long line of statistics stays on one line, cut with "…", with the
  // whole line in its tooltip: wrapped, it took several lines of the column.
  void longStatisticsStayOnOneLine() {
    ChatView view;
    view.resize(420, 600);
    view.show();
    const QString stats = QStringLiteral(
        "212 tokens · 34.1 tok/s · 0.18 s to first token · 1,024 of 1,100 prompt tokens from "
        "the cache · stopped at the longest reply");
    view.appendMessage(assistantMessage(7, QStringLiteral("Hello."), stats));
    auto* label = visibleChild<QLabel>(messageWidget(view, 7), QStringLiteral("messageStats"));
    QVERIFY(label);
    QTRY_VERIFY2(label->text().endsWith(QChar(0x2026)), qPrintable(label->text()));
    QVERIFY(label->fontMetrics().horizontalAdvance(label->text()) <= label->width());
    QVERIFY2(label->toolTip().startsWith(stats), qPrintable(label->toolTip()));
    QVERIFY(label->height() < 2 * label->fontMetrics().lineSpacing());
    // Wide enough, the whole line shows.
    view.resize(1400, 600);
    QTRY_COMPARE(label->text(), stats);
  }

  // Regenerate makes a second version, whose Delete button appears: the
  // buttons the user clicked stay where they were.
  void buttonsStayPutWhenASecondVersionAppears() {
    ChatView view;
    view.resize(800, 600);
    view.show();
    ChatMessageView reply =
        assistantMessage(2, QStringLiteral("Hello."), QStringLiteral("6 tokens"));
    view.setMessages({userMessage(1, QStringLiteral("Hi")), reply});
    const auto place = [&](const char* name) {
      auto* button = visibleChild<QToolButton>(messageWidget(view, 2), QString::fromLatin1(name));
      return button ? button->mapTo(&view, QPoint(0, 0)).x() : -1;
    };
    QTRY_VERIFY(place("regenerateButton") > 0);
    const int regenerate = place("regenerateButton");
    const int copy = place("copyMessageButton");
    const int branch = place("branchButton");
    QCOMPARE(place("deleteBranchButton"), -1);
    reply.siblingIndex = 1;
    reply.siblingCount = 2;
    view.updateMessage(reply);
    QTRY_VERIFY(place("deleteBranchButton") > 0);
    QCOMPARE(place("regenerateButton"), regenerate);
    QCOMPARE(place("copyMessageButton"), copy);
    QCOMPARE(place("branchButton"), branch);
  }

  void showsAnErrorPerMessage() {
    ChatView view;
    view.resize(700, 500);
    view.show();
    ChatMessageView reply = assistantMessage(2, {});
    reply.error =
        QStringLiteral("does not fit: the prompt needs 9,310 tokens, the context holds 8,192");
    view.setMessages({userMessage(1, QStringLiteral("Summarise this book")), reply});
    auto* error = visibleChild<QLabel>(messageWidget(view, 2), QStringLiteral("messageError"));
    QVERIFY(error);
    QVERIFY(error->text().contains(reply.error));
    QVERIFY(!error->accessibleName().isEmpty());
    QVERIFY(!visibleChild<QLabel>(messageWidget(view, 1), QStringLiteral("messageError")));

    reply.error.clear();
    reply.text = QStringLiteral("It is about a whale.");
    view.updateMessage(reply);
    QVERIFY(!visibleChild<QLabel>(messageWidget(view, 2), QStringLiteral("messageError")));
  }

  void namesWhatItShows() {
    ChatView view;
    view.setMessages(sampleConversation());
    QVERIFY(!view.accessibleName().isEmpty());
    for (const QWidget* widget : view.findChildren<MessageWidget*>()) {
      QVERIFY(!widget->accessibleName().isEmpty());
    }
    for (const QToolButton* button : view.findChildren<QToolButton*>()) {
      QVERIFY2(!button->accessibleName().isEmpty(), qPrintable(button->objectName()));
    }
  }
};

QUIRE_TEST(ChatViewTest)
#include "test_chat_view.moc"