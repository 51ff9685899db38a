#include "quire/ui/plan_widget.h"

#include <QGridLayout>
#include <QLabel>
#include <QVBoxLayout>

#include "plan_device_bar.h"
#include "plan_text.h"

namespace quire::ui {
namespace {

const QString kGreen = QStringLiteral("color: #2e7d32;");
const QString kRed = QStringLiteral("color: #c62828;");

QString swatch(const QColor& color, const QString& name) {
  return QStringLiteral("<span style=\"color:%1\">■</span>&nbsp;%2").arg(color.name(), name);
}

QLabel* make_label(const QString& object_name, QWidget* parent) {
  auto* label = new QLabel(parent);
  label->setObjectName(object_name);
  label->setWordWrap(true);
  label->setTextInteractionFlags(Qt::TextSelectableByMouse);
  return label;
}

}  // namespace

PlanWidget::PlanWidget(QWidget* parent) : QWidget(parent) {
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);

  verdict_ = make_label(QStringLiteral("planVerdict"), this);
  QFont bold = verdict_->font();
  bold.setBold(true);
  verdict_->setFont(bold);
  layout->addWidget(verdict_);

  weights_ = make_label(QStringLiteral("planWeights"), this);
  layout->addWidget(weights_);

  pending_ = make_label(QStringLiteral("planPending"), this);
  pending_->setText(tr("Re-pricing for the new settings…"));
  pending_->setVisible(false);
  layout->addWidget(pending_);

  devices_slot_ = new QVBoxLayout;
  layout->addLayout(devices_slot_);

  host_ = make_label(QStringLiteral("planHostCache"), this);
  layout->addWidget(host_);

  largest_ = make_label(QStringLiteral("planLargestContext"), this);
  layout->addWidget(largest_);

  draft_ = make_label(QStringLiteral("planDraftModel"), this);
  layout->addWidget(draft_);

  legend_ = new QLabel(this);
  legend_->setObjectName(QStringLiteral("planLegend"));
  legend_->setTextFormat(Qt::RichText);
  legend_->setText(QStringList{
      swatch(plan_colors::weights(), tr("weights")), swatch(plan_colors::cache(), tr("cache")),
      swatch(plan_colors::scratch(), tr("scratch")), swatch(plan_colors::reserve(), tr("reserve")),
      swatch(plan_colors::free(), tr("free")), swatch(plan_colors::overflow(), tr("does not fit"))}
                       .join(QStringLiteral(" &nbsp; ")));
  layout->addWidget(legend_);
  layout->addStretch(1);

  setPlan(PlanView{});
}

void PlanWidget::setPlan(const PlanView& plan) {
  plan_ = plan;
  if (!plan.valid) {
    verdict_->setText(plan.error.isEmpty() ? tr("Choose a model folder to see how it fits.")
                                           : plan.error);
    verdict_->setStyleSheet(plan.error.isEmpty() ? QString() : kRed);
  } else {
    // The planner's words, unchanged: they name the device and the remedy.
    verdict_->setText(plan.verdict);
    verdict_->setStyleSheet(plan.unchecked ? QString() : plan.fits ? kGreen : kRed);
  }
  weights_->setText(plan.weights.isEmpty() ? QString() : tr("Weights: %1").arg(plan.weights));
  weights_->setVisible(plan.valid && !plan.weights.isEmpty());
  host_->setText(plan_text::host_cache(plan.host_cache, plan.host_usable));
  host_->setVisible(plan.valid && plan.host_cache > 0);
  largest_->setText(
      plan_text::largest_context(plan.largest_context_tokens, plan.largest_context_is_model_limit));
  largest_->setVisible(plan.valid && !plan.remote);
  draft_->setText(plan.draft_verdict);
  draft_->setStyleSheet(plan.draft_fits ? QString() : kRed);
  draft_->setVisible(plan.valid && !plan.draft_verdict.isEmpty());
  legend_->setVisible(plan.valid && !plan.devices.isEmpty());
  rebuildDevices();
  setStale(false);
}

void PlanWidget::setStale(bool stale) {
  stale_ = stale;
  pending_->setVisible(stale);
  // Dimmed, not hidden: the layout keeps still while the user types.
  for (QWidget* widget : {static_cast<QWidget*>(verdict_), devices_, static_cast<QWidget*>(host_),
                          static_cast<QWidget*>(largest_)}) {
    if (widget != nullptr) widget->setEnabled(!stale);
  }
}

void PlanWidget::rebuildDevices() {
  // Rebuilt on every plan: a handful of widgets, and the device list may change.
  delete devices_;
  devices_ = nullptr;
  if (!plan_.valid || plan_.devices.isEmpty()) return;
  devices_ = new QWidget(this);
  devices_->setObjectName(QStringLiteral("planDevices"));
  auto* grid = new QGridLayout(devices_);
  grid->setContentsMargins(0, 4, 0, 4);
  grid->setVerticalSpacing(2);
  int row = 0;
  for (qsizetype i = 0; i < plan_.devices.size(); ++i) {
    const PlanDeviceView& device = plan_.devices.at(i);
    auto* name = make_label(QStringLiteral("planDeviceName_%1").arg(i), devices_);
    name->setText(device.name);
    QFont font = name->font();
    font.setBold(device.used);
    name->setFont(font);
    grid->addWidget(name, row++, 0);

    auto* bar = new PlanDeviceBar(devices_);
    bar->setObjectName(QStringLiteral("planDeviceBar_%1").arg(i));
    bar->setDevice(device);
    grid->addWidget(bar, row++, 0);

    auto* numbers = make_label(QStringLiteral("planDeviceNumbers_%1").arg(i), devices_);
    numbers->setText(plan_text::device_numbers(device));
    if (device.used && plan_text::device_shortfall(device) > 0) numbers->setStyleSheet(kRed);
    grid->addWidget(numbers, row++, 0);
    grid->setRowMinimumHeight(row++, 6);
  }
  devices_slot_->addWidget(devices_);
  // Children added after their parent was shown start hidden.
  devices_->setVisible(true);
}

}  // namespace quire::ui
