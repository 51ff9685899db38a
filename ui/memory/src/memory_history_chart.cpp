#include "quire/ui/memory_history_chart.h"

#include <QChart>
#include <QChartView>
#include <QLineSeries>
#include <QPainter>
#include <QVBoxLayout>
#include <QValueAxis>
#include <algorithm>
#include <cmath>
#include <optional>

#include "quire/ui/memory_style.h"

namespace quire::ui {
namespace {

constexpr double kMiB = 1024.0 * 1024.0;
constexpr double kGiB = 1024.0 * kMiB;

// The next "round" value at or above `value` (1, 2, 5 × 10^n), so the axis
// labels stay readable and the scale does not jitter with every sample.
double nice_ceiling(double value) {
  if (value <= 0) return 1;
  const double magnitude = std::pow(10.0, std::floor(std::log10(value)));
  for (const double step : {1.0, 2.0, 5.0, 10.0}) {
    if (value <= step * magnitude) return step * magnitude;
  }
  return 10 * magnitude;
}

// The memory axis's unit for a window whose largest figure is `peak` bytes.
// GiB from 1 GiB up; once in GiB, MiB again only below half of that: figures
// that hover around 1 GiB (a cache filling, old samples leaving the window)
// keep the unit, and the labels do not jump between scales with each sample.
bool memory_in_gib(std::optional<bool> in_gib, double peak) {
  if (!in_gib) return peak >= kGiB;
  return *in_gib ? peak >= kGiB / 2 : peak >= kGiB;
}

}  // namespace

MemoryHistoryChart::MemoryHistoryChart(QWidget* parent) : QWidget(parent) {
  chart_ = new QChart;
  // Room at the sides for the first and last labels of the time axis, which
  // are centred on the plot's edges and would otherwise be cut at a narrow width.
  chart_->setMargins(QMargins(6, 2, 14, 2));
  chart_->setBackgroundRoundness(0);
  chart_->legend()->setAlignment(Qt::AlignBottom);
  chart_->setAnimationOptions(QChart::NoAnimation);

  memory_ = new QLineSeries(chart_);
  memory_->setName(tr("Memory used (GiB)"));
  memory_->setColor(segmentColor(MemorySegment::Cache, palette()));
  speed_ = new QLineSeries(chart_);
  speed_->setName(tr("Decode speed (tokens/s)"));
  speed_->setColor(pageStateColor(PageCellState::Active, palette()));
  chart_->addSeries(memory_);
  chart_->addSeries(speed_);

  time_axis_ = new QValueAxis(chart_);
  time_axis_->setLabelFormat(QStringLiteral("%d"));
  time_axis_->setTitleText(tr("Seconds before now"));
  time_axis_->setRange(-static_cast<double>(MemoryHistory::kDefaultWindowMs) / 1000.0, 0);
  // Four labels ("-300", "-200", ...) fit a panel a quarter of a small window wide.
  time_axis_->setTickCount(4);
  memory_axis_ = new QValueAxis(chart_);
  memory_axis_->setLabelFormat(QStringLiteral("%.1f"));
  memory_axis_->setTitleText(tr("GiB"));
  memory_axis_->setRange(0, 1);
  // Six ticks split any 1, 2 or 5 x 10^n range into round steps.
  memory_axis_->setTickCount(6);
  speed_axis_ = new QValueAxis(chart_);
  speed_axis_->setLabelFormat(QStringLiteral("%.0f"));
  speed_axis_->setTitleText(tr("tokens/s"));
  speed_axis_->setRange(0, 10);
  speed_axis_->setTickCount(6);
  chart_->addAxis(time_axis_, Qt::AlignBottom);
  chart_->addAxis(memory_axis_, Qt::AlignLeft);
  chart_->addAxis(speed_axis_, Qt::AlignRight);
  memory_->attachAxis(time_axis_);
  memory_->attachAxis(memory_axis_);
  speed_->attachAxis(time_axis_);
  speed_->attachAxis(speed_axis_);

  view_ = new QChartView(chart_, this);
  view_->setObjectName(QStringLiteral("memoryHistoryChart"));
  view_->setRenderHint(QPainter::Antialiasing);
  view_->setToolTip(
      tr("Memory used on the model's devices (as the bars above state it), and tokens "
         "generated per second while generating, over the last minutes"));
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->addWidget(view_);
}

void MemoryHistoryChart::setHistory(const MemoryHistory& history) {
  const QList<MemoryHistoryPoint>& points = history.points();
  const qint64 now = points.isEmpty() ? 0 : points.last().time_ms;
  // GiB for models that take gigabytes, MiB below, so the axis labels say
  // something for a small model too.
  qint64 peak_used = 0;
  for (const MemoryHistoryPoint& point : points)
    peak_used = std::max(peak_used, point.used_bytes);
  if (!points.isEmpty()) in_gib_ = memory_in_gib(in_gib_, static_cast<double>(peak_used));
  const bool gib = in_gib_.value_or(true);
  const double unit = gib ? kGiB : kMiB;
  memory_->setName(gib ? tr("Memory used (GiB)") : tr("Memory used (MiB)"));
  memory_axis_->setLabelFormat(gib ? QStringLiteral("%.1f") : QStringLiteral("%.0f"));
  memory_axis_->setTitleText(gib ? tr("GiB") : tr("MiB"));
  QList<QPointF> memory;
  QList<QPointF> speed;
  memory.reserve(points.size());
  speed.reserve(points.size());
  for (const MemoryHistoryPoint& point : points) {
    const double ago = static_cast<double>(point.time_ms - now) / 1000.0;
    memory.append(QPointF(ago, static_cast<double>(point.used_bytes) / unit));
    speed.append(QPointF(ago, point.tokens_per_second));
  }
  memory_->replace(memory);
  speed_->replace(speed);
  time_axis_->setRange(-static_cast<double>(history.windowMs()) / 1000.0, 0);
  // Scaled to what the model uses, not to the device: a small model on a
  // large machine would otherwise draw a flat line at the bottom.
  double memory_top = 0;
  for (const QPointF& point : memory)
    memory_top = std::max(memory_top, point.y());
  memory_axis_->setRange(0, nice_ceiling(memory_top * 1.1));
  // At least 0..10 tokens/s, so an idle stretch draws a calm axis.
  speed_axis_->setRange(0, std::max(10.0, nice_ceiling(history.peakTokensPerSecond())));
}

QList<QPointF> MemoryHistoryChart::memoryPoints() const {
  return memory_->points();
}

QList<QPointF> MemoryHistoryChart::speedPoints() const {
  return speed_->points();
}

double MemoryHistoryChart::memoryAxisMaximum() const {
  return memory_axis_->max();
}

double MemoryHistoryChart::speedAxisMaximum() const {
  return speed_axis_->max();
}

QStringList MemoryHistoryChart::axisTitles() const {
  return {time_axis_->titleText(), memory_axis_->titleText(), speed_axis_->titleText()};
}

QString MemoryHistoryChart::speedSeriesName() const {
  return speed_->name();
}

QSize MemoryHistoryChart::sizeHint() const {
  return QSize(320, 180);
}

}  // namespace quire::ui
