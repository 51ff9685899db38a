// Chats as the window offers them: moving between chats, the keys that act on
// the chat on show from anywhere in the window, and exporting and importing.

#include <QAction>
#include <QDir>
#include <QLineEdit>
#include <QListView>
#include <QPlainTextEdit>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QStatusBar>
#include <QTest>

#include "app_test_support.h"
#include "chat_controller.h"
#include "main_window.h"
#include "quire/ui/chat_list_roles.h"
#include "quire/ui/chat_list_widget.h"
#include "quire/ui/chat_view.h"
#include "quire/ui/input_box.h"
#include "test_main.h"

using namespace quire;
using namespace quire::test;

namespace {

QListView* listView(gui::MainWindow& window) {
  return window.chatList()->findChild<QListView*>(QStringLiteral("chatListView"));
}

QModelIndex rowOf(gui::MainWindow& window, store::ChatId chat) {
  const QAbstractItemModel* model = listView(window)->model();
  for (int row = 0; row < model->rowCount(); ++row) {
    const QModelIndex index = model->index(row, 0);
    if (index.data(ui::ChatIdRole).toLongLong() == store::raw(chat)) return index;
  }
  return {};
}

void clickChat(gui::MainWindow& window, store::ChatId chat) {
  QListView* view = listView(window);
  QTest::mouseClick(view->viewport(), Qt::LeftButton, {},
                    view->visualRect(rowOf(window, chat)).center());
}

QPlainTextEdit* messageBox(gui::MainWindow& window) {
  return window.input()->findChild<QPlainTextEdit*>(QStringLiteral("messageInput"));
}

// Two stored chats and the window, shown and active, with no model.
struct TwoChats {
  AppRun run{QString()};
  store::ChatId first{};
  store::ChatId second{};

  bool open() {
    run.start();
    const auto a = run.app->store().create_chat(QStringLiteral("First chat"));
    const auto b = run.app->store().create_chat(QStringLiteral("Second chat"));
    if (!a || !b) return false;
    first = *a;
    second = *b;
    run.app->show();
    run.app->window().activateWindow();
    return QTest::qWaitForWindowActive(&run.app->window());
  }
};

}  // namespace

class ChatWindowTest : public QObject {
  Q_OBJECT

 private slots:
  void selectionFollowsTheChatOnShow() {
    TwoChats chats;
    QVERIFY(chats.open());
    gui::MainWindow& window = chats.run.app->window();
    QListView* view = listView(window);

    clickChat(window, chats.first);
    QCOMPARE(chats.run.app->chats().currentChat(), chats.first);
    QCOMPARE(view->currentIndex(), rowOf(window, chats.first));

    // A new chat is not in the list yet: nothing may look selected.
    window.chatList()->newChatAction()->trigger();
    QCOMPARE(chats.run.app->chats().currentChat(), std::nullopt);
    QVERIFY(!view->selectionModel()->hasSelection());
    QCOMPARE(window.chatList()->currentChatId(), std::nullopt);

    // The chat shown before is one click away.
    clickChat(window, chats.first);
    QCOMPARE(chats.run.app->chats().currentChat(), chats.first);
    QVERIFY(view->selectionModel()->isSelected(rowOf(window, chats.first)));
    clickChat(window, chats.second);
    QCOMPARE(chats.run.app->chats().currentChat(), chats.second);
    QVERIFY(view->selectionModel()->isSelected(rowOf(window, chats.second)));
    QVERIFY(!view->selectionModel()->isSelected(rowOf(window, chats.first)));
  }

