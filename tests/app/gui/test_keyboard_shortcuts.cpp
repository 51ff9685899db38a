// Keyboard shortcuts through the whole program: Help → Keyboard shortcuts
// lists every one, with the keys in full, and the keys for the common
// actions do what the list says wherever focus is in the window.

#include <QAction>
#include <QApplication>
#include <QClipboard>
#include <QDialog>
#include <QHeaderView>
#include <QLineEdit>
#include <QMenu>
#include <QPlainTextEdit>
#include <QSignalSpy>
#include <QTableWidget>
#include <QTest>

#include "app_test_support.h"
#include "chat_controller.h"
#include "engine_host.h"
#include "help_menu.h"
#include "main_window.h"
#include "quire/ui/chat_list_widget.h"
#include "quire/ui/chat_view.h"
#include "quire/ui/input_box.h"
#include "test_main.h"

using namespace quire;
using namespace quire::test;

namespace {

QString shortcut_text(const QKeySequence& keys) {
  return keys.toString(QKeySequence::NativeText);
}

// Presses `keys` where focus is now, as a user would.
void press_keys(QKeyCombination keys) {
  QWidget* target = QApplication::focusWidget();
  QVERIFY(target != nullptr);
  QTest::keyClick(target, keys.key(), keys.keyboardModifiers());
}

void show_active(gui::MainWindow& window) {
  window.show();
  window.activateWindow();
  QVERIFY(QTest::qWaitForWindowActive(&window));
}

}  // namespace

class KeyboardShortcutsTest : public QObject {
  Q_OBJECT

