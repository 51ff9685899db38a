#pragma once

// A one-line label that shows what fits of its text, ending in "…", and the
// whole text in its tooltip: it never wraps onto more lines nor widens its
// row. Its minimum width is small, so the buttons beside it keep their place.

#include <QLabel>

namespace quire::ui {

class ElidedLabel : public QLabel {
 public:
  explicit ElidedLabel(QWidget* parent = nullptr);

  // The whole text; text() is what is shown.
  void setFullText(const QString& text);
  QString fullText() const { return full_; }
  // Said in the tooltip under the whole text.
  void setExplanation(const QString& explanation);

  QSize minimumSizeHint() const override;
  QSize sizeHint() const override;

 protected:
  void resizeEvent(QResizeEvent* event) override;

 private:
  void refresh();

  QString full_;
  QString explanation_;
};

}  // namespace quire::ui
