#include "branch_undo_bar.h"

#include <QHBoxLayout>
#include <QLabel>
#include <QTimer>
#include <QToolButton>
#include <utility>

#include "chat_style.h"

namespace quire::ui {

BranchUndoBar::BranchUndoBar(QWidget* parent) : QWidget(parent) {
  setObjectName(QStringLiteral("branchUndoBar"));
  // The margins belong to the bar, so that hidden it takes no room at all.
  auto* outer = new QHBoxLayout(this);
  outer->setContentsMargins(20, 8, 20, 0);
  auto* frame = new TintedFrame(Tint::CodeHeader, this);
  frame->setRadius(8);
  outer->addWidget(frame);
  auto* layout = new QHBoxLayout(frame);
  layout->setContentsMargins(12, 4, 4, 4);
  label_ = new QLabel(tr("Deleted a version of this conversation"), frame);
  label_->setObjectName(QStringLiteral("branchUndoLabel"));
  button_ = new QToolButton(frame);
  button_->setObjectName(QStringLiteral("branchUndoButton"));
  button_->setText(tr("Undo"));
  button_->setAccessibleName(tr("Undo delete"));
  button_->setToolTip(tr("Bring the deleted version back"));
  button_->setCursor(Qt::PointingHandCursor);
  layout->addWidget(label_, 1);
  layout->addWidget(button_);

  timer_ = new QTimer(this);
  timer_->setSingleShot(true);
  connect(timer_, &QTimer::timeout, this, &BranchUndoBar::dismiss);
  connect(button_, &QToolButton::clicked, this, &BranchUndoBar::undo);
  hide();
}

void BranchUndoBar::offer(qint64 id) {
  pending_ = id;
  show();
  timer_->start(timeoutMs_);
}

void BranchUndoBar::dismiss() {
  timer_->stop();
  pending_.reset();
  hide();
}

void BranchUndoBar::undo() {
  const std::optional<qint64> id = std::exchange(pending_, std::nullopt);
  dismiss();
  if (id) emit undoRequested(*id);
}

}  // namespace quire::ui
