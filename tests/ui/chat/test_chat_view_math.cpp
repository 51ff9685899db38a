#include <QClipboard>
#include <QDir>
#include <QGuiApplication>
#include <QRegularExpression>
#include <QTemporaryDir>
#include <QTest>
#include <QTextBlock>
#include <QTextDocument>
#include <QTextList>

#include "chat_test_support.h"
#include "document_view.h"
#include "markdown_math.h"
#include "message_widget.h"
#include "quire/ui/chat_view.h"
#include "quire/ui/math_renderer.h"
#include "test_main.h"

using namespace quire::ui;
using namespace quire::ui::testing;

namespace {

struct FormulaImage {
  QString source;
  QString name;
  QSizeF size;
  Qt::Alignment blockAlignment;
};

// The formula images of a document, in order.
QList<FormulaImage> formulaImages(const QTextDocument* document) {
  QList<FormulaImage> images;
  for (QTextBlock block = document->begin(); block.isValid(); block = block.next()) {
    for (auto it = block.begin(); !it.atEnd(); ++it) {
      const QTextCharFormat format = it.fragment().charFormat();
      if (!format.isImageFormat()) continue;
      const QTextImageFormat image = format.toImageFormat();
      images.push_back({image.stringProperty(kMathSourceProperty), image.name(),
                        QSizeF(image.width(), image.height()), block.blockFormat().alignment()});
    }
  }
  return images;
}

DocumentView* replyText(const ChatView& view, qint64 id) {
  return firstText(messageWidget(view, id));
}

}  // namespace

// Formulas in replies: rendered as images, copied as their source, left as
// text while incomplete or broken.
class ChatViewMathTest : public QObject {
  Q_OBJECT

 private slots:
  void inlineFormulaIsAnImage() {
    ChatView view;
    view.resize(600, 400);
    view.setMessages({userMessage(1, QStringLiteral("Square?")),
                      assistantMessage(2, QStringLiteral("The square is $x^2$, *not* `$y$`."))});
    DocumentView* text = replyText(view, 2);
    QVERIFY(text);
    const QList<FormulaImage> images = formulaImages(text->document());
    QCOMPARE(images.size(), 1);
    QCOMPARE(images[0].source, QStringLiteral("$x^2$"));
    QVERIFY(images[0].size.width() > 0);
    QCOMPARE(text->document()->toPlainText(), QStringLiteral("The square is \uFFFC, not $y$."));
  }

  void copyingASelectionGivesTheSource() {
    ChatView view;
    view.resize(600, 400);
    view.setMessages(
        {assistantMessage(2, QStringLiteral("So $x^2$ grows.\n\nThen $$\\sum_i i$$"))});
    DocumentView* text = replyText(view, 2);
    text->selectAll();
    text->copy();
    QCOMPARE(QGuiApplication::clipboard()->text(),
             QStringLiteral("So $x^2$ grows.\nThen\n$$\\sum_i i$$"));
    // A part of the text holding one formula.
    QTextCursor cursor(text->document());
    cursor.setPosition(3);
    cursor.setPosition(4, QTextCursor::KeepAnchor);
    text->setTextCursor(cursor);
    text->copy();
    QCOMPARE(QGuiApplication::clipboard()->text(), QStringLiteral("$x^2$"));
  }

  void copyingATableGivesItsFormulas() {
    ChatView view;
    view.resize(600, 400);
    view.setMessages(
        {assistantMessage(2, QStringLiteral("| f | f' |\n|---|---|\n| $x^2$ | $2x$ |"))});
    DocumentView* text = replyText(view, 2);
    QCOMPARE(formulaImages(text->document()).size(), 2);
    text->selectAll();
    text->copy();
    QCOMPARE(QGuiApplication::clipboard()->text(), QStringLiteral("\nf\nf'\n$x^2$\n$2x$\n"));
  }

