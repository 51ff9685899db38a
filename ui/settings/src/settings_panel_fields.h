#pragma once

#include <QComboBox>
#include <QString>

namespace quire::ui {

// Selects the item whose data is `value`; "" selects nothing. A value the
// combo does not offer (a backend or prompt format written by a newer version)
// gets an item of its own until the next call, so showing settings and reading
// them back never changes them.
void select_by_data(QComboBox* box, const QString& value);

}  // namespace quire::ui
