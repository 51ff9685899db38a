#include "branch_switcher.h"

#include <QHBoxLayout>
#include <QLabel>
#include <QToolButton>

#include "chat_style.h"

namespace quire::ui {

BranchSwitcher::BranchSwitcher(QWidget* parent) : QWidget(parent) {
  setObjectName(QStringLiteral("branchSwitcher"));
  auto* layout = new QHBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->setSpacing(0);

  const auto arrow = [this](const QString& name, const QString& text, const QString& accessible) {
    auto* button = new QToolButton(this);
    button->setObjectName(name);
    button->setText(text);
    button->setAccessibleName(accessible);
    button->setToolTip(accessible);
    button->setAutoRaise(true);
    button->setCursor(Qt::PointingHandCursor);
    scaleFont(button, 0.88);
    return button;
  };
  previous_ =
      arrow(QStringLiteral("previousBranchButton"), QStringLiteral("‹"), tr("Previous version"));
  next_ = arrow(QStringLiteral("nextBranchButton"), QStringLiteral("›"), tr("Next version"));
  position_ = new QLabel(this);
  position_->setObjectName(QStringLiteral("branchPosition"));
  scaleFont(position_, 0.88);
  useMutedText(position_);

  layout->addWidget(previous_);
  layout->addWidget(position_);
  layout->addWidget(next_);
  connect(previous_, &QToolButton::clicked, this, [this] { emit stepRequested(-1); });
  connect(next_, &QToolButton::clicked, this, [this] { emit stepRequested(+1); });
  setPosition(0, 1);
}

void BranchSwitcher::setPosition(int index, int count) {
  index_ = index;
  count_ = count;
  position_->setText(QStringLiteral("%1/%2").arg(index + 1).arg(count));
  position_->setAccessibleName(tr("Version %1 of %2").arg(index + 1).arg(count));
  previous_->setEnabled(index > 0);
  next_->setEnabled(index + 1 < count);
  setVisible(count > 1);
}

}  // namespace quire::ui