  void displayFormulaIsACentredParagraph() {
    ChatView view;
    view.resize(600, 400);
    view.setMessages(
        {assistantMessage(2, QStringLiteral("The sum\n$$\\sum_{i=1}^n i$$\nis known."))});
    QTextDocument* document = replyText(view, 2)->document();
    const QList<FormulaImage> images = formulaImages(document);
    QCOMPARE(images.size(), 1);
    QCOMPARE(images[0].source, QStringLiteral("$$\\sum_{i=1}^n i$$"));
    QVERIFY(images[0].blockAlignment & Qt::AlignHCenter);
    QCOMPARE(document->toPlainText(), QStringLiteral("The sum\n\uFFFC\nis known."));
    // Display style: taller than the same sum inline.
    view.setMessages({assistantMessage(3, QStringLiteral("The sum $\\sum_{i=1}^n i$ is known."))});
    const QList<FormulaImage> inlineImages = formulaImages(replyText(view, 3)->document());
    QCOMPARE(inlineImages.size(), 1);
    QVERIFY(inlineImages[0].size.height() < images[0].size.height());
  }

  void displayFormulaInAListItemKeepsTheList() {
    ChatView view;
    view.resize(600, 400);
    view.setMessages({assistantMessage(2, QStringLiteral("- first $$a^2$$ after\n- second"))});
    QTextDocument* document = replyText(view, 2)->document();
    QCOMPARE(formulaImages(document).size(), 1);
    QCOMPARE(document->toPlainText(), QStringLiteral("first\n\uFFFC\nafter\nsecond"));
    // The list keeps its two items; the formula and the text after it are
    // paragraphs of the first item, not items of their own.
    QTextBlock block = document->begin();
    QVERIFY(block.textList());
    QTextList* list = block.textList();
    QCOMPARE(list->count(), 2);
    QCOMPARE(list->item(1).text(), QStringLiteral("second"));
  }

  void currencyAndCodeStayText() {
    ChatView view;
    view.resize(600, 400);
    const QString reply = QStringLiteral("It costs $5 and $10, or \\$3.");
    view.setMessages({assistantMessage(2, reply)});
    QTextDocument* document = replyText(view, 2)->document();
    QVERIFY(formulaImages(document).isEmpty());
    QCOMPARE(document->toPlainText(), QStringLiteral("It costs $5 and $10, or $3."));
  }

  void brokenFormulaStaysSourceText() {
    ChatView view;
    view.resize(600, 400);
    view.setMessages({assistantMessage(2, QStringLiteral("Broken $\\frac{1}{$ here."))});
    QTextDocument* document = replyText(view, 2)->document();
    QVERIFY(formulaImages(document).isEmpty());
    QCOMPARE(document->toPlainText(), QStringLiteral("Broken $\\frac{1}{$ here."));
    QTextCursor cursor = document->find(QStringLiteral("$\\frac{1}{$"));
    QVERIFY(!cursor.isNull());
    const QTextCharFormat format = cursor.charFormat();
    QVERIFY(format.fontFixedPitch());
    QVERIFY2(format.toolTip().contains(u"KaTeX parse error"), qPrintable(format.toolTip()));
  }

  void streamedFormulaRendersOnceComplete() {
    ChatView view;
    view.resize(600, 400);
    view.show();
    ChatMessageView reply = assistantMessage(9, {});
    reply.streaming = true;
    view.appendMessage(reply);

    view.appendToMessage(9, QStringLiteral("The area is $\\pi r"));
    view.flushPendingRenders();
    QTextDocument* document = replyText(view, 9)->document();
    QVERIFY(formulaImages(document).isEmpty());
    QCOMPARE(document->toPlainText(), QStringLiteral("The area is $\\pi r"));

    MathRenderer& renderer = MathRenderer::shared();
    const int runsBefore = renderer.katexRuns();
    view.appendToMessage(9, QStringLiteral("^2$"));
    view.flushPendingRenders();
    document = replyText(view, 9)->document();
    QList<FormulaImage> images = formulaImages(document);
    QCOMPARE(images.size(), 1);
    QCOMPARE(images[0].source, QStringLiteral("$\\pi r^2$"));
    QCOMPARE(renderer.katexRuns(), runsBefore + 1);
    const int layouts = renderer.layouts();

    // More text after it: the formula comes from the cache, the same image
    // at the same size.
    view.appendToMessage(9, QStringLiteral(" for a circle of radius $r$"));
    view.flushPendingRenders();
    view.appendToMessage(9, QStringLiteral(", and more."));
    view.flushPendingRenders();
    const QList<FormulaImage> after = formulaImages(replyText(view, 9)->document());
    QCOMPARE(after.size(), 2);
    QCOMPARE(after[0].name, images[0].name);
    QCOMPARE(after[0].size, images[0].size);
    QCOMPARE(renderer.katexRuns(), runsBefore + 2);
    QCOMPARE(renderer.layouts(), layouts + 1);
  }

