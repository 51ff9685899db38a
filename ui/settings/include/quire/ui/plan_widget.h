#pragma once

// The planner's answer, shown before anything is loaded: the verdict (green
// when it fits, red with the planner's own words when it does not), how the
// weights are stored (formats and bits per kind of tensor), one bar and one
// line of numbers per device, and the largest context that would fit.

#include <QWidget>

#include "quire/ui/settings_data.h"

class QLabel;
class QVBoxLayout;

namespace quire::ui {

class PlanWidget : public QWidget {
  Q_OBJECT

 public:
  explicit PlanWidget(QWidget* parent = nullptr);

  void setPlan(const PlanView& plan);
  const PlanView& plan() const { return plan_; }

  // The settings changed and their plan has not arrived yet: the old one is
  // dimmed and says it is being re-priced.
  void setStale(bool stale);
  bool isStale() const { return stale_; }

 private:
  void rebuildDevices();

  PlanView plan_;
  bool stale_ = false;
  QLabel* verdict_ = nullptr;
  QLabel* weights_ = nullptr;  // how the model's weights are stored
  QLabel* pending_ = nullptr;
  QWidget* devices_ = nullptr;
  QVBoxLayout* devices_slot_ = nullptr;
  QLabel* host_ = nullptr;  // offloaded pages in host memory
  QLabel* largest_ = nullptr;
  QLabel* draft_ = nullptr;  // the draft model beside the model
  QLabel* legend_ = nullptr;
};

}  // namespace quire::ui
