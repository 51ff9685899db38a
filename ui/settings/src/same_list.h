#pragma once

#include <QList>
#include <algorithm>

namespace quire::ui {

// QList equality without Qt 6.4's memcmp on a null buffer (see EngineSettings).
template <typename T>
bool same_list(const QList<T>& a, const QList<T>& b) {
  return a.size() == b.size() && std::equal(a.cbegin(), a.cend(), b.cbegin());
}

}  // namespace quire::ui
