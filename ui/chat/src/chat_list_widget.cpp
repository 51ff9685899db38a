#include "quire/ui/chat_list_widget.h"

#include <QAction>
#include <QEvent>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QListView>
#include <QPushButton>
#include <QTimer>
#include <QToolButton>
#include <QVBoxLayout>
#include <utility>

#include "chat_list_delegate.h"
#include "chat_list_proxy.h"
#include "chat_style.h"

namespace quire::ui {
namespace {

constexpr int kUndoTitleChars = 32;

QString shortTitle(const QString& title) {
  if (title.size() <= kUndoTitleChars) return title;
  return title.left(kUndoTitleChars - 1) + u'…';
}

}  // namespace

ChatListWidget::ChatListWidget(QWidget* parent) : QWidget(parent) {
  setAccessibleName(tr("Chats"));
  auto* root = new QVBoxLayout(this);
  root->setContentsMargins(8, 8, 8, 8);
  root->setSpacing(8);

  newButton_ = new QPushButton(tr("+  New chat"), this);
  newButton_->setObjectName(QStringLiteral("newChatButton"));
  newButton_->setAccessibleName(tr("New chat"));
  newButton_->setToolTip(tr("Start a new chat (Ctrl+N)"));
  newButton_->setCursor(Qt::PointingHandCursor);
  root->addWidget(newButton_);

  search_ = new QLineEdit(this);
  search_->setObjectName(QStringLiteral("chatSearch"));
  search_->setPlaceholderText(tr("Search chats"));
  search_->setAccessibleName(tr("Search chats"));
  search_->setToolTip(tr("Shows chats whose title or messages contain the text"));
  search_->setClearButtonEnabled(true);
  root->addWidget(search_);

  proxy_ = new ChatListProxy(this);
  view_ = new QListView(this);
  view_->setObjectName(QStringLiteral("chatListView"));
  view_->setAccessibleName(tr("Chat list"));
  view_->setModel(proxy_);
  delegate_ = new ChatListDelegate(view_);
  view_->setItemDelegate(delegate_);
  view_->setUniformItemSizes(true);  // constant row height: fast with thousands of chats
  view_->setSelectionMode(QAbstractItemView::SingleSelection);
  view_->setEditTriggers(QAbstractItemView::NoEditTriggers);  // F2 and the menu rename
  view_->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
  view_->setFrameShape(QFrame::NoFrame);
  view_->setContextMenuPolicy(Qt::ActionsContextMenu);
  root->addWidget(view_, 1);

  emptyLabel_ = new QLabel(this);
  emptyLabel_->setObjectName(QStringLiteral("emptyListLabel"));
  emptyLabel_->setAlignment(Qt::AlignHCenter | Qt::AlignTop);
  emptyLabel_->setWordWrap(true);
  emptyLabel_->setContentsMargins(8, 24, 8, 8);
  useMutedText(emptyLabel_);
  root->addWidget(emptyLabel_, 1);

  undoBar_ = new TintedFrame(Tint::CodeHeader, this);
  undoBar_->setObjectName(QStringLiteral("undoBar"));
  undoBar_->setRadius(8);
  auto* undoLayout = new QHBoxLayout(undoBar_);
  undoLayout->setContentsMargins(10, 4, 4, 4);
  undoLabel_ = new QLabel(undoBar_);
  undoLabel_->setObjectName(QStringLiteral("undoLabel"));
  // The title is shortened to the label's width (elideUndoTitle), so the
  // label must not ask for the whole title's width.
  undoLabel_->setMinimumWidth(1);
  undoLabel_->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Preferred);
  undoLabel_->installEventFilter(this);
  undoButton_ = new QToolButton(undoBar_);
  undoButton_->setObjectName(QStringLiteral("undoButton"));
  undoButton_->setText(tr("Undo"));
  undoButton_->setAccessibleName(tr("Undo delete"));
  undoButton_->setToolTip(tr("Bring the deleted chat back"));
  undoButton_->setCursor(Qt::PointingHandCursor);
  undoLayout->addWidget(undoLabel_, 1);
  undoLayout->addWidget(undoButton_);
  undoBar_->hide();
  root->addWidget(undoBar_);

  undoTimer_ = new QTimer(this);
  undoTimer_->setSingleShot(true);
  searchTimer_ = new QTimer(this);
  searchTimer_->setSingleShot(true);
  searchTimer_->setInterval(kSearchDelayMs);

