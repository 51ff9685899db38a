#include "tooltip_width.h"

#include <QCoreApplication>
#include <QEvent>
#include <QLabel>

namespace quire::gui {
namespace {

// About as wide as a line of a paragraph is easy to read.
constexpr int kTooltipCharacters = 70;

}  // namespace

TooltipWidth::TooltipWidth(QObject* owner) : QObject(owner) {
  QCoreApplication::instance()->installEventFilter(this);
}

int TooltipWidth::maximumWidth(const QLabel& label) {
  return label.fontMetrics().averageCharWidth() * kTooltipCharacters;
}

bool TooltipWidth::eventFilter(QObject* watched, QEvent* event) {
  // Qt's tooltip is a label of this name, sized to its text when shown and
  // again whenever it is reused for another text.
  if ((event->type() == QEvent::Show || event->type() == QEvent::Resize) &&
      watched->objectName() == QLatin1String("qtooltip_label")) {
    auto* tip = qobject_cast<QLabel*>(watched);
    if (tip != nullptr) {
      const int widest = maximumWidth(*tip);
      if (tip->width() > widest) {
        tip->setWordWrap(true);
        // The resize this sends comes back here at the allowed width.
        tip->resize(widest, tip->heightForWidth(widest));
      }
    }
  }
  return QObject::eventFilter(watched, event);
}

}  // namespace quire::gui
