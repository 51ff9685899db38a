#pragma once

// The one table of Quire's settings: for every stored key, its default, how
// the value is written, and what a stored value must be to be used.

#include <QString>
#include <QVariant>
#include <functional>
#include <vector>

namespace quire::app {

class AppSettings;

struct SettingRow {
  QString key;
  QString default_text;  // the default as it is stored
  std::function<void(AppSettings&)> reset;
  std::function<QVariant(const AppSettings&)> store;
  // Takes a stored value; returns why it cannot be used, or "" once it is.
  std::function<QString(AppSettings&, const QVariant&)> load;
};

const std::vector<SettingRow>& setting_rows();

}  // namespace quire::app
