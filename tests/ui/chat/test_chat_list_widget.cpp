#include <QAbstractItemModelTester>
#include <QAction>
#include <QApplication>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QListView>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QSignalSpy>
#include <QStandardItem>
#include <QStandardItemModel>
#include <QStyleOptionViewItem>
#include <QTest>
#include <QToolButton>
#include <memory>

#include "chat_list_delegate.h"
#include "quire/ui/chat_list_widget.h"
#include "test_main.h"
#include "title_elide.h"

using namespace quire::ui;

namespace {

const QDateTime kNow(QDate(2024, 5, 17), QTime(15, 30));

// The app's model as the store would fill it; rows in insertion order, which
// is not the order of activity.
std::unique_ptr<QStandardItemModel> makeModel() {
  auto model = std::make_unique<QStandardItemModel>();
  const struct {
    qint64 id;
    const char* title;
    int minutesAgo;
  } chats[] = {
      {11, "Rust lifetimes explained", 60 * 24 * 3},
      {12, "Dinner ideas for six", 5},
      {13, "Trip to Lisbon", 60 * 24 * 40},
      {14, "Rust async runtimes", 90},
      {15, "CV cover letter", 60 * 24},
  };
  for (const auto& chat : chats) {
    auto* item = new QStandardItem(QString::fromUtf8(chat.title));
    item->setData(chat.id, ChatIdRole);
    item->setData(kNow.addSecs(-60LL * chat.minutesAgo), ChatLastActivityRole);
    model->appendRow(item);
  }
  return model;
}

QListView* listOf(ChatListWidget& widget) {
  return widget.findChild<QListView*>(QStringLiteral("chatListView"));
}

QList<qint64> shownIds(const ChatListWidget& widget) {
  QList<qint64> ids;
  const QAbstractItemModel* model = widget.viewModel();
  for (int row = 0; row < model->rowCount(); ++row)
    ids.push_back(model->index(row, 0).data(ChatIdRole).toLongLong());
  return ids;
}

QModelIndex rowOf(const ChatListWidget& widget, qint64 id) {
  const QAbstractItemModel* model = widget.viewModel();
  for (int row = 0; row < model->rowCount(); ++row) {
    if (model->index(row, 0).data(ChatIdRole).toLongLong() == id) return model->index(row, 0);
  }
  return {};
}

void clickChat(ChatListWidget& widget, qint64 id) {
  QListView* view = listOf(widget);
  QTest::mouseClick(view->viewport(), Qt::LeftButton, {},
                    view->visualRect(rowOf(widget, id)).center());
}

}  // namespace

class ChatListWidgetTest : public QObject {
  Q_OBJECT

 private slots:
  void initTestCase() { QLocale::setDefault(QLocale(QLocale::English, QLocale::UnitedStates)); }

  void listsNewestFirst() {
    auto model = makeModel();
    ChatListWidget widget;
    widget.setModel(model.get());
    QAbstractItemModelTester tester(widget.viewModel(),
                                    QAbstractItemModelTester::FailureReportingMode::QtTest);
    QCOMPARE(shownIds(widget), (QList<qint64>{12, 14, 15, 11, 13}));
    // Activity in an old chat moves it to the top.
    model->item(2)->setData(kNow, ChatLastActivityRole);
    QCOMPARE(shownIds(widget).first(), 13);
  }

  void selectingEmitsTheChatId() {
    auto model = makeModel();
    ChatListWidget widget;
    widget.setModel(model.get());
    widget.resize(280, 500);
    widget.show();
    QVERIFY(QTest::qWaitForWindowExposed(&widget));
    QSignalSpy selected(&widget, &ChatListWidget::chatSelected);
    clickChat(widget, 15);
    QCOMPARE(selected.count(), 1);
    QCOMPARE(selected[0][0].toLongLong(), 15);
    QTest::keyClick(listOf(widget), Qt::Key_Down);
    QCOMPARE(selected.count(), 2);
    QCOMPARE(selected[1][0].toLongLong(), 11);
    QCOMPARE(widget.currentChatId(), std::optional<qint64>(11));

    // The app choosing a chat selects it quietly.
    widget.setCurrentChat(12);
    QCOMPARE(selected.count(), 2);
    QCOMPARE(listOf(widget)->currentIndex().data(ChatIdRole).toLongLong(), 12);
  }

