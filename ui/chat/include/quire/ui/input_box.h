#pragma once

#include <QList>
#include <QWidget>

#include "quire/ui/offered_images.h"

class QAction;
class QPlainTextEdit;
class QPushButton;

namespace quire::ui {

class AttachmentStrip;
class TintedFrame;

// Where the user writes the next message. Enter sends, Shift+Enter starts a new
// line; the box grows with its text up to maximumLines() and then scrolls.
// While a reply is generated, Send gives way to Stop; the user can keep typing
// the next message meanwhile. Esc stops the reply wherever focus is in the
// box's window, through stopAction(). Delete in an empty box is left
// to the window's shortcuts (it deletes the chat on show in the app).
// Images: the attach button and attachAction() ask for a file
// (attachRequested), image files dropped on the box and pictures pasted into
// it are offered (imagesOffered); the app shows what it took in
// attachmentStrip(), above the box. A message of images alone may be sent.
//
// Object names: "messageInput", "sendButton", "stopButton", "attachButton".
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
  // "Attach an image…" (Ctrl+Shift+A), for the Chat menu.
  QAction* attachAction() const { return attachAction_; }
  AttachmentStrip* attachmentStrip() const { return strip_; }

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
  void attachRequested();
  void imagesOffered(const QList<quire::ui::OfferedImage>& images);

 protected:
  bool eventFilter(QObject* watched, QEvent* event) override;

 private:
  // Drops and pastes of images become imagesOffered; true when taken.
  bool offerImages(QObject* watched, QEvent* event);
  void fitHeight();
  void updateButtons();

  TintedFrame* frame_ = nullptr;
  QPlainTextEdit* editor_ = nullptr;
  QPushButton* sendButton_ = nullptr;
  QPushButton* stopButton_ = nullptr;
  QAction* stopAction_ = nullptr;
  QAction* attachAction_ = nullptr;
  AttachmentStrip* strip_ = nullptr;
  int maximumLines_ = kDefaultMaximumLines;
  QString placeholder_;
  QString unavailableReason_;
  bool generating_ = false;
};

}  // namespace quire::ui