  void chatKeysWorkFromTheMessageBox() {
    TwoChats chats;
    QVERIFY(chats.open());
    gui::MainWindow& window = chats.run.app->window();
    QPlainTextEdit* box = messageBox(window);

    clickChat(window, chats.first);
    box->setFocus();
    QTRY_VERIFY(box->hasFocus());

    // Ctrl+N: a new chat, the cursor stays in the box.
    QTest::keyClick(box, Qt::Key_N, Qt::ControlModifier);
    QCOMPARE(chats.run.app->chats().currentChat(), std::nullopt);
    QVERIFY(box->hasFocus());

    // F2 renames the chat on show.
    clickChat(window, chats.second);
    box->setFocus();
    QTRY_VERIFY(box->hasFocus());
    QTest::keyClick(box, Qt::Key_F2);
    auto* editor = window.chatList()->findChild<QLineEdit*>(QStringLiteral("renameEditor"));
    QVERIFY(editor);
    QTRY_VERIFY(editor->isVisible());
    QCOMPARE(editor->text(), QStringLiteral("Second chat"));
    QTest::keyClick(editor, Qt::Key_Escape);

    // Del edits what is typed; only in an empty box does it delete the chat.
    box->setFocus();
    QTRY_VERIFY(box->hasFocus());
    QTest::keyClicks(box, QStringLiteral("ab"));
    QTest::keyClick(box, Qt::Key_Home);
    QTest::keyClick(box, Qt::Key_Delete);
    QCOMPARE(box->toPlainText(), QStringLiteral("b"));
    QTest::keyClick(box, Qt::Key_Delete);
    QCOMPARE(box->toPlainText(), QString());
    QVERIFY(!chats.run.app->store().chat(chats.second)->deleted);
    QTest::keyClick(box, Qt::Key_Delete);
    QVERIFY(chats.run.app->store().chat(chats.second)->deleted);
    QVERIFY(window.chatList()->isUndoVisible());
  }

  void exportSuggestsTheTitleAndConfirmsInTheStatusLine() {
    TwoChats chats;
    QVERIFY(chats.open());
    gui::MainWindow& window = chats.run.app->window();
    QVERIFY(chats.run.app->store().rename_chat(chats.first, QStringLiteral("Plans: 2024/25?")));
    clickChat(window, chats.first);

    QTemporaryDir target;
    QStringList starts;
    chats.run.choose_file = [&](const QString&, const QString& start, const QString&, bool save) {
      starts << start;
      return save ? target.filePath(QFileInfo(start).fileName()) : QString();
    };
    const QString documents = QStandardPaths::writableLocation(QStandardPaths::DocumentsLocation);

    window.exportJsonAction()->trigger();
    QCOMPARE(starts.size(), 1);
    QCOMPARE(starts[0], QDir(documents).filePath(QStringLiteral("Plans 2024-25.json")));
    const QString json = target.filePath(QStringLiteral("Plans 2024-25.json"));
    QVERIFY(QFileInfo::exists(json));
    QCOMPARE(
        window.statusBar()->currentMessage(),
        QStringLiteral("Exported “Plans: 2024/25?” to %1").arg(QDir::toNativeSeparators(json)));

    window.exportMarkdownAction()->trigger();
    QCOMPARE(starts.size(), 2);
    QCOMPARE(starts[1], QDir(documents).filePath(QStringLiteral("Plans 2024-25.md")));
    QVERIFY(QFileInfo::exists(target.filePath(QStringLiteral("Plans 2024-25.md"))));

    // A name typed without its extension gets the format's.
    chats.run.choose_file = [&](const QString&, const QString&, const QString&, bool) {
      return target.filePath(QStringLiteral("notes"));
    };
    window.exportMarkdownAction()->trigger();
    QVERIFY(QFileInfo::exists(target.filePath(QStringLiteral("notes.md"))));

    // Imported twice next to the original: each copy has a title of its own.
    chats.run.choose_file = [&](const QString&, const QString&, const QString&, bool) {
      return json;
    };
    window.importAction()->trigger();
    const auto imported = chats.run.app->chats().currentChat();
    QVERIFY(imported && *imported != chats.first);
    QCOMPARE(chats.run.app->store().chat(*imported)->title,
             QStringLiteral("Plans: 2024/25? (imported)"));
    window.importAction()->trigger();
    QCOMPARE(chats.run.app->store().chat(*chats.run.app->chats().currentChat())->title,
             QStringLiteral("Plans: 2024/25? (imported 2)"));
  }
};

QUIRE_TEST(ChatWindowTest)
#include "test_chat_window.moc"