  void clearingTheCurrentChatLetsAnyChatBeOpened() {
    auto model = makeModel();
    ChatListWidget widget;
    widget.setModel(model.get());
    widget.resize(280, 500);
    widget.show();
    QVERIFY(QTest::qWaitForWindowExposed(&widget));
    QSignalSpy selected(&widget, &ChatListWidget::chatSelected);
    widget.setCurrentChat(14);
    widget.clearCurrentChat();
    QCOMPARE(widget.currentChatId(), std::nullopt);
    QVERIFY(!listOf(widget)->selectionModel()->hasSelection());
    QCOMPARE(selected.count(), 0);
    // The chat shown before opens with one click.
    clickChat(widget, 14);
    QCOMPARE(selected.count(), 1);
    QCOMPARE(selected[0][0].toLongLong(), 14);
    QVERIFY(listOf(widget)->selectionModel()->isSelected(rowOf(widget, 14)));
    // Clicking the chat on show again opens nothing.
    clickChat(widget, 14);
    QCOMPARE(selected.count(), 1);
  }

  // The app's window stops a running reply with Esc (a window-wide shortcut);
  // Esc in the rename editor still cancels the rename and stops nothing.
  void escapeCancelsARenameBeforeTheWindowsShortcut() {
    auto model = makeModel();
    QWidget window;
    auto* layout = new QHBoxLayout(&window);
    auto* widget = new ChatListWidget;
    layout->addWidget(widget);
    widget->setModel(model.get());
    auto* stopReply = new QAction(&window);
    stopReply->setShortcut(QKeySequence(Qt::Key_Escape));
    stopReply->setShortcutContext(Qt::WindowShortcut);
    window.addAction(stopReply);
    QSignalSpy stops(stopReply, &QAction::triggered);
    window.resize(600, 500);
    window.show();
    window.activateWindow();
    QVERIFY(QTest::qWaitForWindowActive(&window));
    widget->setCurrentChat(14);
    QSignalSpy renames(widget, &ChatListWidget::renameRequested);

    widget->renameAction()->trigger();
    auto* editor = widget->findChild<QLineEdit*>(QStringLiteral("renameEditor"));
    QVERIFY(editor);
    QTRY_VERIFY(editor->isVisible());
    QTRY_VERIFY(editor->hasFocus());
    editor->setText(QStringLiteral("Not this"));
    QTest::keyClick(editor, Qt::Key_Escape);
    QTRY_VERIFY(!editor->isVisible());
    QCOMPARE(renames.count(), 0);
    QCOMPARE(stops.count(), 0);
  }

  void keysActFromAnywhereInTheWindow() {
    auto model = makeModel();
    QWidget window;
    auto* layout = new QHBoxLayout(&window);
    auto* widget = new ChatListWidget;
    auto* elsewhere = new QPlainTextEdit;
    layout->addWidget(widget);
    layout->addWidget(elsewhere);
    widget->setModel(model.get());
    window.resize(600, 500);
    window.show();
    window.activateWindow();
    QVERIFY(QTest::qWaitForWindowActive(&window));
    widget->setCurrentChat(14);
    QSignalSpy created(widget, &ChatListWidget::newChatRequested);
    QSignalSpy deletes(widget, &ChatListWidget::deleteRequested);

    elsewhere->setFocus();
    QTest::keyClick(elsewhere, Qt::Key_N, Qt::ControlModifier);
    QCOMPARE(created.count(), 1);
    QTest::keyClick(elsewhere, Qt::Key_F2);
    auto* editor = widget->findChild<QLineEdit*>(QStringLiteral("renameEditor"));
    QVERIFY(editor);
    QTRY_VERIFY(editor->isVisible());
    QCOMPARE(editor->text(), QStringLiteral("Rust async runtimes"));
    QTest::keyClick(editor, Qt::Key_Escape);

    // A text editor keeps Delete for its text, even when empty.
    elsewhere->setFocus();
    QTest::keyClick(elsewhere, Qt::Key_Delete);
    QCOMPARE(deletes.count(), 0);
    // Anywhere else it deletes the current chat.
    auto* button = widget->findChild<QPushButton*>(QStringLiteral("newChatButton"));
    button->setFocus();
    QTest::keyClick(button, Qt::Key_Delete);
    QCOMPARE(deletes.count(), 1);
    QCOMPARE(deletes[0][0].toLongLong(), 14);
  }

