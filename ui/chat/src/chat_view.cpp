#include "quire/ui/chat_view.h"

#include <QApplication>
#include <QEvent>
#include <QLabel>
#include <QScrollArea>
#include <QScrollBar>
#include <QStackedWidget>
#include <QTimer>
#include <QToolButton>
#include <QVBoxLayout>
#include <algorithm>
#include <utility>

#include "branch_undo_bar.h"
#include "chat_style.h"
#include "message_widget.h"

namespace quire::ui {
namespace {

constexpr int kRenderIntervalMs = 1000 / ChatView::kMaxRendersPerSecond;
// Lines longer than this are hard to read; wide windows get side margins.
constexpr int kColumnMaxWidth = 860;
constexpr int kSidePadding = 20;
// Within this many pixels of the end still counts as "at the bottom".
constexpr int kPinSlackPx = 8;
// Older messages are built once the top of the view comes this close.
constexpr int kHistoryMarginPx = 240;

}  // namespace

ChatView::ChatView(QWidget* parent) : QWidget(parent) {
  setAccessibleName(tr("Conversation"));
  auto* root = new QVBoxLayout(this);
  root->setContentsMargins(0, 0, 0, 0);
  root->setSpacing(0);
  branchUndo_ = new BranchUndoBar(this);
  connect(branchUndo_, &BranchUndoBar::undoRequested, this, &ChatView::undoDeleteBranchRequested);
  root->addWidget(branchUndo_);
  stack_ = new QStackedWidget(this);
  root->addWidget(stack_);

  emptyState_ = new QWidget(stack_);
  emptyState_->setObjectName(QStringLiteral("emptyState"));
  emptyState_->setBackgroundRole(QPalette::Base);
  emptyState_->setAutoFillBackground(true);
  auto* emptyLayout = new QVBoxLayout(emptyState_);
  emptyTitle_ = new QLabel(emptyState_);
  emptyTitle_->setAlignment(Qt::AlignCenter);
  scaleFont(emptyTitle_, 1.45, true);
  emptyHint_ = new QLabel(emptyState_);
  emptyHint_->setAlignment(Qt::AlignCenter);
  emptyHint_->setWordWrap(true);
  useMutedText(emptyHint_);
  emptyLayout->addStretch(3);
  emptyLayout->addWidget(emptyTitle_);
  emptyLayout->addSpacing(6);
  emptyLayout->addWidget(emptyHint_);
  emptyLayout->addStretch(4);
  setEmptyStateText(tr("Start a conversation"),
                    tr("Ask anything: replies are generated on this computer.\n"
                       "Enter sends, Shift+Enter starts a new line."));

  scroll_ = new QScrollArea(stack_);
  scroll_->setFrameShape(QFrame::NoFrame);
  scroll_->setWidgetResizable(true);
  scroll_->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
  scroll_->viewport()->setBackgroundRole(QPalette::Base);
  scroll_->viewport()->installEventFilter(this);
  content_ = new QWidget(scroll_);
  content_->setAutoFillBackground(false);
  column_ = new QVBoxLayout(content_);
  column_->setSpacing(22);
  column_->setContentsMargins(kSidePadding, 20, kSidePadding, 24);
  column_->addStretch(1);  // stays last: a short conversation sits at the top
  scroll_->setWidget(content_);

  stack_->addWidget(emptyState_);
  stack_->addWidget(scroll_);

  jumpButton_ = new QToolButton(this);
  jumpButton_->setObjectName(QStringLiteral("jumpToLatestButton"));
  jumpButton_->setText(tr("↓ Latest"));
  jumpButton_->setToolTip(tr("Scroll to the latest message and follow new text"));
  jumpButton_->setAccessibleName(tr("Scroll to the latest message"));
  jumpButton_->setCursor(Qt::PointingHandCursor);
  jumpButton_->hide();
  connect(jumpButton_, &QToolButton::clicked, this, &ChatView::scrollToBottom);

  renderTimer_ = new QTimer(this);
  renderTimer_->setSingleShot(true);
  connect(renderTimer_, &QTimer::timeout, this, &ChatView::flushPendingRenders);
  sinceRender_.start();

  QScrollBar* bar = scroll_->verticalScrollBar();
  connect(bar, &QScrollBar::valueChanged, this, &ChatView::onScrollValueChanged);
  connect(bar, &QScrollBar::rangeChanged, this, &ChatView::onScrollRangeChanged);
  buildKeyboardActions();
  refreshEmptyState();
}

ChatView::~ChatView() {
  // Children outlive this body; nothing they emit may reach a half-destroyed view.
  scroll_->verticalScrollBar()->disconnect(this);
  renderTimer_->stop();
}

void ChatView::setEmptyStateText(const QString& title, const QString& hint) {
  emptyTitle_->setText(title);
  emptyHint_->setText(hint);
}

void ChatView::offerBranchUndo(qint64 id) {
  branchUndo_->offer(id);
}

void ChatView::dismissBranchUndo() {
  branchUndo_->dismiss();
}

bool ChatView::isBranchUndoVisible() const {
  return !branchUndo_->isHidden();
}

void ChatView::setBranchUndoTimeout(int milliseconds) {
  branchUndo_->setTimeout(milliseconds);
}

void ChatView::setBranchSwitchingEnabled(bool enabled) {
  if (branchSwitching_ == enabled) return;
  branchSwitching_ = enabled;
  refreshActions();
}

bool ChatView::isShowingEmptyState() const {
  return stack_->currentWidget() == emptyState_;
}

std::optional<ChatMessageView> ChatView::message(qint64 id) const {
  if (const auto index = indexOf(id)) return messages_[*index];
  return std::nullopt;
}

std::optional<qsizetype> ChatView::indexOf(qint64 id) const {
  const auto it = indexById_.constFind(id);
  if (it == indexById_.cend()) return std::nullopt;
  return *it;
}

void ChatView::reindex() {
  indexById_.clear();
  for (qsizetype i = 0; i < messages_.size(); ++i)
    indexById_.insert(messages_[i].id, i);
}

void ChatView::setMessages(const QList<ChatMessageView>& messages) {
  discardWidgets();
  messages_ = messages;
  widgets_.assign(static_cast<std::size_t>(messages_.size()), nullptr);
  reindex();
  dirty_.clear();
  renderTimer_->stop();
  keepFromBottom_.reset();
  pinned_ = true;
  const qsizetype first = std::max<qsizetype>(0, messages_.size() - kInitialBatch);
  for (qsizetype i = first; i < messages_.size(); ++i)
    column_->insertWidget(static_cast<int>(i - first), buildWidget(i));
  firstBuilt_ = first;
  refreshActions();
  refreshEmptyState();
  scrollToBottom();
}

void ChatView::clear() {
  setMessages({});
}

void ChatView::appendMessage(const ChatMessageView& message) {
  if (indexById_.contains(message.id)) {
    updateMessage(message);
    return;
  }
  const qsizetype index = messages_.size();
  messages_.push_back(message);
  widgets_.push_back(nullptr);
  indexById_.insert(message.id, index);
  column_->insertWidget(static_cast<int>(index - firstBuilt_), buildWidget(index));
  refreshActions();
  refreshEmptyState();
}

void ChatView::updateMessage(const ChatMessageView& message) {
  const auto index = indexOf(message.id);
  if (!index) return;
  messages_[*index] = message;
  dirty_.remove(message.id);
  if (MessageWidget* widget = widgets_[static_cast<std::size_t>(*index)]) {
    widget->setMessage(message);
    ++renderCount_;
  }
  refreshActions();
}

void ChatView::updateToolCall(qint64 messageId, const ToolCallView& call) {
  const auto index = indexOf(messageId);
  if (!index) return;
  QList<ToolCallView>& calls = messages_[*index].toolCalls;
  const auto it = std::find_if(calls.begin(), calls.end(),
                               [&call](const ToolCallView& known) { return known.id == call.id; });
  if (it == calls.end())
    calls.push_back(call);
  else
    *it = call;
  // Only the card: the reply's text, perhaps long and still streaming, stays.
  if (MessageWidget* widget = widgets_[static_cast<std::size_t>(*index)])
    widget->updateToolCall(call);
}

void ChatView::appendToMessage(qint64 id, const QString& delta) {
  const auto index = indexOf(id);
  if (!index || delta.isEmpty()) return;
  messages_[*index].text += delta;
  if (widgets_[static_cast<std::size_t>(*index)]) {
    dirty_.insert(id);
    scheduleRender();
  }
}

void ChatView::removeMessage(qint64 id) {
  const auto index = indexOf(id);
  if (!index) return;
  const auto slot = static_cast<std::size_t>(*index);
  if (MessageWidget* widget = widgets_[slot]) {
    column_->removeWidget(widget);
    widget->hide();
    widget->setParent(nullptr);
    widget->deleteLater();
  }
  messages_.removeAt(*index);
  widgets_.erase(widgets_.begin() + static_cast<std::ptrdiff_t>(slot));
  if (*index < firstBuilt_) --firstBuilt_;
  dirty_.remove(id);
  reindex();
  refreshActions();
  refreshEmptyState();
}

void ChatView::discardWidgets() {
  // Deleted later: the app may rebuild the conversation from inside a signal
  // of one of these widgets (edit and resend).
  for (MessageWidget*& widget : widgets_) {
    if (!widget) continue;
    column_->removeWidget(widget);
    widget->hide();
    widget->setParent(nullptr);
    widget->deleteLater();
    widget = nullptr;
  }
}

MessageWidget* ChatView::buildWidget(qsizetype index) {
  auto* widget = new MessageWidget(messages_[index], content_);
  widget->setBranchingAvailable(branchSwitching_);
  connect(widget, &MessageWidget::editRequested, this, &ChatView::editRequested);
  connect(widget, &MessageWidget::regenerateRequested, this, &ChatView::regenerateRequested);
  connect(widget, &MessageWidget::retryRequested, this, &ChatView::retryRequested);
  connect(widget, &MessageWidget::branchSwitchRequested, this, &ChatView::branchSwitchRequested);
  connect(widget, &MessageWidget::branchFromHereRequested, this,
          &ChatView::branchFromHereRequested);
  connect(widget, &MessageWidget::deleteBranchRequested, this, &ChatView::deleteBranchRequested);
  connect(widget, &MessageWidget::toolCallDecided, this, &ChatView::toolCallDecided);
  connect(widget, &MessageWidget::imageOpenRequested, this, &ChatView::imageOpenRequested);
  connect(widget, &MessageWidget::toolCallCancelRequested, this,
          &ChatView::toolCallCancelRequested);
  widgets_[static_cast<std::size_t>(index)] = widget;
  ++renderCount_;
  return widget;
}

void ChatView::queueBuildOlder() {
  if (buildOlderQueued_) return;
  buildOlderQueued_ = true;
  QTimer::singleShot(0, this, &ChatView::buildOlder);
}

void ChatView::buildOlder() {
  buildOlderQueued_ = false;
  if (firstBuilt_ == 0) return;
  const QScrollBar* bar = scroll_->verticalScrollBar();
  if (!pinned_) keepFromBottom_ = bar->maximum() - bar->value();
  const qsizetype count = std::min<qsizetype>(kHistoryBatch, firstBuilt_);
  for (qsizetype k = 1; k <= count; ++k)
    column_->insertWidget(0, buildWidget(firstBuilt_ - k));
  firstBuilt_ -= count;
}

void ChatView::releaseOlder() {
  // Back at the end, the widgets of old messages only cost layout time: every
  // render of a streaming reply lays out all built messages.
  releaseQueued_ = false;
  if (!pinned_) return;
  qsizetype keepFrom = messages_.size() - kInitialBatch;
  const QWidget* focus = QApplication::focusWidget();
  for (qsizetype i = firstBuilt_; i < keepFrom; ++i) {
    const MessageWidget* widget = widgets_[static_cast<std::size_t>(i)];
    if (widget->isEditing() || (focus && widget->isAncestorOf(focus))) keepFrom = i;
  }
  for (qsizetype i = firstBuilt_; i < keepFrom; ++i) {
    MessageWidget*& widget = widgets_[static_cast<std::size_t>(i)];
    column_->removeWidget(widget);
    widget->hide();
    widget->setParent(nullptr);
    widget->deleteLater();
    widget = nullptr;
  }
  firstBuilt_ = std::max(firstBuilt_, keepFrom);
}

void ChatView::scheduleRender() {
  if (renderTimer_->isActive()) return;
  const qint64 wait = kRenderIntervalMs - sinceRender_.elapsed();
  renderTimer_->start(static_cast<int>(std::max<qint64>(0, wait)));
}

void ChatView::flushPendingRenders() {
  renderTimer_->stop();
  const QSet<qint64> ids = std::exchange(dirty_, {});
  for (const qint64 id : ids) {
    const auto index = indexOf(id);
    if (!index) continue;
    if (MessageWidget* widget = widgets_[static_cast<std::size_t>(*index)]) {
      widget->setMessage(messages_[*index]);
      ++renderCount_;
    }
  }
  if (!ids.isEmpty()) sinceRender_.restart();
}

void ChatView::refreshActions() {
  // Regenerate belongs to the conversation's last message, when it is a
  // finished reply: regenerating an older one would orphan what follows.
  const qsizetype last = messages_.size() - 1;
  const bool canRegenerate = lastReplyCanRegenerate();
  const bool canRetry = lastReplyCanRetry();
  for (qsizetype i = firstBuilt_; i < messages_.size(); ++i) {
    if (MessageWidget* widget = widgets_[static_cast<std::size_t>(i)]) {
      widget->setRegenerateAvailable(i == last && canRegenerate);
      widget->setRetryAvailable(i == last && canRetry);
      widget->setBranchingAvailable(branchSwitching_);
    }
  }
  refreshKeyboardActions();
}

void ChatView::refreshEmptyState() {
  stack_->setCurrentWidget(messages_.isEmpty() ? emptyState_ : static_cast<QWidget*>(scroll_));
  placeJumpButton();
}

void ChatView::scrollToBottom() {
  pinned_ = true;
  keepFromBottom_.reset();
  QScrollBar* bar = scroll_->verticalScrollBar();
  adjustingScroll_ = true;
  bar->setValue(bar->maximum());
  adjustingScroll_ = false;
  placeJumpButton();
  queueReleaseOlder();
}

void ChatView::onScrollValueChanged(int value) {
  if (adjustingScroll_) return;
  // Only the user moves the bar here: our own moves are fenced off above.
  const QScrollBar* bar = scroll_->verticalScrollBar();
  pinned_ = value >= bar->maximum() - kPinSlackPx;
  keepFromBottom_.reset();
  placeJumpButton();
  if (firstBuilt_ > 0 && value <= kHistoryMarginPx) queueBuildOlder();
  if (pinned_) queueReleaseOlder();
}

void ChatView::queueReleaseOlder() {
  if (releaseQueued_ || builtMessageCount() <= kInitialBatch + kHistoryBatch) return;
  releaseQueued_ = true;
  QTimer::singleShot(0, this, &ChatView::releaseOlder);
}

void ChatView::onScrollRangeChanged(int, int maximum) {
  QScrollBar* bar = scroll_->verticalScrollBar();
  adjustingScroll_ = true;
  if (pinned_)
    bar->setValue(maximum);
  else if (keepFromBottom_)
    bar->setValue(maximum - *keepFromBottom_);
  // Otherwise the value stays: text growing below does not move what is read.
  adjustingScroll_ = false;
  placeJumpButton();
  if (firstBuilt_ > 0 && bar->value() <= kHistoryMarginPx) queueBuildOlder();
}

void ChatView::placeJumpButton() {
  const bool show =
      !pinned_ && !isShowingEmptyState() && scroll_->verticalScrollBar()->maximum() > 0;
  jumpButton_->setVisible(show);
  if (!show) return;
  jumpButton_->adjustSize();
  const int scrollBarWidth = scroll_->verticalScrollBar()->width();
  jumpButton_->move(width() - jumpButton_->width() - scrollBarWidth - 16,
                    height() - jumpButton_->height() - 16);
  jumpButton_->raise();
}

void ChatView::resizeEvent(QResizeEvent* event) {
  QWidget::resizeEvent(event);
  placeJumpButton();
}

bool ChatView::eventFilter(QObject* watched, QEvent* event) {
  if (watched == scroll_->viewport() && event->type() == QEvent::Resize) {
    const int side = std::max(kSidePadding, (scroll_->viewport()->width() - kColumnMaxWidth) / 2);
    const QMargins margins = column_->contentsMargins();
    if (margins.left() != side)
      column_->setContentsMargins(side, margins.top(), side, margins.bottom());
  }
  return QWidget::eventFilter(watched, event);
}

}  // namespace quire::ui
