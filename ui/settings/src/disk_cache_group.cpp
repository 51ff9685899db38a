#include "quire/ui/disk_cache_group.h"

#include <QCheckBox>
#include <QFormLayout>
#include <QLabel>
#include <QPushButton>
#include <QSpinBox>
#include <QStringList>

#include "plan_text.h"
#include "quire/ui/settings_limits.h"

namespace quire::ui {

namespace {

// Folder names are 32 hex digits; eight tell two models apart on screen.
constexpr int kIdentityDigits = 8;

QString pages_text(qint64 pages) {
  return pages == 1 ? QStringLiteral("1 page")
                    : QStringLiteral("%1 pages").arg(plan_text::tokens(pages));
}

}  // namespace

QString disk_cache_usage_text(const DiskCacheUsageView& usage) {
  if (!usage.error.isEmpty()) return usage.error;
  QStringList lines;
  for (const DiskCacheModelUsage& model : usage.models) {
    const QString who =
        model.name.isEmpty()
            ? QStringLiteral("Other model %1").arg(model.identity.left(kIdentityDigits))
            : QStringLiteral("%1 (loaded)").arg(model.name);
    lines << QStringLiteral("%1: %2 in %3")
                 .arg(who, plan_text::bytes(model.bytes), pages_text(model.pages));
  }
  if (lines.isEmpty()) return QStringLiteral("Empty");
  return lines.join(u'\n');
}

DiskCacheGroup::DiskCacheGroup(QWidget* parent) : QGroupBox(tr("Disk cache"), parent) {
  setObjectName(QStringLiteral("diskCacheGroup"));
  auto* form = new QFormLayout(this);

  enabled_ = new QCheckBox(tr("Keep chats' cache pages on disk"), this);
  enabled_->setObjectName(QStringLiteral("diskCacheEnabled"));
  enabled_->setToolTip(
      tr("A chat resumes after a restart, or after another model was loaded, without its "
         "whole conversation being read again."));
  form->addRow(QString(), enabled_);

  limit_ = new QSpinBox(this);
  limit_->setObjectName(QStringLiteral("diskCacheMib"));
  limit_->setRange(limits::kDiskCacheMib.min, limits::kDiskCacheMib.max);
  limit_->setSingleStep(512);
  limit_->setSuffix(tr(" MiB"));
  limit_->setGroupSeparatorShown(true);
  limit_->setToolTip(
      tr("For every model's pages together; the least recently used go first, shared "
         "beginnings of chats last."));
  form->addRow(tr("Size limit"), limit_);

  folder_ = new QLabel(this);
  folder_->setObjectName(QStringLiteral("diskCacheFolder"));
  folder_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  folder_->setWordWrap(true);
  form->addRow(tr("Folder"), folder_);

  usage_label_ = new QLabel(this);
  usage_label_->setObjectName(QStringLiteral("diskCacheUsage"));
  usage_label_->setWordWrap(true);
  form->addRow(tr("In use"), usage_label_);

  clear_ = new QPushButton(tr("Clear…"), this);
  clear_->setObjectName(QStringLiteral("diskCacheClear"));
  clear_->setToolTip(tr("Removes every model's pages; chats are computed again when resumed."));
  form->addRow(QString(), clear_);

  connect(enabled_, &QCheckBox::toggled, this, [this] {
    enableFields();
    emit edited();
  });
  connect(limit_, &QSpinBox::valueChanged, this, &DiskCacheGroup::edited);
  connect(clear_, &QPushButton::clicked, this, &DiskCacheGroup::clearRequested);
  setUsage(DiskCacheUsageView{});
}

void DiskCacheGroup::setValues(bool enabled, int limit_mib) {
  const QSignalBlocker block_enabled(enabled_);
  const QSignalBlocker block_limit(limit_);
  enabled_->setChecked(enabled);
  limit_->setValue(limit_mib);
  enableFields();
}

bool DiskCacheGroup::isOn() const {
  return enabled_->isChecked();
}

int DiskCacheGroup::limitMib() const {
  return limit_->value();
}

void DiskCacheGroup::setUsage(const DiskCacheUsageView& usage) {
  usage_ = usage;
  folder_->setText(usage.folder.isEmpty() ? tr("Not chosen") : usage.folder);
  usage_label_->setText(disk_cache_usage_text(usage));
  clear_->setEnabled(!usage.models.isEmpty());
}

void DiskCacheGroup::enableFields() {
  limit_->setEnabled(enabled_->isChecked());
}

}  // namespace quire::ui
