#pragma once

// The main window's widgets and layout: chats on the left, the conversation
// (or the welcome view) in the middle, the memory panel docked on the right,
// a notice bar for errors, load progress in the status bar, and the menus.
// It holds no logic of its own: QuireApplication wires it to the store and
// the engine, so tests drive the same window the program shows.
//
// Object names: "noticeBar", "noticeText", "noticeClose", "loadProgress",
// "cancelLoadButton", "engineState", "backendNote", "serverState", "memoryDock",
// "settingsDialog", "centralStack", "chatPage", "modelHubWindow", "getModelsAction".

#include <QMainWindow>
#include <QSize>

class QAction;
class QDialog;
class QDockWidget;
class QLabel;
class QMenu;
class QProgressBar;
class QSplitter;
class QStackedWidget;
class QToolButton;

namespace quire::ui {
class ChatListWidget;
class ModelHubWindow;
class ChatView;
class InputBox;
class MemoryPanel;
class ServerPanel;
class ToolServersPanel;
class SettingsPanel;
class StatusLine;
class WelcomeView;
}  // namespace quire::ui

namespace quire::gui {

class MainWindow : public QMainWindow {
  Q_OBJECT

 public:
  // The first window's size where the screen has room for it; on a smaller
  // screen it takes the screen's available area less kFrameAllowance, for
  // the title bar and borders a window manager adds (not known before the
  // window shows), but never less than its minimum size.
  static constexpr QSize kPreferredSize{1400, 860};
  static constexpr int kFrameAllowance = 40;

  explicit MainWindow(QWidget* parent = nullptr);

  ui::ChatListWidget* chatList() const { return chat_list_; }
  ui::ChatView* chatView() const { return chat_view_; }
  ui::InputBox* input() const { return input_; }
  ui::StatusLine* statusLine() const { return status_line_; }
  ui::WelcomeView* welcome() const { return welcome_; }
  ui::MemoryPanel* memoryPanel() const { return memory_panel_; }
  ui::SettingsPanel* settingsPanel() const { return settings_panel_; }
  // Settings → Server, below the engine settings in the same dialog.
  ui::ServerPanel* serverPanel() const { return server_panel_; }
  ui::ToolServersPanel* toolServersPanel() const { return tool_servers_panel_; }
  QDialog* settingsDialog() const { return settings_dialog_; }
  // Model → Get models…: search, download and remove models.
  ui::ModelHubWindow* modelHubWindow() const { return model_hub_; }
  QAction* getModelsAction() const { return get_models_; }
  QDockWidget* memoryDock() const { return memory_dock_; }
  QSplitter* splitter() const { return splitter_; }

  QAction* importAction() const { return import_; }
  QAction* exportJsonAction() const { return export_json_; }
  QAction* exportMarkdownAction() const { return export_markdown_; }
  QAction* exportHtmlAction() const { return export_html_; }
  QAction* exportPdfAction() const { return export_pdf_; }
  // Checked: Markdown, HTML and PDF exports hold every branch of the chat,
  // not only the current one (JSON always holds the whole tree).
  QAction* exportAllBranchesAction() const { return export_all_branches_; }
  QAction* settingsAction() const { return settings_; }
  // Model → "Open a model folder…" (Ctrl+O): the application asks for the
  // folder and loads it.
  QAction* openModelAction() const { return open_model_; }
  // Chat → "Write a message" (Ctrl+L): focus to the message box.
  QAction* focusInputAction() const { return focus_input_; }
  // Model → Presets…: the library of presets (QuireApplication opens it).
  QAction* presetsAction() const { return presets_; }
  // "Chat settings…": the chat on show's own settings.
  QAction* chatSettingsAction() const { return chat_settings_; }
  QAction* demoAction() const { return demo_; }
  QAction* unloadAction() const { return unload_; }
  QAction* memoryAction() const { return memory_; }
  QMenu* helpMenu() const { return help_; }
  // The empty chat's usual title and hint (a demo model replaces them).
  void restoreEmptyStateText();

  // The middle shows the welcome view or the conversation.
  void showWelcome();
  void showChat();
  bool isShowingWelcome() const;

  // A message above the conversation until dismissed or replaced. Errors
  // stay; information fades after a while.
  enum class Notice { Info, Error };
  void showNotice(const QString& text, Notice kind = Notice::Error);
  void clearNotice();
  QString noticeText() const;

  // Load progress in the status bar: `total` 0 hides it.
  void showLoading(const QString& what, qint64 done, qint64 total);
  void hideLoading();
  bool isShowingLoading() const;
  // What the engine does, at the left of the status bar ("Ready", "Generating").
  // The tooltip is the text itself unless given (a loaded model's line says
  // there why a model with a vision tower does not see images).
  void setEngineState(const QString& text, const QString& tooltip = QString());
  // Why the loaded model runs on another backend than the settings prefer
  // ("Running on the CPU: ..."), beside the engine state; empty hides it.
  void setBackendNote(const QString& text);
  QString backendNote() const;
  // The built-in API server's address ("http://127.0.0.1:8642/v1") in the
  // status bar for as long as it serves; empty hides it.
  void setServerAddress(const QString& url);

 signals:
  void cancelLoadRequested();
  void closing();

 protected:
  void closeEvent(QCloseEvent* event) override;

 private:
  QWidget* buildCentral();
  void buildMenus();
  void buildStatusBar();

  ui::ChatListWidget* chat_list_ = nullptr;
  ui::ChatView* chat_view_ = nullptr;
  ui::InputBox* input_ = nullptr;
  ui::StatusLine* status_line_ = nullptr;
  ui::WelcomeView* welcome_ = nullptr;
  ui::MemoryPanel* memory_panel_ = nullptr;
  ui::SettingsPanel* settings_panel_ = nullptr;
  ui::ServerPanel* server_panel_ = nullptr;
  ui::ToolServersPanel* tool_servers_panel_ = nullptr;
  QDialog* settings_dialog_ = nullptr;
  ui::ModelHubWindow* model_hub_ = nullptr;
  QDockWidget* memory_dock_ = nullptr;
  QSplitter* splitter_ = nullptr;
  QStackedWidget* stack_ = nullptr;
  QWidget* chat_page_ = nullptr;
  QWidget* notice_ = nullptr;
  QLabel* notice_text_ = nullptr;
  QProgressBar* progress_ = nullptr;
  QToolButton* cancel_load_ = nullptr;
  QLabel* engine_state_ = nullptr;
  QLabel* backend_note_ = nullptr;
  QLabel* server_state_ = nullptr;

  QMenu* help_ = nullptr;
  QAction* import_ = nullptr;
  QAction* export_json_ = nullptr;
  QAction* export_markdown_ = nullptr;
  QAction* export_html_ = nullptr;
  QAction* export_pdf_ = nullptr;
  QAction* export_all_branches_ = nullptr;
  QAction* settings_ = nullptr;
  QAction* presets_ = nullptr;
  QAction* get_models_ = nullptr;
  QAction* open_model_ = nullptr;
  QAction* focus_input_ = nullptr;
  QAction* chat_settings_ = nullptr;
  QAction* demo_ = nullptr;
  QAction* unload_ = nullptr;
  QAction* memory_ = nullptr;
};

}  // namespace quire::gui
