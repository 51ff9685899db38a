#include <QDir>
#include <QHBoxLayout>
#include <QStandardItemModel>
#include <QTest>
#include <QVBoxLayout>

#include "chat_test_support.h"
#include "quire/ui/chat_list_widget.h"
#include "quire/ui/chat_view.h"
#include "quire/ui/input_box.h"
#include "quire/ui/status_line.h"
#include "test_main.h"

using namespace quire::ui;
using namespace quire::ui::testing;

namespace {

void fillChats(QStandardItemModel& model) {
  const QDateTime now = QDateTime::currentDateTime();
  const struct {
    const char* title;
    qint64 minutesAgo;
  } chats[] = {
      {"Reading JSON in Python", 2},         {"Rust lifetimes explained", 75},
      {"Dinner ideas for six", 60 * 20},     {"Cover letter for the Berlin job", 60 * 26},
      {"Why is the sky blue?", 60 * 24 * 3}, {"Trip to Lisbon: three days", 60 * 24 * 12},
      {"Regex for ISO dates", 60 * 24 * 50}, {"Sourdough starter schedule", 60 * 24 * 400},
  };
  qint64 id = 1;
  for (const auto& chat : chats) {
    auto* item = new QStandardItem(QString::fromUtf8(chat.title));
    item->setData(id++, ChatIdRole);
    item->setData(now.addSecs(-60 * chat.minutesAgo), ChatLastActivityRole);
    model.appendRow(item);
  }
}

QPalette darkPalette() {
  QPalette palette;
  const QColor window(0x23, 0x25, 0x29);
  const QColor base(0x1b, 0x1d, 0x21);
  const QColor text(0xe6, 0xe6, 0xe6);
  palette.setColor(QPalette::Window, window);
  palette.setColor(QPalette::WindowText, text);
  palette.setColor(QPalette::Base, base);
  palette.setColor(QPalette::AlternateBase, window);
  palette.setColor(QPalette::Text, text);
  palette.setColor(QPalette::Button, QColor(0x30, 0x33, 0x38));
  palette.setColor(QPalette::ButtonText, text);
  palette.setColor(QPalette::Highlight, QColor(0x3d, 0x7e, 0xd6));
  palette.setColor(QPalette::HighlightedText, QColor(0xf5, 0xf7, 0xfa));
  palette.setColor(QPalette::PlaceholderText, QColor(0x8f, 0x94, 0x9b));
  palette.setColor(QPalette::ToolTipBase, window);
  palette.setColor(QPalette::ToolTipText, text);
  palette.setColor(QPalette::Link, QColor(0x6a, 0xa8, 0xf7));
  return palette;
}

}  // namespace

// Writes PNGs of the chat widgets to $QUIRE_SCREENSHOT_DIR for people to look
// at; skipped when it is not set.
class ChatScreenshotTest : public QObject {
  Q_OBJECT

 private slots:
  void init() {
    dir_ = qEnvironmentVariable("QUIRE_SCREENSHOT_DIR");
    if (dir_.isEmpty()) QSKIP("QUIRE_SCREENSHOT_DIR is not set");
    QVERIFY(QDir().mkpath(dir_));
  }

  void chatView() {
    ChatView view;
    view.resize(760, 820);
    view.setMessages(sampleConversation());
    QVERIFY(save(&view, "chat_view.png"));
  }

  void chatList() {
    QStandardItemModel model;
    fillChats(model);
    ChatListWidget list;
    list.setModel(&model);
    list.setCurrentChat(1);
    list.resize(280, 520);
    QVERIFY(save(&list, "chat_list.png"));
  }

  void chatListWithUndo() {
    QStandardItemModel model;
    fillChats(model);
    ChatListWidget list;
    list.setModel(&model);
    connect(&list, &ChatListWidget::deleteRequested, &model, [&model](qint64 id) {
      for (int row = 0; row < model.rowCount(); ++row) {
        if (model.item(row)->data(ChatIdRole).toLongLong() == id) model.removeRow(row);
      }
    });
    list.setCurrentChat(3);
    list.deleteCurrent();
    list.resize(280, 520);
    QVERIFY(save(&list, "chat_list_undo.png"));
  }

  void chatViewWithError() {
    ChatView view;
    view.resize(760, 300);
    ChatMessageView reply = assistantMessage(2, {});
    reply.error = QStringLiteral(
        "does not fit: the prompt needs 9,310 tokens but the context holds 8,192. Start a new "
        "chat, or load the model with a longer context.");
    view.setMessages({userMessage(1, QStringLiteral("Summarise the whole attached book, chapter "
                                                    "by chapter.")),
                      reply});
    QVERIFY(save(&view, "chat_view_error.png"));
  }

  void chatViewWithToolCalls_data() {
    QTest::addColumn<bool>("dark");
    QTest::newRow("light") << false;
    QTest::newRow("dark") << true;
  }

