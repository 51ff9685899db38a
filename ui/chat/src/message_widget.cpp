#include "message_widget.h"

#include <QClipboard>
#include <QFrame>
#include <QGuiApplication>
#include <QHBoxLayout>
#include <QKeyEvent>
#include <QLabel>
#include <QLocale>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QTimer>
#include <QToolButton>
#include <QVBoxLayout>
#include <algorithm>
#include <tuple>

#include "branch_switcher.h"
#include "chat_style.h"
#include "code_block_widget.h"
#include "document_view.h"
#include "elided_label.h"
#include "markdown_render.h"
#include "message_fold.h"
#include "message_images_row.h"

namespace quire::ui {
namespace {

using Role = ChatMessageView::Role;

constexpr qreal kUserBubbleShare = 0.8;  // of the column's width
constexpr int kCopiedFeedbackMs = 1500;
constexpr int kEditorMaxLines = 12;

bool isReturn(const QKeyEvent* key) {
  return key->key() == Qt::Key_Return || key->key() == Qt::Key_Enter;
}

// Width of the longest line, so that a short user message gets a small bubble.
int naturalTextWidth(const QString& text, const QFontMetrics& metrics) {
  int widest = 0;
  for (const QString& line : text.split(u'\n'))
    widest = std::max(widest, metrics.horizontalAdvance(line));
  return widest;
}

}  // namespace

std::pair<TintedFrame*, QLabel*> MessageWidget::addTintedText(QBoxLayout* root, Tint tint,
                                                              const QString& name,
                                                              const QString& accessibleName) {
  auto* frame = new TintedFrame(tint, this);
  frame->setRadius(8);
  auto* layout = new QHBoxLayout(frame);
  layout->setContentsMargins(12, 8, 12, 8);
  auto* label = new QLabel(frame);
  label->setObjectName(name);
  label->setAccessibleName(accessibleName);
  label->setWordWrap(true);
  label->setTextFormat(Qt::PlainText);
  label->setTextInteractionFlags(Qt::TextSelectableByMouse | Qt::TextSelectableByKeyboard);
  layout->addWidget(label);
  root->addWidget(frame);
  return {frame, label};
}

MessageWidget::MessageWidget(const ChatMessageView& message, QWidget* parent)
    : QWidget(parent), message_(message), expanded_(message.streaming) {
  setObjectName(QStringLiteral("message"));
  setProperty("messageId", message.id);
  buildFrame();
  setMessage(message);
}

void MessageWidget::buildFrame() {
  const Role role = message_.role;
  const bool user = role == Role::User;
  setAccessibleName(user                      ? tr("Your message")
                    : role == Role::Assistant ? tr("Reply")
                                              : tr("System prompt"));

  auto* root = new QVBoxLayout(this);
  root->setContentsMargins(0, 0, 0, 0);
  root->setSpacing(4);

  contextDivider_ = buildContextDivider();
  root->addWidget(contextDivider_);

  caption_ = new QLabel(user                      ? tr("You")
                        : role == Role::Assistant ? tr("Assistant")
                                                  : tr("System prompt"),
                        this);
  scaleFont(caption_, 0.9, true);
  useMutedText(caption_);
  root->addWidget(caption_, 0, user ? Qt::AlignRight : Qt::AlignLeft);

  const Tint tint = user ? Tint::UserBubble : role == Role::System ? Tint::System : Tint::None;
  bubble_ = new TintedFrame(tint, this);
  bubble_->setRadius(14);
  auto* bubbleLayout = new QVBoxLayout(bubble_);
  if (tint == Tint::None)
    bubbleLayout->setContentsMargins(0, 0, 0, 0);
  else
    bubbleLayout->setContentsMargins(14, 9, 14, 9);
  // The images come first in the bubble, as they were attached above the text.
  images_ = new MessageImagesRow(bubble_);
  connect(images_, &MessageImagesRow::openRequested, this,
          [this](int index) { emit imageOpenRequested(message_.id, index); });
  bubbleLayout->addWidget(images_);
  bodyLayout_ = new QVBoxLayout;
  bodyLayout_->setContentsMargins(0, 0, 0, 0);
  bodyLayout_->setSpacing(10);
  bubbleLayout->addLayout(bodyLayout_);
  foldButton_ = new QToolButton(bubble_);
  foldButton_->setObjectName(QStringLiteral("showAllButton"));
  foldButton_->setAutoRaise(true);
  foldButton_->setCursor(Qt::PointingHandCursor);
  scaleFont(foldButton_, 0.88);
  connect(foldButton_, &QToolButton::clicked, this, &MessageWidget::toggleFold);
  bubbleLayout->addWidget(foldButton_, 0, Qt::AlignLeft);
  // Under the text and its fold toggle: the calls the reply made.
  toolCallsLayout_ = new QVBoxLayout;
  toolCallsLayout_->setContentsMargins(0, 0, 0, 0);
  toolCallsLayout_->setSpacing(6);
  bubbleLayout->addLayout(toolCallsLayout_);

  auto* row = new QHBoxLayout;
  row->setContentsMargins(0, 0, 0, 0);
  if (user) row->addStretch(1);
  row->addWidget(bubble_);
  root->addLayout(row);

  if (role != Role::Assistant) {
    plainView_ = new DocumentView(bubble_);
    plainView_->setObjectName(QStringLiteral("messageText"));
    plainView_->setAccessibleName(tr("Message text"));
    bodyLayout_->addWidget(plainView_);
  }
  if (user) {
    // Inline editing replaces the text with an editor inside the same bubble.
    editorArea_ = new QWidget(bubble_);
    auto* editLayout = new QVBoxLayout(editorArea_);
    editLayout->setContentsMargins(0, 0, 0, 0);
    editor_ = new QPlainTextEdit(editorArea_);
    editor_->setObjectName(QStringLiteral("messageEditor"));
    editor_->setAccessibleName(tr("Edit message"));
    editor_->setToolTip(tr("Enter sends the edited message; Shift+Enter adds a line; Esc cancels"));
    editor_->installEventFilter(this);
    connect(editor_, &QPlainTextEdit::textChanged, this, &MessageWidget::fitEditor);
    auto* buttons = new QHBoxLayout;
    buttons->addStretch(1);
    auto* cancel = new QPushButton(tr("Cancel"), editorArea_);
    cancel->setObjectName(QStringLiteral("cancelEditButton"));
    auto* send = new QPushButton(tr("Send"), editorArea_);
    send->setObjectName(QStringLiteral("sendEditButton"));
    send->setToolTip(tr("Send the edited message; the replies after it are generated again"));
    connect(cancel, &QPushButton::clicked, this, &MessageWidget::cancelEditing);
    connect(send, &QPushButton::clicked, this, &MessageWidget::submitEdit);
    buttons->addWidget(cancel);
    buttons->addWidget(send);
    editLayout->addWidget(editor_);
    editLayout->addLayout(buttons);
    editorArea_->hide();
    bubbleLayout->addWidget(editorArea_);
  }

  progressLabel_ = new QLabel(tr("Generating…"), this);
  progressLabel_->setObjectName(QStringLiteral("progressLabel"));
  useMutedText(progressLabel_);
  root->addWidget(progressLabel_);

  std::tie(errorFrame_, errorLabel_) =
      addTintedText(root, Tint::Error, QStringLiteral("messageError"), tr("Error"));
  std::tie(noticeFrame_, noticeLabel_) =
      addTintedText(root, Tint::Info, QStringLiteral("messageNotice"), tr("Note"));

  auto* footer = new QHBoxLayout;
  footer->setContentsMargins(0, 0, 0, 0);
  footer->setSpacing(2);
  statsLabel_ = new ElidedLabel(this);
  statsLabel_->setObjectName(QStringLiteral("messageStats"));
  statsLabel_->setExplanation(
      tr("Reply length, generation speed, time to the first token, and tokens "
         "reused from the cache"));
  statsLabel_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  scaleFont(statsLabel_, 0.88);
  useMutedText(statsLabel_);
  // One line, cut with "…" (the whole line in the tooltip): wrapped over
  // several lines it took the chat column's height, and widened it pushed
  // the conversation past the edge of a narrow window.
  statsLabel_->setAlignment(user ? Qt::AlignRight | Qt::AlignVCenter
                                 : Qt::AlignLeft | Qt::AlignVCenter);
  // A user message has no statistics: the stretch keeps its buttons right.
  if (user) footer->addStretch(1);
  switcher_ = new BranchSwitcher(this);
  connect(switcher_, &BranchSwitcher::stepRequested, this,
          [this](int step) { emit branchSwitchRequested(message_.id, step); });
  footer->addWidget(switcher_);
  footer->addWidget(statsLabel_, 1);
  // Delete shows only once there are other versions: first in the row of
  // right-aligned buttons, so that appearing after Regenerate it moves none
  // of the others from under the pointer.
  deleteBranchButton_ =
      addAction(QStringLiteral("deleteBranchButton"), tr("Delete"), tr("Delete this version"),
                tr("Delete this version and everything that follows it"));
  connect(deleteBranchButton_, &QToolButton::clicked, this,
          [this] { emit deleteBranchRequested(message_.id); });
  footer->addWidget(deleteBranchButton_);
  copyButton_ = addAction(QStringLiteral("copyMessageButton"), tr("Copy"), tr("Copy message"),
                          tr("Copy the message's text to the clipboard"));
  connect(copyButton_, &QToolButton::clicked, this, &MessageWidget::copyMessage);
  footer->addWidget(copyButton_);
  if (user) {
    editButton_ = addAction(QStringLiteral("editButton"), tr("Edit"), tr("Edit and resend"),
                            tr("Edit this message and send it again"));
    connect(editButton_, &QToolButton::clicked, this, &MessageWidget::startEditing);
    footer->addWidget(editButton_);
  }
  if (role == Role::Assistant) {
    regenerateButton_ = addAction(QStringLiteral("regenerateButton"), tr("Regenerate"),
                                  tr("Regenerate reply"), tr("Generate this reply again"));
    connect(regenerateButton_, &QToolButton::clicked, this,
            [this] { emit regenerateRequested(message_.id); });
    footer->addWidget(regenerateButton_);
    retryButton_ = addAction(QStringLiteral("retryButton"), tr("Retry"), tr("Retry the reply"),
                             tr("Ask for this reply again, with the settings as they are now"));
    connect(retryButton_, &QToolButton::clicked, this,
            [this] { emit retryRequested(message_.id); });
    footer->addWidget(retryButton_);
  }
  branchButton_ = addAction(QStringLiteral("branchButton"), tr("Branch"), tr("Branch from here"),
                            tr("Start a new chat with the conversation up to this message"));
  connect(branchButton_, &QToolButton::clicked, this,
          [this] { emit branchFromHereRequested(message_.id); });
  footer->addWidget(branchButton_);
  root->addLayout(footer);
}

QToolButton* MessageWidget::addAction(const QString& name, const QString& text,
                                      const QString& accessible, const QString& tip) {
  auto* button = new QToolButton(this);
  button->setObjectName(name);
  button->setText(text);
  button->setAccessibleName(accessible);
  button->setToolTip(tip);
  button->setAutoRaise(true);
  button->setCursor(Qt::PointingHandCursor);
  scaleFont(button, 0.88);
  return button;
}

void MessageWidget::setMessage(const ChatMessageView& message) {
  const bool textChanged = !rendered_ || message.text != message_.text;
  const bool foldedBefore = rendered_ && isFolded();
  message_ = message;
  setProperty("messageId", message.id);
  // Only a finished message folds: a stream keeps growing in view.
  if (textChanged) foldable_ = !message_.streaming && foldedText(message_.text).has_value();
  if (textChanged || foldedBefore != isFolded()) renderBody();
  rendered_ = true;
  images_->setImages(message_.images);
  syncToolCalls();
  updateChrome();
}

void MessageWidget::setBranchingAvailable(bool available) {
  branchingAvailable_ = available;
  updateChrome();
}

void MessageWidget::setRegenerateAvailable(bool available) {
  regenerateAvailable_ = available;
  updateChrome();
}

void MessageWidget::setRetryAvailable(bool available) {
  retryAvailable_ = available;
  updateChrome();
}

bool MessageWidget::isEditing() const {
  return editorArea_ && editorArea_->isVisible();
}

void MessageWidget::renderBody() {
  if (plainView_)
    renderPlain();
  else
    renderMarkdown();
}

QString MessageWidget::shownText() const {
  if (!isFolded()) return message_.text;
  return foldedText(message_.text).value_or(message_.text);
}

void MessageWidget::toggleFold() {
  if (!foldable_) return;
  expanded_ = !expanded_;
  renderBody();
  updateChrome();
}

void MessageWidget::renderPlain() {
  const QString text = shownText();
  plainView_->setPlainText(text);
  const int margins = 2 * static_cast<int>(plainView_->document()->documentMargin()) + 4;
  plainView_->setPreferredWidth(naturalTextWidth(text, plainView_->fontMetrics()) + margins);
}

void MessageWidget::renderMarkdown() {
  const QList<MarkdownSegment> segments = splitFencedCode(shownText());
  std::size_t i = 0;
  for (; i < static_cast<std::size_t>(segments.size()); ++i) {
    const MarkdownSegment& segment = segments[static_cast<qsizetype>(i)];
    if (i < parts_.size() && parts_[i].segment.kind != segment.kind) {
      // The shape changed (rare: a fence re-read differently); rebuild the tail.
      for (std::size_t j = i; j < parts_.size(); ++j)
        delete parts_[j].widget;
      parts_.resize(i);
    }
    if (i == parts_.size()) {
      QWidget* widget = nullptr;
      if (segment.kind == MarkdownSegment::Kind::Code) {
        widget = new CodeBlockWidget(bubble_);
      } else {
        auto* view = new DocumentView(bubble_);
        view->setObjectName(QStringLiteral("messageText"));
        view->setAccessibleName(tr("Reply text"));
        widget = view;
      }
      bodyLayout_->addWidget(widget);
      parts_.push_back({MarkdownSegment{segment.kind, {}, {}, false}, widget});
    }
    Part& part = parts_[i];
    if (part.segment == segment) continue;
    if (segment.kind == MarkdownSegment::Kind::Code)
      static_cast<CodeBlockWidget*>(part.widget)->setCode(segment.text, segment.language);
    else
      quire::ui::renderMarkdown(static_cast<DocumentView*>(part.widget)->document(), segment.text,
                                palette());
    part.segment = segment;
  }
  for (std::size_t j = i; j < parts_.size(); ++j)
    delete parts_[j].widget;
  parts_.resize(i);
}

// A hairline, a muted line of text, a hairline: where the model's context
// resumes after turns a context policy dropped.
QWidget* MessageWidget::buildContextDivider() {
  auto* divider = new QWidget(this);
  divider->setObjectName(QStringLiteral("contextDivider"));
  auto* layout = new QHBoxLayout(divider);
  layout->setContentsMargins(0, 2, 0, 6);
  auto line = [divider] {
    auto* rule = new QFrame(divider);
    rule->setFrameShape(QFrame::HLine);
    rule->setFrameShadow(QFrame::Plain);
    rule->setEnabled(false);
    return rule;
  };
  auto* text = new QLabel(tr("Earlier messages are not in the model's context"), divider);
  text->setObjectName(QStringLiteral("contextDividerText"));
  scaleFont(text, 0.88);
  useMutedText(text);
  divider->setToolTip(
      tr("The chat outgrew the context, and its context policy dropped the messages above "
         "back to the previous divider. The model no longer reads them; they stay in the "
         "chat. Chat settings choose the policy."));
  layout->addWidget(line(), 1);
  layout->addWidget(text);
  layout->addWidget(line(), 1);
  divider->hide();
  return divider;
}

void MessageWidget::updateChrome() {
  const bool assistant = message_.role == Role::Assistant;
  contextDivider_->setVisible(message_.contextResumesHere);
  progressLabel_->setVisible(assistant && message_.streaming);
  errorLabel_->setText(QStringLiteral("⚠  ") + message_.error);
  errorFrame_->setVisible(!message_.error.isEmpty());
  noticeLabel_->setText(message_.notice);
  noticeFrame_->setVisible(!message_.notice.isEmpty());
  foldButton_->setVisible(foldable_ && !message_.streaming && !isEditing());
  foldButton_->setText(isFolded() ? tr("Show all") : tr("Show less"));
  foldButton_->setAccessibleName(isFolded() ? tr("Show all of the message")
                                            : tr("Fold the message"));
  // A foldable message has more than 40 characters: the plural always fits.
  foldButton_->setToolTip(isFolded() ? tr("Show the whole message (%1 characters)")
                                           .arg(QLocale().toString(message_.text.size()))
                                     : tr("Fold the message to its beginning"));
  statsLabel_->setFullText(message_.stats);
  statsLabel_->setVisible(!message_.stats.isEmpty() && !message_.streaming);
  copyButton_->setVisible(!message_.text.isEmpty() && !message_.streaming && !isEditing());
  if (editButton_) editButton_->setVisible(!isEditing());
  if (regenerateButton_) regenerateButton_->setVisible(regenerateAvailable_ && !message_.streaming);
  if (retryButton_) retryButton_->setVisible(retryAvailable_ && !message_.streaming);
  switcher_->setPosition(message_.siblingIndex, message_.siblingCount);
  // While a reply streams its chat stays on its branch.
  switcher_->setEnabled(!message_.streaming && branchingAvailable_);
  branchButton_->setVisible(!message_.streaming && !isEditing());
  // Only one of several versions can go: deleting the only one would cut the
  // conversation short, which is not what a version switcher offers.
  deleteBranchButton_->setVisible(message_.siblingCount > 1 && !message_.streaming &&
                                  !isEditing() && branchingAvailable_);
}

void MessageWidget::resizeEvent(QResizeEvent* event) {
  QWidget::resizeEvent(event);
  updateBubbleWidth();
}

void MessageWidget::updateBubbleWidth() {
  if (message_.role != Role::User) return;
  const int share = static_cast<int>(width() * kUserBubbleShare);
  bubble_->setMaximumWidth(share);
  bubble_->setMinimumWidth(isEditing() ? share : 0);
}

void MessageWidget::startEditing() {
  if (!editorArea_ || isEditing()) return;
  editor_->setPlainText(message_.text);
  editor_->moveCursor(QTextCursor::End);
  plainView_->hide();
  editorArea_->show();
  updateBubbleWidth();
  fitEditor();
  updateChrome();
  editor_->setFocus(Qt::OtherFocusReason);
}

void MessageWidget::cancelEditing() {
  if (!isEditing()) return;
  editorArea_->hide();
  plainView_->show();
  updateBubbleWidth();
  updateChrome();
}

void MessageWidget::submitEdit() {
  const QString text = editor_->toPlainText().trimmed();
  if (text.isEmpty()) return;
  const qint64 id = message_.id;
  cancelEditing();
  // The app answers by replacing the conversation from this message on; it
  // may do so synchronously, so nothing of `this` is used after the emit.
  emit editRequested(id, text);
}

void MessageWidget::fitEditor() {
  const int lines = std::clamp(editor_->document()->lineCount(), 2, kEditorMaxLines);
  const int frame = 2 * editor_->frameWidth();
  const int margins = 2 * static_cast<int>(editor_->document()->documentMargin());
  editor_->setFixedHeight(lines * editor_->fontMetrics().lineSpacing() + frame + margins + 2);
}

bool MessageWidget::eventFilter(QObject* watched, QEvent* event) {
  if (watched == editor_ && event->type() == QEvent::ShortcutOverride &&
      static_cast<QKeyEvent*>(event)->key() == Qt::Key_Escape) {
    // Esc cancels the edit here, before the window's "Stop reply" shortcut
    // can take it while a reply runs.
    event->accept();
    return true;
  }
  if (watched == editor_ && event->type() == QEvent::KeyPress) {
    const auto* key = static_cast<QKeyEvent*>(event);
    if (key->key() == Qt::Key_Escape) {
      cancelEditing();
      return true;
    }
    if (isReturn(key) && !(key->modifiers() & Qt::ShiftModifier)) {
      submitEdit();
      return true;
    }
  }
  return QWidget::eventFilter(watched, event);
}

void MessageWidget::copyMessage() {
  QGuiApplication::clipboard()->setText(message_.text);
  copyButton_->setText(tr("Copied"));
  QTimer::singleShot(kCopiedFeedbackMs, copyButton_,
                     [button = copyButton_] { button->setText(MessageWidget::tr("Copy")); });
}

}  // namespace quire::ui
