#include "main_window.h"

#include <QAction>
#include <QApplication>
#include <QCloseEvent>
#include <QDialog>
#include <QDockWidget>
#include <QFrame>
#include <QHBoxLayout>
#include <QLabel>
#include <QMenu>
#include <QMenuBar>
#include <QProgressBar>
#include <QSplitter>
#include <QStackedWidget>
#include <QStatusBar>
#include <QStyle>
#include <QTimer>
#include <QToolButton>
#include <QVBoxLayout>

#include "quire/app/cache_format_choices.h"
#include "quire/ui/chat_list_widget.h"
#include "quire/ui/chat_view.h"
#include "quire/ui/input_box.h"
#include "quire/ui/memory_panel.h"
#include "quire/ui/model_hub_window.h"
#include "quire/ui/server_panel.h"
#include "quire/ui/settings_panel.h"
#include "quire/ui/status_line.h"
#include "quire/ui/tool_servers_panel.h"
#include "quire/ui/welcome_view.h"

namespace quire::gui {
namespace {

// Information notices go away on their own; errors wait for the user.
constexpr int kInfoNoticeMs = 8000;
// Space around the message box, so it never touches the window's edge.
constexpr int kInputMargin = 12;

}  // namespace

MainWindow::MainWindow(QWidget* parent) : QMainWindow(parent) {
  setWindowTitle(QStringLiteral("Quire"));
  setWindowIcon(QIcon::fromTheme(QStringLiteral("app.quire.Quire")));
  setCentralWidget(buildCentral());

  memory_panel_ = new ui::MemoryPanel;
  memory_dock_ = new QDockWidget(tr("Memory"), this);
  memory_dock_->setObjectName(QStringLiteral("memoryDock"));
  memory_dock_->setWidget(memory_panel_);
  memory_dock_->setFeatures(QDockWidget::DockWidgetClosable | QDockWidget::DockWidgetMovable |
                            QDockWidget::DockWidgetFloatable);
  addDockWidget(Qt::RightDockWidgetArea, memory_dock_);

  settings_dialog_ = new QDialog(this);
  settings_dialog_->setObjectName(QStringLiteral("settingsDialog"));
  settings_dialog_->setWindowTitle(tr("Model and cache settings"));
  settings_panel_ = new ui::SettingsPanel(app::cache_format_choices(), settings_dialog_);
  auto* dialog_layout = new QVBoxLayout(settings_dialog_);
  dialog_layout->setContentsMargins(0, 0, 0, 0);
  dialog_layout->addWidget(settings_panel_, 1);
  // The server and the tool servers, side by side under the model's settings.
  auto* services = new QHBoxLayout;
  server_panel_ = new ui::ServerPanel(settings_dialog_);
  services->addWidget(server_panel_, 1);
  tool_servers_panel_ = new ui::ToolServersPanel(settings_dialog_);
  services->addWidget(tool_servers_panel_, 1);
  dialog_layout->addLayout(services);
  settings_dialog_->resize(settings_panel_->sizeHint().expandedTo(QSize(1180, 800)));
  // A window of its own, so that a download can run beside a chat.
  model_hub_ = new ui::ModelHubWindow(this);

  buildMenus();
  buildStatusBar();
  resize(1400, 860);
}

QWidget* MainWindow::buildCentral() {
  splitter_ = new QSplitter(Qt::Horizontal);
  splitter_->setObjectName(QStringLiteral("mainSplitter"));
  splitter_->setChildrenCollapsible(false);

  chat_list_ = new ui::ChatListWidget;
  chat_list_->setMinimumWidth(220);
  splitter_->addWidget(chat_list_);

  auto* middle = new QWidget;
  auto* middle_layout = new QVBoxLayout(middle);
  middle_layout->setContentsMargins(0, 0, 0, 0);
  middle_layout->setSpacing(0);

  notice_ = new QFrame;
  notice_->setObjectName(QStringLiteral("noticeBar"));
  notice_->setAutoFillBackground(true);
  auto* notice_layout = new QHBoxLayout(notice_);
  notice_layout->setContentsMargins(12, 8, 8, 8);
  notice_text_ = new QLabel;
  notice_text_->setObjectName(QStringLiteral("noticeText"));
  notice_text_->setWordWrap(true);
  notice_text_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  notice_layout->addWidget(notice_text_, 1);
  auto* close = new QToolButton;
  close->setObjectName(QStringLiteral("noticeClose"));
  close->setAutoRaise(true);
  close->setIcon(style()->standardIcon(QStyle::SP_DialogCloseButton));
  close->setToolTip(tr("Dismiss"));
  connect(close, &QToolButton::clicked, this, &MainWindow::clearNotice);
  notice_layout->addWidget(close, 0, Qt::AlignTop);
  notice_->hide();
  middle_layout->addWidget(notice_);

  stack_ = new QStackedWidget;
  stack_->setObjectName(QStringLiteral("centralStack"));
  welcome_ = new ui::WelcomeView;
  stack_->addWidget(welcome_);

  chat_page_ = new QWidget;
  chat_page_->setObjectName(QStringLiteral("chatPage"));
  auto* chat_layout = new QVBoxLayout(chat_page_);
  chat_layout->setContentsMargins(0, 0, 0, 0);
  chat_layout->setSpacing(0);
  chat_view_ = new ui::ChatView;
  restoreEmptyStateText();
  chat_layout->addWidget(chat_view_, 1);
  input_ = new ui::InputBox;
  input_->setPlaceholderText(tr("Message the model"));
  // The box keeps clear of the window's edge when the memory panel is hidden.
  auto* input_row = new QHBoxLayout;
  input_row->setContentsMargins(kInputMargin, kInputMargin / 2, kInputMargin, kInputMargin / 2);
  input_row->addWidget(input_);
  chat_layout->addLayout(input_row);
  status_line_ = new ui::StatusLine;
  chat_layout->addWidget(status_line_);
  stack_->addWidget(chat_page_);
  middle_layout->addWidget(stack_, 1);

  splitter_->addWidget(middle);
  splitter_->setStretchFactor(0, 0);
  splitter_->setStretchFactor(1, 1);
  splitter_->setSizes({280, 900});
  return splitter_;
}

void MainWindow::buildMenus() {
  QMenu* file = menuBar()->addMenu(tr("&File"));
  file->addAction(chat_list_->newChatAction());
  file->addSeparator();
  import_ = file->addAction(tr("&Import chat…"));
  export_json_ = file->addAction(tr("Export chat as &JSON…"));
  export_markdown_ = file->addAction(tr("Export chat as &Markdown…"));
  file->addSeparator();
  QAction* quit = file->addAction(tr("&Quit"), this, &QWidget::close);
  quit->setShortcut(QKeySequence::Quit);

  QMenu* edit = menuBar()->addMenu(tr("&Chat"));
  edit->addAction(chat_list_->renameAction());
  edit->addAction(chat_list_->deleteAction());
  edit->addSeparator();
  edit->addAction(input_->stopAction());
  edit->addSeparator();
  chat_settings_ = edit->addAction(tr("Chat se&ttings…"));
  chat_settings_->setObjectName(QStringLiteral("chatSettingsAction"));
  chat_settings_->setToolTip(tr("System prompt, sampling and prompt format of this chat only"));

  QMenu* model = menuBar()->addMenu(tr("&Model"));
  get_models_ = model->addAction(tr("&Get models…"));
  get_models_->setObjectName(QStringLiteral("getModelsAction"));
  get_models_->setShortcut(QKeySequence(tr("Ctrl+Shift+G")));
  get_models_->setToolTip(tr("Search Hugging Face and download a model that fits this computer"));
  settings_ = model->addAction(tr("&Settings…"));
  settings_->setShortcut(QKeySequence::Preferences);
  if (settings_->shortcut().isEmpty()) settings_->setShortcut(QKeySequence(tr("Ctrl+,")));
  connect(settings_, &QAction::triggered, this, [this] {
    settings_dialog_->show();
    settings_dialog_->raise();
    settings_dialog_->activateWindow();
  });
  presets_ = model->addAction(tr("&Presets…"));
  presets_->setObjectName(QStringLiteral("presetsAction"));
  presets_->setToolTip(
      tr("Named sets of system prompt, sampling, longest reply and prompt format"));
  demo_ = model->addAction(tr("Load the &demo model"));
  unload_ = model->addAction(tr("&Unload"));

  QMenu* view = menuBar()->addMenu(tr("&View"));
  memory_ = memory_dock_->toggleViewAction();
  memory_->setText(tr("&Memory panel"));
  memory_->setShortcut(QKeySequence(tr("Ctrl+M")));
  view->addAction(memory_);

  // Filled by the application, which knows the backend's state and the data folder.
  help_ = menuBar()->addMenu(tr("&Help"));
  help_->setObjectName(QStringLiteral("helpMenu"));
}

void MainWindow::buildStatusBar() {
  engine_state_ = new QLabel(tr("No model loaded"));
  engine_state_->setObjectName(QStringLiteral("engineState"));
  // A long state ("Ready · model · context · prompt format") is cut, not
  // allowed to widen the window and squeeze the memory panel.
  engine_state_->setMinimumWidth(1);
  statusBar()->addWidget(engine_state_, 1);
  backend_note_ = new QLabel;
  backend_note_->setObjectName(QStringLiteral("backendNote"));
  // A reason can be long (a library path, a driver message): the label shows
  // what fits and the tooltip all of it.
  backend_note_->setMaximumWidth(420);
  backend_note_->setTextFormat(Qt::PlainText);
  backend_note_->hide();
  statusBar()->addWidget(backend_note_);
  progress_ = new QProgressBar;
  progress_->setObjectName(QStringLiteral("loadProgress"));
  progress_->setMaximumWidth(260);
  progress_->setTextVisible(true);
  progress_->hide();
  statusBar()->addPermanentWidget(progress_);
  cancel_load_ = new QToolButton;
  cancel_load_->setObjectName(QStringLiteral("cancelLoadButton"));
  cancel_load_->setText(tr("Cancel"));
  cancel_load_->setToolTip(tr("Stop loading the model"));
  cancel_load_->hide();
  connect(cancel_load_, &QToolButton::clicked, this, &MainWindow::cancelLoadRequested);
  statusBar()->addPermanentWidget(cancel_load_);
}

void MainWindow::showWelcome() {
  stack_->setCurrentWidget(welcome_);
}

void MainWindow::showChat() {
  stack_->setCurrentWidget(chat_page_);
}

bool MainWindow::isShowingWelcome() const {
  return stack_->currentWidget() == welcome_;
}

void MainWindow::showNotice(const QString& text, Notice kind) {
  notice_text_->setText(text);
  QPalette palette = notice_->palette();
  const QColor base = palette.color(QPalette::Window);
  const QColor tint = kind == Notice::Error ? QColor(0xd9, 0x3f, 0x3f) : QColor(0x3d, 0x8e, 0xd8);
  // A light wash of the tint over the window colour keeps the text readable
  // in light and dark themes alike.
  QColor wash;
  wash.setRgbF(base.redF() * 0.85f + tint.redF() * 0.15f,
               base.greenF() * 0.85f + tint.greenF() * 0.15f,
               base.blueF() * 0.85f + tint.blueF() * 0.15f);
  palette.setColor(QPalette::Window, wash);
  notice_->setPalette(palette);
  notice_->setProperty("kind",
                       kind == Notice::Error ? QStringLiteral("error") : QStringLiteral("info"));
  notice_->show();
  if (kind == Notice::Info) {
    QTimer::singleShot(kInfoNoticeMs, notice_, [this, text] {
      if (notice_text_->text() == text) clearNotice();
    });
  }
}

void MainWindow::clearNotice() {
  notice_text_->clear();
  notice_->hide();
}

QString MainWindow::noticeText() const {
  return notice_->isHidden() ? QString() : notice_text_->text();
}

void MainWindow::showLoading(const QString& what, qint64 done, qint64 total) {
  if (total <= 0) {
    progress_->setRange(0, 0);  // busy, size unknown
  } else {
    progress_->setRange(0, 1000);
    progress_->setValue(static_cast<int>(done * 1000 / total));
  }
  progress_->setFormat(what + QStringLiteral(" %p%"));
  progress_->show();
  cancel_load_->show();
}

void MainWindow::hideLoading() {
  progress_->hide();
  cancel_load_->hide();
}

bool MainWindow::isShowingLoading() const {
  return !progress_->isHidden();
}

void MainWindow::setEngineState(const QString& text) {
  engine_state_->setText(text);
  engine_state_->setToolTip(text);
}

void MainWindow::restoreEmptyStateText() {
  chat_view_->setEmptyStateText(tr("A new chat"),
                                tr("Write a message below. Enter sends, Shift+Enter starts a new "
                                   "line, Esc stops a reply."));
}

void MainWindow::setBackendNote(const QString& text) {
  // The label shows what fits, ending in "…"; the tooltip holds every word.
  backend_note_->setText(
      backend_note_->fontMetrics().elidedText(text, Qt::ElideRight, backend_note_->maximumWidth()));
  backend_note_->setToolTip(text);
  backend_note_->setVisible(!text.isEmpty());
}

QString MainWindow::backendNote() const {
  return backend_note_->toolTip();
}

void MainWindow::closeEvent(QCloseEvent* event) {
  emit closing();
  QMainWindow::closeEvent(event);
}

}  // namespace quire::gui