  // Window-wide: the user types in the message box most of the time, and a
  // key that works only once the list has focus looks broken. The list view
  // is hidden while there are no chats, so New chat lives on the widget itself.
  newAction_ = new QAction(tr("&New chat"), this);
  newAction_->setShortcut(QKeySequence::New);
  newAction_->setShortcutContext(Qt::WindowShortcut);
  addAction(newAction_);
  renameAction_ = new QAction(tr("&Rename chat"), view_);
  renameAction_->setShortcut(Qt::Key_F2);
  renameAction_->setShortcutContext(Qt::WindowShortcut);
  deleteAction_ = new QAction(tr("&Delete chat"), view_);
  deleteAction_->setShortcut(QKeySequence::Delete);
  deleteAction_->setShortcutContext(Qt::WindowShortcut);
  view_->addAction(renameAction_);
  view_->addAction(deleteAction_);
  // Ctrl+F is the platform's Find: here it finds chats, by title and text.
  searchAction_ = new QAction(tr("&Search chats"), this);
  searchAction_->setObjectName(QStringLiteral("searchChatsAction"));
  searchAction_->setShortcut(QKeySequence::Find);
  searchAction_->setShortcutContext(Qt::WindowShortcut);
  addAction(searchAction_);
  connect(searchAction_, &QAction::triggered, this, [this] {
    search_->setFocus(Qt::ShortcutFocusReason);
    search_->selectAll();
  });

  connect(newButton_, &QPushButton::clicked, this, &ChatListWidget::newChatRequested);
  connect(newAction_, &QAction::triggered, this, &ChatListWidget::newChatRequested);
  connect(renameAction_, &QAction::triggered, this, &ChatListWidget::renameCurrent);
  connect(deleteAction_, &QAction::triggered, this, &ChatListWidget::deleteCurrent);
  connect(undoButton_, &QToolButton::clicked, this, &ChatListWidget::undoDelete);
  connect(undoTimer_, &QTimer::timeout, this, &ChatListWidget::commitPendingDelete);
  connect(search_, &QLineEdit::textChanged, this, &ChatListWidget::onSearchEdited);
  connect(searchTimer_, &QTimer::timeout, this,
          [this] { emit searchChanged(search_->text().trimmed()); });
  connect(delegate_, &ChatListDelegate::renameCommitted, this, &ChatListWidget::onRenameCommitted);
  connect(view_->selectionModel(), &QItemSelectionModel::currentChanged, this,
          [this](const QModelIndex& current) { onCurrentChanged(current); });
  // A click on the row that is already current changes nothing in the view;
  // it still opens that chat when another one is on show.
  connect(view_, &QListView::clicked, this, [this](const QModelIndex& index) {
    if (!quietSelection_ && index.isValid()) onCurrentChanged(index);
  });
  for (auto signal : {&QAbstractItemModel::rowsInserted, &QAbstractItemModel::rowsRemoved})
    connect(proxy_, signal, this, &ChatListWidget::refreshEmptyLabel);
  connect(proxy_, &QAbstractItemModel::modelReset, this, &ChatListWidget::refreshEmptyLabel);
  connect(proxy_, &QAbstractItemModel::layoutChanged, this, &ChatListWidget::refreshEmptyLabel);
  refreshEmptyLabel();
}

// A deletion still undoable at this point is not announced: signals from a
// dying widget are unreliable, so the app finalises what it soft-deleted.
ChatListWidget::~ChatListWidget() {
  // The children outlive this body, and closing an open rename editor commits
  // it; nothing may reach this half-destroyed widget through a connection.
  for (QObject* sender : std::initializer_list<QObject*>{delegate_, view_->selectionModel(), proxy_,
                                                         search_, searchTimer_, undoTimer_})
    sender->disconnect(this);
}

void ChatListWidget::setModel(QAbstractItemModel* model) {
  refilter([&] { proxy_->setSourceModel(model); });
}

QAbstractItemModel* ChatListWidget::model() const {
  return proxy_->sourceModel();
}

QAbstractItemModel* ChatListWidget::viewModel() const {
  return proxy_;
}

QString ChatListWidget::searchText() const {
  return search_->text();
}

bool ChatListWidget::isUndoVisible() const {
  return !undoBar_->isHidden();
}

void ChatListWidget::setSearchText(const QString& text) {
  search_->setText(text);
}

void ChatListWidget::setTextMatches(const QString& text, const QList<qint64>& ids) {
  if (text.trimmed() != proxy_->searchText()) return;
  refilter([&] { proxy_->setTextMatches(QSet<qint64>(ids.begin(), ids.end())); });
}

void ChatListWidget::onSearchEdited(const QString& text) {
  refilter([&] { proxy_->setSearchText(text); });
  searchTimer_->start();
}

