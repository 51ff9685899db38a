#include "quire/ui/input_box.h"

#include <QAbstractTextDocumentLayout>
#include <QAction>
#include <QClipboard>
#include <QDropEvent>
#include <QGuiApplication>
#include <QHBoxLayout>
#include <QKeyEvent>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QToolButton>
#include <QVBoxLayout>
#include <algorithm>

#include "chat_style.h"
#include "quire/ui/attachment_strip.h"

namespace quire::ui {
namespace {

// Leading blank lines and trailing whitespace go; indentation of the first
// line stays, since it may be pasted code.
QString tidy(const QString& text) {
  qsizetype end = text.size();
  while (end > 0 && text[end - 1].isSpace())
    --end;
  qsizetype start = 0;
  for (qsizetype i = 0; i < end && text[i].isSpace(); ++i) {
    if (text[i] == u'\n') start = i + 1;
  }
  return text.mid(start, end - start);
}

}  // namespace

InputBox::InputBox(QWidget* parent) : QWidget(parent) {
  auto* root = new QVBoxLayout(this);
  root->setContentsMargins(0, 0, 0, 0);
  root->setSpacing(0);
  strip_ = new AttachmentStrip(this);
  root->addWidget(strip_);
  connect(strip_, &AttachmentStrip::changed, this, &InputBox::updateButtons);
  frame_ = new TintedFrame(Tint::Input, this);
  frame_->setRadius(12);
  root->addWidget(frame_);

  auto* layout = new QHBoxLayout(frame_);
  layout->setContentsMargins(6, 8, 8, 8);
  layout->setSpacing(8);

  attachAction_ = new QAction(tr("&Attach an image…"), this);
  attachAction_->setObjectName(QStringLiteral("attachImageAction"));
  attachAction_->setShortcut(QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_A));
  attachAction_->setShortcutContext(Qt::WindowShortcut);
  attachAction_->setToolTip(
      tr("Attach an image to the next message (PNG, JPEG, WebP, GIF or BMP); you can also drop "
         "or paste one"));
  addAction(attachAction_);
  auto* attach = new QToolButton(frame_);
  attach->setObjectName(QStringLiteral("attachButton"));
  attach->setText(QStringLiteral("+"));
  attach->setAutoRaise(true);
  attach->setCursor(Qt::PointingHandCursor);
  attach->setToolTip(attachAction_->toolTip() + QStringLiteral(" (") +
                     attachAction_->shortcut().toString(QKeySequence::NativeText) +
                     QStringLiteral(")"));
  attach->setAccessibleName(tr("Attach an image"));
  layout->addWidget(attach, 0, Qt::AlignBottom);
  connect(attach, &QToolButton::clicked, attachAction_, &QAction::trigger);
  connect(attachAction_, &QAction::triggered, this, &InputBox::attachRequested);

  editor_ = new QPlainTextEdit(frame_);
  editor_->setObjectName(QStringLiteral("messageInput"));
  editor_->setAccessibleName(tr("Message"));
  editor_->setAccessibleDescription(tr("Enter sends, Shift+Enter starts a new line"));
  editor_->setFrameShape(QFrame::NoFrame);
  editor_->setTabChangesFocus(true);
  editor_->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
  editor_->setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Fixed);
  // The frame paints the field; the editor itself stays transparent on it.
  editor_->viewport()->setAutoFillBackground(false);
  editor_->setAutoFillBackground(false);
  editor_->installEventFilter(this);
  // Drags reach the viewport of a scroll area, not the area itself.
  editor_->viewport()->installEventFilter(this);
  setPlaceholderText(tr("Message the model…  (Enter sends, Shift+Enter for a new line)"));
  layout->addWidget(editor_, 1, Qt::AlignVCenter);

  sendButton_ = new QPushButton(tr("Send"), frame_);
  sendButton_->setObjectName(QStringLiteral("sendButton"));
  sendButton_->setAccessibleName(tr("Send message"));
  sendButton_->setCursor(Qt::PointingHandCursor);
  stopButton_ = new QPushButton(tr("Stop"), frame_);
  stopButton_->setObjectName(QStringLiteral("stopButton"));
  stopButton_->setToolTip(tr("Stop generating; the text so far is kept (Esc)"));
  stopButton_->setAccessibleName(tr("Stop generating"));
  stopButton_->setCursor(Qt::PointingHandCursor);
  layout->addWidget(sendButton_, 0, Qt::AlignBottom);
  layout->addWidget(stopButton_, 0, Qt::AlignBottom);

  stopAction_ = new QAction(tr("&Stop reply"), this);
  stopAction_->setObjectName(QStringLiteral("stopReplyAction"));
  stopAction_->setShortcut(QKeySequence(Qt::Key_Escape));
  stopAction_->setShortcutContext(Qt::WindowShortcut);
  stopAction_->setToolTip(stopButton_->toolTip());
  // Added to the box as well as to a menu, so the shortcut also works where
  // the box stands alone in a window.
  addAction(stopAction_);

  connect(sendButton_, &QPushButton::clicked, this, &InputBox::send);
  connect(stopAction_, &QAction::triggered, this, &InputBox::stopRequested);
  connect(stopButton_, &QPushButton::clicked, this, &InputBox::stopRequested);
  connect(editor_, &QPlainTextEdit::textChanged, this, &InputBox::updateButtons);
  connect(editor_->document()->documentLayout(), &QAbstractTextDocumentLayout::documentSizeChanged,
          this, &InputBox::fitHeight);
  setFocusProxy(editor_);
  fitHeight();
  updateButtons();
}

