#pragma once

// The device part of the settings panel: "use every device" or a checkbox per
// device, the MiB each device keeps free when it needs a reserve of its own,
// and, for the manual split, the GB the plan may use on each. Devices
// the settings name but the backend no longer offers keep a row, marked as
// missing, so nothing a user chose disappears silently.

#include <QList>
#include <QString>
#include <QStringList>
#include <QWidget>

#include "quire/ui/settings_validation.h"

class QCheckBox;
class QGridLayout;
class QLabel;
class QLineEdit;

namespace quire::ui {

class DeviceSelector : public QWidget {
  Q_OBJECT

 public:
  explicit DeviceSelector(QWidget* parent = nullptr);

  // The backend's devices by index. The current choice is kept.
  void setDeviceNames(const QStringList& names);
  const QStringList& deviceNames() const { return names_; }

  void setSelection(const QList<int>& devices, const QList<double>& manual_gb,
                    const QList<double>& reserve_mib = {});
  QList<int> devices() const;      // ascending; empty: every device
  QList<double> manualGb() const;  // by device index, trailing zeros dropped
  // By device index: -1 where a device keeps the common reserve; trailing -1
  // dropped.
  QList<double> reserveMib() const;
  // The common reserve, shown in every empty per-device field.
  void setCommonReserve(double mib);
  // Set when "every device" is off and no device is checked, which the
  // settings cannot express (an empty list means every device).
  QString selectionProblem() const;

  void setManualVisible(bool visible);
  // Shows the Devices and ManualGb issues next to their rows.
  void showIssues(const QList<SettingsIssue>& issues);

 signals:
  void edited();

 private:
  struct Row {
    QCheckBox* check = nullptr;
    QLineEdit* gb = nullptr;
    QLabel* unit = nullptr;
    QLineEdit* reserve = nullptr;
  };

  void rebuild(int count);
  void updateEnabled();

  QStringList names_;
  bool manual_visible_ = false;
  QCheckBox* all_ = nullptr;
  QGridLayout* grid_ = nullptr;
  QLabel* gb_header_ = nullptr;
  QLabel* reserve_header_ = nullptr;
  double common_reserve_ = 0;
  QList<Row> rows_;
  QLabel* devices_issue_ = nullptr;
  QLabel* manual_issue_ = nullptr;
};

}  // namespace quire::ui