void ChatListWidget::refilter(const std::function<void()>& change) {
  // Rows leaving the view make it move its current row to a neighbour; that is
  // not the user picking another chat, so the open chat is put back instead.
  quietSelection_ = true;
  change();
  QItemSelectionModel* selection = view_->selectionModel();
  QModelIndex found;
  if (currentId_) {
    for (int row = 0; row < proxy_->rowCount() && !found.isValid(); ++row) {
      const QModelIndex index = proxy_->index(row, 0);
      if (index.data(ChatIdRole).toLongLong() == *currentId_) found = index;
    }
  }
  if (found.isValid())
    selection->setCurrentIndex(found, QItemSelectionModel::ClearAndSelect);
  else
    selection->clear();
  quietSelection_ = false;
  refreshEmptyLabel();
}

void ChatListWidget::setCurrentChat(qint64 id) {
  currentId_ = id;
  refilter([] {});
  if (view_->currentIndex().isValid()) view_->scrollTo(view_->currentIndex());
}

void ChatListWidget::clearCurrentChat() {
  currentId_.reset();
  refilter([] {});
}

void ChatListWidget::onCurrentChanged(const QModelIndex& current) {
  if (quietSelection_ || !current.isValid()) return;
  const qint64 id = current.data(ChatIdRole).toLongLong();
  if (currentId_ == id) return;
  currentId_ = id;
  emit chatSelected(id);
}

void ChatListWidget::renameCurrent() {
  const QModelIndex index = view_->currentIndex();
  if (!index.isValid()) return;
  view_->scrollTo(index);
  view_->edit(index);
}

void ChatListWidget::onRenameCommitted(const QModelIndex& index, const QString& title) {
  const QString trimmed = title.trimmed();
  if (!index.isValid() || trimmed.isEmpty() || trimmed == index.data(Qt::DisplayRole).toString())
    return;
  emit renameRequested(index.data(ChatIdRole).toLongLong(), trimmed);
}

void ChatListWidget::deleteCurrent() {
  const QModelIndex index = view_->currentIndex();
  if (!index.isValid()) return;
  const qint64 id = index.data(ChatIdRole).toLongLong();
  const QString title = index.data(Qt::DisplayRole).toString();
  // Only the latest deletion can be undone; an earlier one becomes final.
  commitPendingDelete();
  emit deleteRequested(id);
  showUndo(id, title);
}

void ChatListWidget::showUndo(qint64 id, const QString& title) {
  pendingDelete_ = id;
  undoTitle_ = title;
  undoLabel_->setToolTip(tr("Deleted “%1”").arg(title));
  undoBar_->show();
  elideUndoTitle();
  undoTimer_->start(undoTimeoutMs_);
}

void ChatListWidget::elideUndoTitle() {
  // "Deleted “…”" keeps its quotes and shortens the title inside them.
  const QFontMetrics metrics = undoLabel_->fontMetrics();
  const int frame = metrics.horizontalAdvance(tr("Deleted “%1”").arg(QString()));
  const int room = std::max(0, undoLabel_->contentsRect().width() - frame);
  const QString title = metrics.elidedText(shortTitle(undoTitle_), Qt::ElideRight, room);
  undoLabel_->setText(tr("Deleted “%1”").arg(title));
}

void ChatListWidget::addChatActions(const QList<QAction*>& actions) {
  view_->addActions(actions);
}

bool ChatListWidget::eventFilter(QObject* watched, QEvent* event) {
  if (watched == undoLabel_ && event->type() == QEvent::Resize) elideUndoTitle();
  return QWidget::eventFilter(watched, event);
}

void ChatListWidget::commitPendingDelete() {
  undoTimer_->stop();
  undoBar_->hide();
  if (!pendingDelete_) return;
  const qint64 id = *std::exchange(pendingDelete_, std::nullopt);
  emit deleteCommitted(id);
}

void ChatListWidget::undoDelete() {
  undoTimer_->stop();
  undoBar_->hide();
  if (!pendingDelete_) return;
  const qint64 id = *std::exchange(pendingDelete_, std::nullopt);
  emit undoDeleteRequested(id);
}

void ChatListWidget::refreshEmptyLabel() {
  // The label takes the list's place, so a hidden list leaves no blank area.
  const bool empty = proxy_->rowCount() == 0;
  emptyLabel_->setVisible(empty);
  view_->setVisible(!empty);
  if (!empty) return;
  const QString search = search_->text().trimmed();
  emptyLabel_->setText(search.isEmpty() ? tr("No chats yet.\nStart one with New chat.")
                                        : tr("No chats match “%1”.").arg(search));
}

}  // namespace quire::ui