QString InputBox::text() const {
  return editor_->toPlainText();
}

void InputBox::setText(const QString& text) {
  editor_->setPlainText(text);
  editor_->moveCursor(QTextCursor::End);
}

QString InputBox::placeholderText() const {
  return placeholder_;
}

void InputBox::setPlaceholderText(const QString& text) {
  placeholder_ = text;
  if (unavailableReason_.isEmpty()) editor_->setPlaceholderText(text);
}

void InputBox::setUnavailableReason(const QString& reason) {
  if (unavailableReason_ == reason) return;
  unavailableReason_ = reason;
  editor_->setPlaceholderText(reason.isEmpty() ? placeholder_ : reason);
  updateButtons();
}

void InputBox::setMaximumLines(int lines) {
  maximumLines_ = std::max(1, lines);
  fitHeight();
}

bool InputBox::canSend() const {
  return !generating_ && unavailableReason_.isEmpty() &&
         (!text().trimmed().isEmpty() || strip_->count() > 0);
}

void InputBox::setGenerating(bool generating) {
  if (generating_ == generating) return;
  generating_ = generating;
  updateButtons();
}

void InputBox::send() {
  if (!canSend()) return;
  const QString message = tidy(text());
  editor_->clear();
  emit sendRequested(message);
}

void InputBox::clear() {
  editor_->clear();
}

void InputBox::focusInput() {
  editor_->setFocus(Qt::OtherFocusReason);
}

void InputBox::updateButtons() {
  sendButton_->setVisible(!generating_);
  sendButton_->setEnabled(canSend());
  sendButton_->setToolTip(unavailableReason_.isEmpty() ? tr("Send the message (Enter)")
                                                       : unavailableReason_);
  stopButton_->setVisible(generating_);
  stopAction_->setEnabled(generating_);
}

void InputBox::fitHeight() {
  // A plain text layout measures its document in lines, wrapped lines included.
  const auto lines =
      static_cast<int>(editor_->document()->documentLayout()->documentSize().height());
  const int shown = std::clamp(lines, 1, maximumLines_);
  const int margins = 2 * static_cast<int>(editor_->document()->documentMargin());
  editor_->setFixedHeight(shown * editor_->fontMetrics().lineSpacing() + margins +
                          2 * editor_->frameWidth());
  editor_->setVerticalScrollBarPolicy(lines > maximumLines_ ? Qt::ScrollBarAsNeeded
                                                            : Qt::ScrollBarAlwaysOff);
}

bool InputBox::offerImages(QObject* watched, QEvent* event) {
  if (watched != editor_ && watched != editor_->viewport()) return false;
  switch (event->type()) {
    case QEvent::DragEnter:
    case QEvent::DragMove: {
      auto* drag = static_cast<QDragMoveEvent*>(event);
      if (offered_images(drag->mimeData()).isEmpty()) return false;
      drag->acceptProposedAction();
      return true;
    }
    case QEvent::Drop: {
      auto* drop = static_cast<QDropEvent*>(event);
      const QList<OfferedImage> images = offered_images(drop->mimeData());
      if (images.isEmpty()) return false;
      drop->acceptProposedAction();
      emit imagesOffered(images);
      return true;
    }
    case QEvent::KeyPress: {
      // A pasted picture attaches; pasted text stays the editor's.
      if (!static_cast<QKeyEvent*>(event)->matches(QKeySequence::Paste)) return false;
      const QList<OfferedImage> images = offered_images(QGuiApplication::clipboard()->mimeData());
      if (images.isEmpty()) return false;
      emit imagesOffered(images);
      return true;
    }
    default:
      return false;
  }
}

bool InputBox::eventFilter(QObject* watched, QEvent* event) {
  if (offerImages(watched, event)) return true;
  if (watched == editor_ && event->type() == QEvent::ShortcutOverride) {
    // The editor claims Delete for its text even when it is empty, where the
    // key would do nothing. Left unclaimed there, it reaches the window's
    // Delete (the chat on show, with Undo): what the key means elsewhere in
    // the window. With text in the box, Delete always edits the text.
    const auto* key = static_cast<QKeyEvent*>(event);
    if (key->key() == Qt::Key_Delete && key->modifiers() == Qt::NoModifier &&
        editor_->document()->isEmpty()) {
      event->ignore();
      return true;
    }
  }
  if (watched == editor_ && event->type() == QEvent::KeyPress) {
    const auto* key = static_cast<QKeyEvent*>(event);
    const bool enter = key->key() == Qt::Key_Return || key->key() == Qt::Key_Enter;
    if (enter && !(key->modifiers() & Qt::ShiftModifier)) {
      // Enter never inserts a line: it sends, or does nothing while a reply runs.
      send();
      return true;
    }
    if (enter) {
      editor_->textCursor().insertText(QStringLiteral("\n"));
      return true;
    }
    // Reached only where the window's "Stop reply" shortcut did not take
    // Esc first (the box's window is not the active one).
    if (key->key() == Qt::Key_Escape && generating_) {
      emit stopRequested();
      return true;
    }
  }
  return QWidget::eventFilter(watched, event);
}

}  // namespace quire::ui