  // A reply that read a file, waits for approval of a second call, and
  // whose third call failed.
  void chatViewWithToolCalls() {
    QFETCH(bool, dark);
    ChatView view;
    if (dark) view.setPalette(darkPalette());
    view.resize(760, 900);
    ToolCallView read;
    read.id = QStringLiteral("call-1");
    read.server = QStringLiteral("files");
    read.tool = QStringLiteral("read_file");
    read.arguments = QStringLiteral("{\"path\": \"/home/ada/notes/todo.md\"}");
    read.state = ToolCallView::State::Done;
    read.result = QStringLiteral(
        "# To do\n- Renew the passport (expires in March)\n- Call Grace about the move\n"
        "- Book the dentist\n- Fix the bike's rear brake\n- Send the Lisbon photos\n"
        "- Back up the laptop");
    read.summary = QStringLiteral("%1 characters").arg(read.result.size());
    ToolCallView search = read;
    search.id = QStringLiteral("call-2");
    search.server = QStringLiteral("web");
    search.tool = QStringLiteral("search");
    search.arguments =
        QStringLiteral("{\"query\": \"passport renewal appointment Berlin\", \"limit\": 5}");
    search.state = ToolCallView::State::AwaitingApproval;
    search.result.clear();
    search.summary.clear();
    ToolCallView calendar = search;
    calendar.id = QStringLiteral("call-3");
    calendar.server = QStringLiteral("calendar");
    calendar.tool = QStringLiteral("list_events");
    calendar.arguments = QStringLiteral("{\"from\": \"2026-12-01\", \"to\": \"2026-12-31\"}");
    calendar.state = ToolCallView::State::Failed;
    calendar.summary = QStringLiteral("the process exited with code 3");
    ChatMessageView reply = assistantMessage(
        2, QStringLiteral("I read your notes; the passport is the most urgent. Let me look for "
                          "an appointment."));
    reply.toolCalls = {read, search, calendar};
    view.setMessages(
        {userMessage(1, QStringLiteral("What is most urgent on my to-do list?")), reply});
    QVERIFY(save(&view, dark ? "chat_view_tools_dark.png" : "chat_view_tools.png"));
  }

  void window_data() {
    QTest::addColumn<bool>("dark");
    QTest::newRow("light") << false;
    QTest::newRow("dark") << true;
  }

  void window() {
    QFETCH(bool, dark);
    QWidget window;
    if (dark) window.setPalette(darkPalette());
    window.setAutoFillBackground(true);
    auto* layout = new QHBoxLayout(&window);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->setSpacing(0);
    QStandardItemModel model;
    fillChats(model);
    auto* list = new ChatListWidget(&window);
    list->setModel(&model);
    list->setCurrentChat(1);
    list->setFixedWidth(260);
    layout->addWidget(list);

    auto* column = new QVBoxLayout;
    column->setSpacing(6);
    auto* view = new ChatView(&window);
    QList<ChatMessageView> messages = sampleConversation();
    messages.push_back(
        userMessage(5, QStringLiteral("Thanks! Can you also show the pathlib version?")));
    ChatMessageView reply = assistantMessage(
        6, QStringLiteral("Sure. With `pathlib`:\n\n```python\nfrom pathlib import Path\n"));
    reply.streaming = true;
    messages.push_back(reply);
    view->setMessages(messages);
    column->addWidget(view, 1);
    auto* input = new InputBox(&window);
    input->setGenerating(true);
    auto* inputRow = new QHBoxLayout;
    inputRow->setContentsMargins(16, 0, 16, 0);
    inputRow->addWidget(input);
    column->addLayout(inputRow);
    auto* status = new StatusLine(&window);
    status->setModelName(QStringLiteral("Llama-3-8B-Instruct · EXL2 4.0 bpw"));
    status->setDevices(QStringLiteral("2 × H100"));
    status->setCacheFormat(QStringLiteral("Q4"));
    status->setTokensPerSecond(43.0);
    status->setTimeToFirstToken(0.09);
    status->setReusedTokens(1024, 1093);
    status->setContextFill(6350, 8192);
    column->addWidget(status);
    layout->addLayout(column, 1);
    window.resize(1100, 760);
    QVERIFY(save(&window, dark ? "chat_window_dark.png" : "chat_window.png"));
  }

 private:
  bool save(QWidget* widget, const char* name) {
    widget->show();
    if (!QTest::qWaitForWindowExposed(widget)) return false;
    QTest::qWait(200);  // let the nested layouts settle
    const QString path = QDir(dir_).filePath(QString::fromLatin1(name));
    qInfo("screenshot: %s", qPrintable(path));
    return widget->grab().save(path);
  }

  QString dir_;
};

QUIRE_TEST(ChatScreenshotTest)
#include "test_chat_screenshots.moc"
