#include "elided_label.h"

#include <QResizeEvent>

namespace quire::ui {
namespace {

// Enough for "12 tok…": a label narrower than this says nothing useful.
constexpr int kElidedLabelMinimumWidth = 48;

}  // namespace

ElidedLabel::ElidedLabel(QWidget* parent) : QLabel(parent) {
  setWordWrap(false);
  setTextFormat(Qt::PlainText);
  setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Preferred);
}

void ElidedLabel::setFullText(const QString& text) {
  full_ = text;
  refresh();
}

void ElidedLabel::setExplanation(const QString& explanation) {
  explanation_ = explanation;
  refresh();
}

QSize ElidedLabel::minimumSizeHint() const {
  return {kElidedLabelMinimumWidth, fontMetrics().height()};
}

QSize ElidedLabel::sizeHint() const {
  return {fontMetrics().horizontalAdvance(full_), fontMetrics().height()};
}

void ElidedLabel::resizeEvent(QResizeEvent* event) {
  QLabel::resizeEvent(event);
  refresh();
}

void ElidedLabel::refresh() {
  setText(fontMetrics().elidedText(full_, Qt::ElideRight, contentsRect().width()));
  if (full_.isEmpty()) {
    setToolTip(explanation_);
  } else {
    setToolTip(explanation_.isEmpty() ? full_ : full_ + QStringLiteral("\n\n") + explanation_);
  }
}

}  // namespace quire::ui
