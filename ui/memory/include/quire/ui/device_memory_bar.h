#pragma once

// One device's memory as a horizontal bar: model weights, KV cache, scratch,
// other processes and free memory, with the device name and usage above and a
// legend with sizes below. Fed a few times a second; it repaints only when the
// numbers change, and keeps its height unless the legend has to wrap anew.

#include <QWidget>
#include <array>
#include <optional>

#include "quire/ui/memory_style.h"
#include "quire/ui/memory_view_data.h"

namespace quire::ui {

class DeviceMemoryBar : public QWidget {
  Q_OBJECT

 public:
  explicit DeviceMemoryBar(QWidget* parent = nullptr);

  void setDevice(const DeviceMemoryView& device);
  const DeviceMemoryView& device() const { return device_; }

  // The tooltip: every part with its exact byte count.
  QString toolTipText() const;
  // The bar itself, and each part of it (empty for parts of zero bytes).
  QRect barRect() const;
  QRect segmentRect(MemorySegment segment) const;
  std::optional<MemorySegment> segmentAt(QPoint point) const;

  QSize sizeHint() const override;
  QSize minimumSizeHint() const override;
  bool hasHeightForWidth() const override { return true; }
  int heightForWidth(int width) const override;

  static constexpr int kBarHeight = 18;

 protected:
  bool event(QEvent* event) override;
  void paintEvent(QPaintEvent* event) override;
  void changeEvent(QEvent* event) override;

 private:
  struct Geometry {
    QRect header;
    QRect bar;
    QList<QRect> legend;
    int height = 0;
  };
  Geometry geometryFor(int width) const;
  std::array<QRect, kMemorySegmentCount> segmentRects(const QRect& bar) const;

  DeviceMemoryView device_;
  int laid_out_height_ = -1;  // height last announced to the layout
};

}  // namespace quire::ui
