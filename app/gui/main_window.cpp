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
#include <QScreen>
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
// Room the progress bar's style takes around its text.
constexpr int kProgressPadding = 24;
// The memory panel's share of the first window: the chat column comes first.
constexpr int kMemoryPanelPercent = 28;

// `preferred`, made small enough for the screen `widget` opens on (its
// available area: without panels and docks of the desktop), but no smaller
// than the widget can be.
QSize size_within_screen(const QWidget& widget, QSize preferred) {
  const QScreen* screen = widget.screen();
  if (screen == nullptr) return preferred;
  const QSize room = screen->availableGeometry().size() -
                     QSize(MainWindow::kFrameAllowance, MainWindow::kFrameAllowance);
  return preferred.boundedTo(room).expandedTo(widget.minimumSizeHint());
}

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
  settings_dialog_->resize(size_within_screen(
      *settings_dialog_, settings_panel_->sizeHint().expandedTo(QSize(1180, 800))));
  // A window of its own, so that a download can run beside a chat.
  model_hub_ = new ui::ModelHubWindow(this);

  buildMenus();
  buildStatusBar();
  resize(size_within_screen(*this, kPreferredSize));
  resizeDocks({memory_dock_}, {width() * kMemoryPanelPercent / 100}, Qt::Horizontal);
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
  // Shortcuts follow the platform's standard keys where there is one (New,
  // Find, Open, Save As, Preferences, Quit) and the usual chat programs' keys
  // elsewhere; Help → Keyboard shortcuts reads them off these actions.
  QMenu* file = menuBar()->addMenu(tr("&File"));
  file->addAction(chat_list_->newChatAction());
  file->addAction(chat_list_->searchAction());
  file->addSeparator();
  import_ = file->addAction(tr("&Import chat…"));
  import_->setObjectName(QStringLiteral("importChatAction"));
  import_->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_I));
  export_json_ = file->addAction(tr("Export chat as &JSON…"));
  export_markdown_ = file->addAction(tr("Export chat as &Markdown…"));
  export_html_ = file->addAction(tr("Export chat as &HTML…"));
  export_pdf_ = file->addAction(tr("Export chat as &PDF…"));
  export_all_branches_ = file->addAction(tr("Export &all branches"));
  export_all_branches_->setCheckable(true);
  export_all_branches_->setObjectName(QStringLiteral("exportAllBranchesAction"));
  export_all_branches_->setToolTip(
      tr("Markdown, HTML and PDF exports hold every branch of the chat, each after the branch "
         "it leaves; unchecked, only the branch on show"));
  // The same exports from the chat's context menu in the list.
  auto* separator = new QAction(this);
  separator->setSeparator(true);
  chat_list_->addChatActions(
      {separator, export_json_, export_markdown_, export_html_, export_pdf_, export_all_branches_});
  export_markdown_->setObjectName(QStringLiteral("exportMarkdownAction"));
  export_markdown_->setShortcut(QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_S));
  file->addSeparator();
  QAction* quit = file->addAction(tr("&Quit"), this, &QWidget::close);
  quit->setShortcut(QKeySequence::Quit);
  if (quit->shortcut().isEmpty()) quit->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_Q));

  QMenu* edit = menuBar()->addMenu(tr("&Chat"));
  edit->addAction(chat_list_->renameAction());
  edit->addAction(chat_list_->deleteAction());
  edit->addSeparator();
  edit->addAction(input_->stopAction());
  edit->addAction(input_->attachAction());
  edit->addAction(chat_view_->regenerateAction());
  edit->addAction(chat_view_->editLastAction());
  edit->addAction(chat_view_->copyLastReplyAction());
  focus_input_ = edit->addAction(tr("&Write a message"));
  focus_input_->setObjectName(QStringLiteral("focusInputAction"));
  focus_input_->setToolTip(tr("Move the focus to the message box"));
  focus_input_->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_L));
  connect(focus_input_, &QAction::triggered, this, [this] {
    showChat();
    input_->focusInput();
  });
  edit->addSeparator();
  chat_settings_ = edit->addAction(tr("Chat se&ttings…"));
  chat_settings_->setObjectName(QStringLiteral("chatSettingsAction"));
  chat_settings_->setToolTip(tr("System prompt, sampling and prompt format of this chat only"));
  chat_settings_->setShortcut(QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_P));

  QMenu* model = menuBar()->addMenu(tr("&Model"));
  open_model_ = model->addAction(tr("&Open a model folder…"));
  open_model_->setObjectName(QStringLiteral("openModelAction"));
  open_model_->setToolTip(tr("Load a model from a folder, with the settings in use"));
  open_model_->setShortcut(QKeySequence::Open);
  get_models_ = model->addAction(tr("&Get models…"));
  get_models_->setObjectName(QStringLiteral("getModelsAction"));
  get_models_->setShortcut(QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_G));
  get_models_->setToolTip(tr("Search Hugging Face and download a model that fits this computer"));
  settings_ = model->addAction(tr("&Settings…"));
  settings_->setObjectName(QStringLiteral("settingsAction"));
  settings_->setShortcut(QKeySequence::Preferences);
  if (settings_->shortcut().isEmpty())
    settings_->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_Comma));
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
  memory_->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_M));
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
  server_state_ = new QLabel;
  server_state_->setObjectName(QStringLiteral("serverState"));
  server_state_->setTextFormat(Qt::PlainText);
  server_state_->hide();
  statusBar()->addPermanentWidget(server_state_);
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
  // The bar is narrow: a long folder name gives way, the percentage stays.
  const QString percent = QStringLiteral(" %p%");
  const int room = progress_->maximumWidth() - kProgressPadding -
                   progress_->fontMetrics().horizontalAdvance(QStringLiteral(" 100%"));
  progress_->setFormat(progress_->fontMetrics().elidedText(what, Qt::ElideMiddle, room) + percent);
  progress_->setToolTip(what);
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

void MainWindow::setEngineState(const QString& text, const QString& tooltip) {
  engine_state_->setText(text);
  engine_state_->setToolTip(tooltip.isEmpty() ? text : tooltip);
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

void MainWindow::setServerAddress(const QString& url) {
  server_state_->setText(url.isEmpty() ? QString() : tr("API server: %1").arg(url));
  server_state_->setToolTip(
      url.isEmpty()
          ? QString()
          : tr("The built-in API server is on: programs can use the loaded model at %1").arg(url));
  server_state_->setVisible(!url.isEmpty());
}

QString MainWindow::backendNote() const {
  return backend_note_->toolTip();
}

void MainWindow::closeEvent(QCloseEvent* event) {
  emit closing();
  QMainWindow::closeEvent(event);
}

}  // namespace quire::gui
