#pragma once

// Spin boxes and combo boxes take the mouse wheel only once they have focus.
// A long form is scrolled with the wheel, and a field that happens to pass
// under the pointer must not change its value on the way (Top-k going from 40
// to 30 while the user only scrolled).

class QWidget;

namespace quire::ui {

// Gives every spin box and combo box under `root` a click-or-tab focus policy
// and lets the wheel pass on to the scroll area while they lack focus.
void guard_wheel_in(QWidget* root);

}  // namespace quire::ui