  void searchFiltersTitlesAndAsksTheApp() {
    auto model = makeModel();
    ChatListWidget widget;
    widget.setModel(model.get());
    widget.resize(280, 500);
    widget.show();
    QAbstractItemModelTester tester(widget.viewModel(),
                                    QAbstractItemModelTester::FailureReportingMode::QtTest);
    QSignalSpy searches(&widget, &ChatListWidget::searchChanged);
    QSignalSpy selected(&widget, &ChatListWidget::chatSelected);
    clickChat(widget, 12);
    QCOMPARE(selected.count(), 1);

    auto* search = widget.findChild<QLineEdit*>(QStringLiteral("chatSearch"));
    QTest::keyClicks(search, QStringLiteral("rust"));
    QCOMPARE(shownIds(widget), (QList<qint64>{14, 11}));
    QVERIFY(searches.wait());
    QCOMPARE(searches.count(), 1);  // once, after typing stopped
    QCOMPARE(searches.last()[0].toString(), QStringLiteral("rust"));

    // The app found "rust" in the messages of the Lisbon chat.
    widget.setTextMatches(QStringLiteral("rus"), {15});  // a late answer to an older text
    QCOMPARE(shownIds(widget), (QList<qint64>{14, 11}));
    widget.setTextMatches(QStringLiteral("rust"), {13});
    QCOMPARE(shownIds(widget), (QList<qint64>{14, 11, 13}));

    widget.setSearchText(QStringLiteral("zebra"));
    QVERIFY(shownIds(widget).isEmpty());
    auto* empty = widget.findChild<QLabel*>(QStringLiteral("emptyListLabel"));
    QVERIFY(empty->isVisible());
    QVERIFY(empty->text().contains(QStringLiteral("zebra")));

    // Filtering never switched chats, and clearing it shows the open one again.
    widget.setSearchText({});
    QCOMPARE(shownIds(widget).size(), 5);
    QVERIFY(!empty->isVisible());
    QCOMPARE(selected.count(), 1);
    QCOMPARE(listOf(widget)->currentIndex().data(ChatIdRole).toLongLong(), 12);
    QVERIFY(searches.wait());
    QCOMPARE(searches.last()[0].toString(), QString());
  }

  void renamesInPlace() {
    // A read-only model with only the roles the widget needs.
    auto model = makeModel();
    for (int row = 0; row < model->rowCount(); ++row)
      model->item(row)->setEditable(false);
    ChatListWidget widget;
    widget.setModel(model.get());
    widget.resize(280, 500);
    widget.show();
    widget.activateWindow();
    QVERIFY(QTest::qWaitForWindowActive(&widget));
    QSignalSpy renames(&widget, &ChatListWidget::renameRequested);
    clickChat(widget, 14);
    QTest::keyClick(listOf(widget), Qt::Key_F2);
    auto* editor = widget.findChild<QLineEdit*>(QStringLiteral("renameEditor"));
    QVERIFY(editor);
    QTRY_VERIFY(editor->isVisible());
    QCOMPARE(editor->text(), QStringLiteral("Rust async runtimes"));
    editor->selectAll();
    QTest::keyClicks(editor, QStringLiteral("  Tokio or smol  "));
    QTest::keyClick(editor, Qt::Key_Return);
    QTRY_COMPARE(renames.count(), 1);
    QCOMPARE(renames[0][0].toLongLong(), 14);
    QCOMPARE(renames[0][1].toString(), QStringLiteral("Tokio or smol"));
    // The model is the app's: nothing was written into it.
    QCOMPARE(model->item(3)->text(), QStringLiteral("Rust async runtimes"));

    // An unchanged or empty title is no rename.
    widget.renameCurrent();
    QTRY_VERIFY(qobject_cast<QLineEdit*>(QApplication::focusWidget()));
    QTest::keyClick(QApplication::focusWidget(), Qt::Key_Return);
    QTest::qWait(20);
    QCOMPARE(renames.count(), 1);
    widget.renameCurrent();
    QTRY_VERIFY(qobject_cast<QLineEdit*>(QApplication::focusWidget()));
    QTest::keyClick(QApplication::focusWidget(), Qt::Key_Backspace);
    QTest::keyClick(QApplication::focusWidget(), Qt::Key_Return);
    QTest::qWait(20);
    QCOMPARE(renames.count(), 1);

    // Closing the widget with the editor open commits nothing into freed memory.
    widget.renameCurrent();
    QTRY_VERIFY(qobject_cast<QLineEdit*>(QApplication::focusWidget()));
  }

