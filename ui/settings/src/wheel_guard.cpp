#include "wheel_guard.h"

#include <QAbstractSpinBox>
#include <QComboBox>
#include <QEvent>
#include <QWidget>

namespace quire::ui {
namespace {

class WheelGuard : public QObject {
 public:
  using QObject::QObject;

 protected:
  bool eventFilter(QObject* watched, QEvent* event) override {
    if (event->type() != QEvent::Wheel) return false;
    const auto* field = qobject_cast<QWidget*>(watched);
    if (field == nullptr || field->hasFocus()) return false;
    // Ignored and filtered: the field never sees it, and QApplication hands
    // the ignored event on to the parents, the scroll area among them.
    event->ignore();
    return true;
  }
};

void guard(QWidget* field, QObject* filter) {
  // StrongFocus rather than the default WheelFocus: rolling the wheel over a
  // field must not give it focus, or the next notch would change it.
  field->setFocusPolicy(Qt::StrongFocus);
  field->installEventFilter(filter);
}

}  // namespace

void guard_wheel_in(QWidget* root) {
  auto* filter = new WheelGuard(root);
  for (QAbstractSpinBox* box : root->findChildren<QAbstractSpinBox*>())
    guard(box, filter);
  for (QComboBox* box : root->findChildren<QComboBox*>())
    guard(box, filter);
}

}  // namespace quire::ui
