#pragma once

#include <QWidget>

namespace quire::ui {

// A small bar with "used / maximum" beside it. The bar takes the palette's
// Highlight colour, amber from the warning share and red from the critical
// share, so a filling context is noticed before a turn no longer fits.
class ContextGauge : public QWidget {
  Q_OBJECT

 public:
  explicit ContextGauge(QWidget* parent = nullptr);

  void setFill(qint64 used, qint64 maximum, double warningShare, double criticalShare);
  // Tokens [from, to) of the fill that the next turn drops, drawn hatched;
  // from == to: none.
  void setDropped(qint64 from, qint64 to);
  qint64 droppedFrom() const { return droppedFrom_; }
  qint64 droppedTo() const { return droppedTo_; }
  double fraction() const;
  QString text() const { return text_; }
  QColor barColor() const;

  QSize sizeHint() const override;
  QSize minimumSizeHint() const override { return sizeHint(); }

 protected:
  void paintEvent(QPaintEvent* event) override;

 private:
  qint64 used_ = 0;
  qint64 maximum_ = 0;
  double warning_ = 1.0;
  double critical_ = 1.0;
  qint64 droppedFrom_ = 0;
  qint64 droppedTo_ = 0;
  QString text_;
};

}  // namespace quire::ui