  // A long title in a narrow sidebar: the undo bar shortens it inside its
  // quotes instead of clipping the message at the bar's edge.
  void theUndoBarFitsALongTitle() {
    auto model = makeModel();
    model->item(4)->setText(QStringLiteral("Caches explained: pages, hashes and the prefix index"));
    ChatListWidget widget;
    widget.setModel(model.get());
    widget.resize(240, 500);
    widget.show();
    QVERIFY(QTest::qWaitForWindowExposed(&widget));
    clickChat(widget, 15);
    widget.deleteCurrent();
    QVERIFY(widget.isUndoVisible());
    auto* undoLabel = widget.findChild<QLabel*>(QStringLiteral("undoLabel"));
    QTRY_VERIFY2(undoLabel->fontMetrics().horizontalAdvance(undoLabel->text()) <=
                     undoLabel->contentsRect().width(),
                 qPrintable(undoLabel->text()));
    // The bar, its Undo button included, stays inside the 240-pixel sidebar.
    QCOMPARE(widget.width(), 240);
    auto* undoButton = widget.findChild<QToolButton*>(QStringLiteral("undoButton"));
    QVERIFY(undoButton->isVisible());
    QVERIFY(undoButton->mapTo(&widget, QPoint(undoButton->width(), 0)).x() <= widget.width());
    QVERIFY(undoLabel->text().startsWith(QStringLiteral("Deleted “Caches")));
    QVERIFY(undoLabel->text().endsWith(QStringLiteral("…”")));
    QCOMPARE(undoLabel->toolTip(),
             QStringLiteral("Deleted “Caches explained: pages, hashes and the prefix index”"));
  }

  void deletesWithUndo() {
    auto model = makeModel();
    ChatListWidget widget;
    widget.setModel(model.get());
    widget.resize(280, 500);
    widget.show();
    widget.activateWindow();
    QVERIFY(QTest::qWaitForWindowActive(&widget));
    QSignalSpy deletes(&widget, &ChatListWidget::deleteRequested);
    QSignalSpy undos(&widget, &ChatListWidget::undoDeleteRequested);
    QSignalSpy commits(&widget, &ChatListWidget::deleteCommitted);
    clickChat(widget, 15);
    QVERIFY(!widget.isUndoVisible());
    QTest::keyClick(listOf(widget), Qt::Key_Delete);
    QCOMPARE(deletes.count(), 1);
    QCOMPARE(deletes[0][0].toLongLong(), 15);
    QVERIFY(widget.isUndoVisible());
    auto* undoLabel = widget.findChild<QLabel*>(QStringLiteral("undoLabel"));
    QVERIFY(undoLabel->text().contains(QStringLiteral("CV cover letter")));
    // The whole message fits the bar: a title too long is shortened inside
    // its quotes, never cut off at the bar's edge.
    QTRY_VERIFY(undoLabel->fontMetrics().horizontalAdvance(undoLabel->text()) <=
                undoLabel->contentsRect().width());
    QVERIFY(undoLabel->text().endsWith(QStringLiteral("”")));
    QVERIFY(undoLabel->toolTip().contains(QStringLiteral("CV cover letter")));
    QTest::mouseClick(widget.findChild<QToolButton*>(QStringLiteral("undoButton")), Qt::LeftButton);
    QCOMPARE(undos.count(), 1);
    QCOMPARE(undos[0][0].toLongLong(), 15);
    QVERIFY(!widget.isUndoVisible());
    QCOMPARE(commits.count(), 0);

    // A second deletion makes the first final; the bar closes by itself.
    widget.setUndoTimeout(150);
    widget.deleteCurrent();
    clickChat(widget, 13);
    widget.deleteCurrent();
    QCOMPARE(commits.count(), 1);
    QCOMPARE(commits[0][0].toLongLong(), 15);
    QVERIFY(widget.isUndoVisible());
    QVERIFY(commits.wait(2000));
    QCOMPARE(commits[1][0].toLongLong(), 13);
    QVERIFY(!widget.isUndoVisible());
    QCOMPARE(undos.count(), 1);
  }

  void newChatFromButtonAndShortcut() {
    auto model = makeModel();
    ChatListWidget widget;
    widget.setModel(model.get());
    widget.show();
    widget.activateWindow();
    QVERIFY(QTest::qWaitForWindowActive(&widget));
    QSignalSpy created(&widget, &ChatListWidget::newChatRequested);
    QTest::mouseClick(widget.findChild<QPushButton*>(QStringLiteral("newChatButton")),
                      Qt::LeftButton);
    QCOMPARE(created.count(), 1);
    auto* search = widget.findChild<QLineEdit*>(QStringLiteral("chatSearch"));
    search->setFocus();
    QTest::keyClick(search, Qt::Key_N, Qt::ControlModifier);
    QCOMPARE(created.count(), 2);
    listOf(widget)->setFocus();
    QTest::keyClick(listOf(widget), Qt::Key_N, Qt::ControlModifier);
    QCOMPARE(created.count(), 3);
    // Delete in the search field edits the text, it deletes no chat.
    QSignalSpy deletes(&widget, &ChatListWidget::deleteRequested);
    clickChat(widget, 12);
    search->setFocus();
    search->setText(QStringLiteral("ab"));
    search->setCursorPosition(0);
    QTest::keyClick(search, Qt::Key_Delete);
    QCOMPARE(search->text(), QStringLiteral("b"));
    QCOMPARE(deletes.count(), 0);
  }

