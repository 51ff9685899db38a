#pragma once

#include <QWidget>

class QAction;
class QPlainTextEdit;
class QPushButton;

namespace quire::ui {

class TintedFrame;

// Where the user writes the next message. Enter sends, Shift+Enter starts a new
// line; the box grows with its text up to maximumLines() and then scrolls.
// While a reply is generated, Send gives way to Stop; the user can keep typing
// the next message meanwhile. Esc stops the reply wherever focus is in the
// box's window, through stopAction(). Delete in an empty box is left
// to the window's shortcuts (it deletes the chat on show in the app).
//
// Object names: "messageInput", "sendButton", "stopButton".
class InputBox : public QWidget {
  Q_OBJECT

 public:
  static constexpr int kDefaultMaximumLines = 8;

  explicit InputBox(QWidget* parent = nullptr);

  QString text() const;
  void setText(const QString& text);
  QString placeholderText() const;
  void setPlaceholderText(const QString& text);  // shown while sending is available
  int maximumLines() const { return maximumLines_; }
  void setMaximumLines(int lines);
  bool isGenerating() const { return generating_; }
  // There is something besides whitespace to send, no reply is running and
  // nothing makes sending unavailable.
  bool canSend() const;
  // Why nothing can be sent now ("Load a model to chat…"), shown in the empty
  // box and on the Send button, which is disabled; "" makes sending
  // available again. Typing stays possible: the text waits in the box.
  void setUnavailableReason(const QString& reason);
  QString unavailableReason() const { return unavailableReason_; }
  // "Stop reply" (Esc), enabled only while a reply runs. Its shortcut covers
  // the whole window, not just the box, and while it is disabled Esc passes
  // on untouched; dialogs and menus are windows of their own and keep their
  // Esc. The window puts it in its Chat menu.
  QAction* stopAction() const { return stopAction_; }

 public slots:
  void setGenerating(bool generating);
  // Emits sendRequested and clears the box, if canSend().
  void send();
  void clear();
  void focusInput();

 signals:
  // The text without leading blank lines and trailing whitespace.
  void sendRequested(const QString& text);
  void stopRequested();

 protected:
  bool eventFilter(QObject* watched, QEvent* event) override;

 private:
  void fitHeight();
  void updateButtons();

  TintedFrame* frame_ = nullptr;
  QPlainTextEdit* editor_ = nullptr;
  QPushButton* sendButton_ = nullptr;
  QPushButton* stopButton_ = nullptr;
  QAction* stopAction_ = nullptr;
  int maximumLines_ = kDefaultMaximumLines;
  QString placeholder_;
  QString unavailableReason_;
  bool generating_ = false;
};

}  // namespace quire::ui