 private slots:
  // The whole list, as the README gives it: the window's actions by name,
  // then the keys the message box reads itself.
  void theListHasEveryShortcut() {
    AppRun run{QString()};
    run.start();
    QList<gui::ShortcutRow> actions{
        {QStringLiteral("New chat"), shortcut_text(QKeySequence::New)},
        {QStringLiteral("Search chats"), shortcut_text(QKeySequence::Find)},
        {QStringLiteral("Import chat"), shortcut_text(QKeySequence(Qt::CTRL | Qt::Key_I))},
        {QStringLiteral("Export chat as Markdown"),
         shortcut_text(QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_S))},
        {QStringLiteral("Quit"), shortcut_text(QKeySequence(Qt::CTRL | Qt::Key_Q))},
        {QStringLiteral("Rename chat"), shortcut_text(QKeySequence(Qt::Key_F2))},
        {QStringLiteral("Delete chat"), shortcut_text(QKeySequence::Delete)},
        {QStringLiteral("Stop reply"), shortcut_text(QKeySequence(Qt::Key_Escape))},
        {QStringLiteral("Regenerate reply"), shortcut_text(QKeySequence(Qt::CTRL | Qt::Key_R))},
        {QStringLiteral("Edit last message"),
         shortcut_text(QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_E))},
        {QStringLiteral("Copy last reply"),
         shortcut_text(QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_C))},
        {QStringLiteral("Write a message"), shortcut_text(QKeySequence(Qt::CTRL | Qt::Key_L))},
        {QStringLiteral("Attach an image"),
         shortcut_text(QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_A))},
        {QStringLiteral("Chat settings"),
         shortcut_text(QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_P))},
        {QStringLiteral("Open a model folder"), shortcut_text(QKeySequence::Open)},
        {QStringLiteral("Get models"),
         shortcut_text(QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_G))},
        {QStringLiteral("Settings"), shortcut_text(QKeySequence(Qt::CTRL | Qt::Key_Comma))},
        {QStringLiteral("Memory panel"), shortcut_text(QKeySequence(Qt::CTRL | Qt::Key_M))},
        {QStringLiteral("Keyboard shortcuts"),
         shortcut_text(QKeySequence(Qt::CTRL | Qt::Key_Slash))},
    };
    std::sort(actions.begin(), actions.end(), [](const auto& a, const auto& b) {
      return a.action.localeAwareCompare(b.action) < 0;
    });
    const QString enter = shortcut_text(QKeySequence(Qt::Key_Enter));
    const QString ctrlEnter = shortcut_text(QKeySequence(Qt::CTRL | Qt::Key_Enter));
    const QString sendKeys = QStringLiteral("%1 or %2").arg(enter, ctrlEnter);
    QList<gui::ShortcutRow> expected = actions;
    expected << gui::ShortcutRow{QStringLiteral("Send the message"), sendKeys}
             << gui::ShortcutRow{QStringLiteral("New line in the message"),
                                 shortcut_text(QKeySequence(Qt::SHIFT | Qt::Key_Enter))}
             << gui::ShortcutRow{QStringLiteral("Send an edited message again"), sendKeys}
             << gui::ShortcutRow{QStringLiteral("Cancel editing a message"),
                                 shortcut_text(QKeySequence(Qt::Key_Escape))};
    const QList<gui::ShortcutRow> rows = gui::shortcut_rows(run.app->window());
    for (qsizetype i = 0; i < std::max(rows.size(), expected.size()); ++i) {
      const gui::ShortcutRow got = i < rows.size() ? rows[i] : gui::ShortcutRow{};
      const gui::ShortcutRow want = i < expected.size() ? expected[i] : gui::ShortcutRow{};
      QCOMPARE(got.action + QStringLiteral(": ") + got.keys,
               want.action + QStringLiteral(": ") + want.keys);
    }
  }

  // Ctrl+/ opens the list; every key is shown whole, without a scroll bar
  // across the table.
  void theKeysColumnShowsEveryKeyWhole() {
    AppRun run{QString()};
    run.start();
    gui::MainWindow& window = run.app->window();
    show_active(window);
    press_keys(Qt::CTRL | Qt::Key_Slash);
    auto* dialog = window.findChild<QDialog*>(QStringLiteral("shortcutsDialog"));
    QVERIFY(dialog);
    QTRY_VERIFY(dialog->isVisible());
    auto* table = dialog->findChild<QTableWidget*>(QStringLiteral("shortcutsTable"));
    QVERIFY(table);
    QCOMPARE(table->rowCount(), gui::shortcut_rows(window).size());
    const QFontMetrics metrics = table->fontMetrics();
    for (int row = 0; row < table->rowCount(); ++row) {
      for (int column = 0; column < 2; ++column) {
        const QString text = table->item(row, column)->text();
        QVERIFY2(
            table->columnWidth(column) >= metrics.horizontalAdvance(text),
            qPrintable(QStringLiteral("%1 in %2 px").arg(text).arg(table->columnWidth(column))));
      }
    }
    QVERIFY2(table->horizontalHeader()->length() <= table->viewport()->width(),
             qPrintable(QStringLiteral("%1 px of columns in %2 px")
                            .arg(table->horizontalHeader()->length())
                            .arg(table->viewport()->width())));
  }

  // The conversation's keys act on its last messages, with focus anywhere.
  void theConversationKeysActOnTheLastMessages() {
    AppRun run(random_model(), 6);
    run.start();
    QVERIFY(run.waitForModel());
    gui::MainWindow& window = run.app->window();
    show_active(window);
    ui::ChatView& view = *window.chatView();
    QVERIFY(!view.regenerateAction()->isEnabled());
    QVERIFY(!view.editLastAction()->isEnabled());
    QVERIFY(!view.copyLastReplyAction()->isEnabled());
    QVERIFY(run.send(QStringLiteral("Hello there.")));
    const std::optional<store::ChatId> chat = run.app->chats().currentChat();
    QVERIFY(chat);
    const QList<store::Message> path = run.app->store().current_path(*chat);
    QCOMPARE(path.size(), 2);
    const std::optional<ui::ChatMessageView> reply = view.message(store::raw(path[1].id));
    QVERIFY(reply && !reply->text.isEmpty());

    // Ctrl+F: the chats' search field, its text selected.
    window.chatList()->setSearchText(QStringLiteral("old"));
    window.input()->focusInput();
    press_keys(Qt::CTRL | Qt::Key_F);
    auto* search = window.chatList()->findChild<QLineEdit*>(QStringLiteral("chatSearch"));
    QCOMPARE(QApplication::focusWidget(), search);
    QCOMPARE(search->selectedText(), QStringLiteral("old"));
    window.chatList()->setSearchText(QString());

    // Ctrl+Shift+C from the search field: the reply's text.
    QGuiApplication::clipboard()->clear();
    press_keys(Qt::CTRL | Qt::SHIFT | Qt::Key_C);
    QCOMPARE(QGuiApplication::clipboard()->text(), reply->text);

    // Ctrl+L: back to the message box.
    press_keys(Qt::CTRL | Qt::Key_L);
    QCOMPARE(QApplication::focusWidget(),
             window.input()->findChild<QPlainTextEdit*>(QStringLiteral("messageInput")));

    // Ctrl+R: a second version of the reply.
    QSignalSpy finished(&run.app->chats(), &gui::ChatController::replyFinished);
    press_keys(Qt::CTRL | Qt::Key_R);
    QVERIFY(finished.wait(120'000));
    const QList<store::Message> regenerated = run.app->store().current_path(*chat);
    QCOMPARE(regenerated.size(), 2);
    QCOMPARE(regenerated[0].id, path[0].id);
    QVERIFY(regenerated[1].id != path[1].id);
    const std::optional<ui::ChatMessageView> second = view.message(store::raw(regenerated[1].id));
    QVERIFY(second);
    QCOMPARE(second->siblingCount, 2);

    // Ctrl+Shift+E: the last message of the user's, in its editor with focus.
    press_keys(Qt::CTRL | Qt::SHIFT | Qt::Key_E);
    auto* editor = qobject_cast<QPlainTextEdit*>(QApplication::focusWidget());
    QVERIFY(editor);
    QCOMPARE(editor->objectName(), QStringLiteral("messageEditor"));
    QCOMPARE(editor->toPlainText(), QStringLiteral("Hello there."));
    QTest::keyClick(editor, Qt::Key_Escape);
    QVERIFY(!editor->isVisible());
  }

  // Ctrl+O asks for a folder and loads it with the settings in use.
  void ctrlOOpensAModelFolder() {
    AppRun run{QString()};
    QStringList asked;
    run.choose_directory = [&asked](const QString& title, const QString&) {
      asked << title;
      return demo_model();
    };
    run.start();
    gui::MainWindow& window = run.app->window();
    show_active(window);
    press_keys(Qt::CTRL | Qt::Key_O);
    QCOMPARE(asked, QStringList{QStringLiteral("Choose a model folder")});
    QVERIFY(run.waitForModel());
    QVERIFY(run.app->engine().model());
    QCOMPARE(run.app->engine().model()->directory, demo_model());
  }
};

QUIRE_TEST(KeyboardShortcutsTest)
#include "test_keyboard_shortcuts.moc"
