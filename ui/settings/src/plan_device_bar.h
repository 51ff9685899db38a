#pragma once

// One device's memory as a stacked bar: weights, cache, scratch and reserve
// from the left, what stays free after them, and in red the part that does
// not fit when the plan overflows the device.

#include <QColor>
#include <QWidget>

#include "quire/ui/settings_data.h"

namespace quire::ui {

namespace plan_colors {
QColor weights();
QColor cache();
QColor scratch();
QColor reserve();
QColor free();
QColor overflow();
}  // namespace plan_colors

class PlanDeviceBar : public QWidget {
  Q_OBJECT

 public:
  explicit PlanDeviceBar(QWidget* parent = nullptr);

  void setDevice(const PlanDeviceView& device);
  const PlanDeviceView& device() const { return device_; }

  QSize sizeHint() const override;
  QSize minimumSizeHint() const override;

 protected:
  void paintEvent(QPaintEvent* event) override;

 private:
  PlanDeviceView device_;
};

}  // namespace quire::ui
