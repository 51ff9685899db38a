#pragma once

// A small chart of the last minutes: memory used on the model's devices (the
// figure the device bars state) and tokens per second while generating. Drawn with
// Qt Charts from a MemoryHistory the panel keeps.
//
// Object names: "memoryHistoryChart" (the chart view).

#include <QStringList>
#include <QWidget>
#include <optional>

#include "quire/ui/memory_history.h"

class QChart;
class QChartView;
class QLineSeries;
class QValueAxis;

namespace quire::ui {

class MemoryHistoryChart : public QWidget {
  Q_OBJECT

 public:
  explicit MemoryHistoryChart(QWidget* parent = nullptr);

  // Draws `history`, the newest point at the right edge ("now").
  void setHistory(const MemoryHistory& history);

  // What is drawn, for tests: points as (seconds before now, value).
  QList<QPointF> memoryPoints() const;
  QList<QPointF> speedPoints() const;
  double memoryAxisMaximum() const;
  double speedAxisMaximum() const;
  // The titles of the time, memory and speed axes, which carry the units.
  QStringList axisTitles() const;
  QString speedSeriesName() const;

  QSize sizeHint() const override;

 private:
  QChart* chart_ = nullptr;
  QChartView* view_ = nullptr;
  QLineSeries* memory_ = nullptr;
  QLineSeries* speed_ = nullptr;
  QValueAxis* time_axis_ = nullptr;
  QValueAxis* memory_axis_ = nullptr;
  QValueAxis* speed_axis_ = nullptr;
  // The memory axis's unit (GiB or MiB), kept while the figures stay near
  // it; unset until the first samples.
  std::optional<bool> in_gib_;
};

}  // namespace quire::ui