  // A branch or an imported copy keeps its note in a narrow list: the base
  // gives way, so it never reads as a duplicate of the chat it came from.
  void aTitlesClosingNoteStaysWhole() {
    const QFontMetrics metrics(QApplication::font());
    const QString base = QStringLiteral("Planning the garden for next spring and summer");
    const QString branch = base + QStringLiteral(" (branch)");
    const int width = metrics.horizontalAdvance(QStringLiteral("Planning the gar (branch)"));
    const QString shown = elide_title(metrics, branch, width);
    QVERIFY2(shown.endsWith(QStringLiteral("\u2026 (branch)")), qPrintable(shown));
    QVERIFY(metrics.horizontalAdvance(shown) <= width);
    QVERIFY(shown.startsWith(QStringLiteral("Plan")));
    const QString imported = elide_title(metrics, base + QStringLiteral(" (imported 2)"), width);
    QVERIFY2(imported.endsWith(QStringLiteral("\u2026 (imported 2)")), qPrintable(imported));
    // A title that fits is left alone; one without a note is cut at the right.
    QCOMPARE(elide_title(metrics, QStringLiteral("Short (branch)"), width),
             QStringLiteral("Short (branch)"));
    QVERIFY(elide_title(metrics, base, width).endsWith(QChar(0x2026)));
    // No room for the note beside an ellipsis: the middle goes.
    const int tiny = metrics.horizontalAdvance(QStringLiteral("Plan (bra"));
    const QString middle = elide_title(metrics, branch, tiny);
    QVERIFY(metrics.horizontalAdvance(middle) <= tiny);
    QVERIFY2(middle.contains(QChar(0x2026)) && !middle.endsWith(QChar(0x2026)), qPrintable(middle));

    // The list draws what elide_title gives for its rows' width.
    auto model = std::make_unique<QStandardItemModel>();
    auto* item = new QStandardItem(branch);
    item->setData(qint64{1}, ChatIdRole);
    item->setData(kNow, ChatLastActivityRole);
    model->appendRow(item);
    ChatListWidget widget;
    widget.setModel(model.get());
    widget.resize(200, 400);
    widget.show();
    auto* view = widget.findChild<QListView*>(QStringLiteral("chatListView"));
    QVERIFY(view);
    auto* delegate = qobject_cast<ChatListDelegate*>(view->itemDelegate());
    QVERIFY(delegate);
    const QModelIndex index = view->model()->index(0, 0);
    QStyleOptionViewItem option;
    option.initFrom(view);
    option.rect = view->visualRect(index);
    const QString drawn = delegate->shownTitle(option, index);
    QVERIFY2(drawn.endsWith(QStringLiteral("\u2026 (branch)")), qPrintable(drawn));
  }

  void formatsLastActivity_data() {
    QTest::addColumn<QDateTime>("when");
    QTest::addColumn<QString>("expected");
    QTest::newRow("seconds") << kNow.addSecs(-20) << QStringLiteral("just now");
    QTest::newRow("minutes") << kNow.addSecs(-5 * 60) << QStringLiteral("5 min ago");
    QTest::newRow("today") << QDateTime(kNow.date(), QTime(9, 5)) << QStringLiteral("9:05 AM");
    QTest::newRow("yesterday") << kNow.addDays(-1) << QStringLiteral("Yesterday");
    QTest::newRow("this week") << kNow.addDays(-3) << QStringLiteral("Tuesday");
    QTest::newRow("this year") << kNow.addDays(-40) << QStringLiteral("7 Apr");
    QTest::newRow("older") << kNow.addYears(-2) << QStringLiteral("17 May 2022");
    QTest::newRow("unknown") << QDateTime() << QString();
  }

  void formatsLastActivity() {
    QFETCH(QDateTime, when);
    QFETCH(QString, expected);
    QCOMPARE(formatLastActivity(when, kNow), expected);
  }
};

QUIRE_TEST(ChatListWidgetTest)
#include "test_chat_list_widget.moc"