  // A reply with formulas as people see it. Skipped unless
  // QUIRE_SCREENSHOT_DIR is set.
  void screenshot() {
    const QString dir = qEnvironmentVariable("QUIRE_SCREENSHOT_DIR");
    if (dir.isEmpty()) QSKIP("QUIRE_SCREENSHOT_DIR is not set");
    QVERIFY(QDir().mkpath(dir));
    ChatView view;
    view.resize(760, 520);
    view.setMessages(
        {userMessage(1, QStringLiteral("How do I solve ax² + bx + c = 0?")),
         assistantMessage(
             2,
             QStringLiteral(
                 "For $a \\neq 0$ the roots of $ax^2 + bx + c = 0$ are\n\n"
                 "$$x = \\frac{-b \\pm \\sqrt{b^2-4ac}}{2a}.$$\n\n"
                 "The **discriminant** $\\Delta = b^2 - 4ac$ decides how many there are: two "
                 "when $\\Delta > 0$, one when $\\Delta = 0$. Their sum is $-\\tfrac{b}{a}$ "
                 "and their product $\\frac{c}{a}$.\n\n"
                 "A rotation by $\\theta$ is \\[R = \\begin{pmatrix}\\cos\\theta & "
                 "-\\sin\\theta\\\\ \\sin\\theta & \\cos\\theta\\end{pmatrix}\\] "
                 "and a geometric series sums to "
                 "$\\sum_{k=0}^{\\infty} q^k = \\frac{1}{1-q}$ for $|q| < 1$."),
             QStringLiteral("142 tokens · 38.0 tok/s"))});
    view.show();
    QVERIFY(QTest::qWaitForWindowExposed(&view));
    QTest::qWait(100);
    QVERIFY(view.grab().save(QDir(dir).filePath(QStringLiteral("quire-math.png"))));
  }
};

QUIRE_TEST(ChatViewMathTest)

// Without KaTeX (libjs-katex not installed) formulas stay their source, and
// the reason is logged once. Runs in a process of its own, before anything
// there has loaded KaTeX.
class ChatViewWithoutKatexTest : public QObject {
  Q_OBJECT

 private slots:
  void initTestCase() {
    QVERIFY(dir_.isValid());
    qputenv("QUIRE_KATEX_JS", dir_.filePath(QStringLiteral("katex.min.js")).toLocal8Bit());
  }

  void formulasStaySourceText() {
    ChatView view;
    view.resize(600, 400);
    QTest::ignoreMessage(QtWarningMsg,
                         QRegularExpression(QStringLiteral("KaTeX is not installed.*libjs-katex")));
    view.setMessages({assistantMessage(2, QStringLiteral("So $x^2$ and $$y_1$$ stay."))});
    QTextDocument* document = replyText(view, 2)->document();
    QVERIFY(formulaImages(document).isEmpty());
    QCOMPARE(document->toPlainText(), QStringLiteral("So $x^2$ and $$y_1$$ stay."));
    const QTextCursor cursor = document->find(QStringLiteral("$x^2$"));
    QVERIFY(cursor.charFormat().fontFixedPitch());
    QVERIFY(cursor.charFormat().toolTip().contains(u"libjs-katex"));
    // One log line, not one per formula or per render.
    QTest::failOnWarning(QRegularExpression(QStringLiteral("KaTeX")));
    view.setMessages({assistantMessage(3, QStringLiteral("And $z$."))});
    QVERIFY(formulaImages(replyText(view, 3)->document()).isEmpty());
  }

 private:
  QTemporaryDir dir_;
};

QUIRE_TEST(ChatViewWithoutKatexTest)
#include "test_chat_view_math.moc"
