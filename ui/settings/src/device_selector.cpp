#include "device_selector.h"

#include <QCheckBox>
#include <QDoubleValidator>
#include <QGridLayout>
#include <QLabel>
#include <QLineEdit>
#include <QLocale>
#include <QSignalBlocker>
#include <QVBoxLayout>
#include <algorithm>

#include "quire/ui/settings_limits.h"

namespace quire::ui {
namespace {

const QString kIssueStyle = QStringLiteral("color: #c62828;");
const QString kFieldIssueStyle = QStringLiteral("QLineEdit { border: 1px solid #c62828; }");

QLabel* issue_label(const QString& object_name, QWidget* parent) {
  auto* label = new QLabel(parent);
  label->setObjectName(object_name);
  label->setStyleSheet(kIssueStyle);
  label->setWordWrap(true);
  label->setVisible(false);
  return label;
}

void show_text(QLabel* label, const QStringList& lines, bool allowed = true) {
  label->setText(lines.join(QLatin1Char('\n')));
  label->setVisible(allowed && !lines.isEmpty());
}

}  // namespace

DeviceSelector::DeviceSelector(QWidget* parent) : QWidget(parent) {
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  all_ = new QCheckBox(tr("Use every device"), this);
  all_->setObjectName(QStringLiteral("useAllDevices"));
  all_->setChecked(true);
  connect(all_, &QCheckBox::toggled, this, [this](bool all) {
    // Turning "every device" off starts from every device checked, so the
    // user unchecks the one to leave out.
    if (!all) {
      for (const Row& row : rows_) {
        const QSignalBlocker quiet(row.check);
        row.check->setChecked(true);
      }
    }
    updateEnabled();
    emit edited();
  });
  layout->addWidget(all_);

  auto* rows = new QWidget(this);
  grid_ = new QGridLayout(rows);
  grid_->setContentsMargins(16, 0, 0, 0);
  gb_header_ = new QLabel(tr("GB the plan may use"), rows);
  gb_header_->setVisible(false);
  grid_->addWidget(gb_header_, 0, 1, 1, 2);
  reserve_header_ = new QLabel(tr("MiB kept free"), rows);
  reserve_header_->setObjectName(QStringLiteral("deviceReserveHeader"));
  grid_->addWidget(reserve_header_, 0, 3);
  grid_->setColumnStretch(0, 1);
  layout->addWidget(rows);

  devices_issue_ = issue_label(QStringLiteral("devicesIssue"), this);
  layout->addWidget(devices_issue_);
  manual_issue_ = issue_label(QStringLiteral("manualGbIssue"), this);
  layout->addWidget(manual_issue_);
}

void DeviceSelector::setDeviceNames(const QStringList& names) {
  const bool all = all_->isChecked();
  QList<int> checked;
  for (int i = 0; i < rows_.size(); ++i) {
    if (rows_.at(i).check->isChecked()) checked.append(i);
  }
  const QList<double> gb = manualGb();
  const QList<double> reserves = reserveMib();
  names_ = names;
  setSelection(all ? QList<int>{} : checked, gb, reserves);
  // An explicit selection that had every box unchecked stays that way.
  if (!all && checked.isEmpty()) {
    const QSignalBlocker quiet(all_);
    all_->setChecked(false);
    for (const Row& row : rows_) {
      const QSignalBlocker quiet_check(row.check);
      row.check->setChecked(false);
    }
    updateEnabled();
  }
}

void DeviceSelector::setSelection(const QList<int>& devices, const QList<double>& manual_gb,
                                  const QList<double>& reserve_mib) {
  QList<int> valid;
  for (int device : devices) {
    if (limits::kDeviceIndex.contains(device) && !valid.contains(device)) valid.append(device);
  }
  int count = std::max({static_cast<int>(names_.size()), static_cast<int>(manual_gb.size()),
                        static_cast<int>(reserve_mib.size())});
  for (int device : valid)
    count = std::max(count, device + 1);
  count = std::min(count, limits::kDeviceIndex.max + 1);
  rebuild(count);
  {
    const QSignalBlocker quiet(all_);
    all_->setChecked(valid.isEmpty());
  }
  for (int i = 0; i < rows_.size(); ++i) {
    const Row& row = rows_.at(i);
    const QSignalBlocker quiet_check(row.check);
    const QSignalBlocker quiet_gb(row.gb);
    const QSignalBlocker quiet_reserve(row.reserve);
    row.check->setChecked(valid.isEmpty() || valid.contains(i));
    const double gb = manual_gb.value(i);
    row.gb->setText(gb > 0 ? QString::number(gb, 'g', QLocale::FloatingPointShortest) : QString());
    const double reserve = reserve_mib.value(i, -1);
    row.reserve->setText(
        reserve >= 0 ? QString::number(reserve, 'g', QLocale::FloatingPointShortest) : QString());
  }
  updateEnabled();
}

QList<int> DeviceSelector::devices() const {
  QList<int> chosen;
  if (all_->isChecked()) return chosen;
  for (int i = 0; i < rows_.size(); ++i) {
    if (rows_.at(i).check->isChecked()) chosen.append(i);
  }
  return chosen;
}

QList<double> DeviceSelector::manualGb() const {
  QList<double> gb;
  for (const Row& row : rows_) {
    bool ok = false;
    const double value = QLocale::c().toDouble(row.gb->text().trimmed(), &ok);
    gb.append(ok && value > 0 ? value : 0.0);
  }
  while (!gb.isEmpty() && gb.constLast() <= 0)
    gb.removeLast();
  return gb;
}

QList<double> DeviceSelector::reserveMib() const {
  QList<double> reserves;
  for (const Row& row : rows_) {
    bool ok = false;
    const double value = QLocale::c().toDouble(row.reserve->text().trimmed(), &ok);
    reserves.append(ok && value >= 0 ? value : -1.0);
  }
  while (!reserves.isEmpty() && reserves.constLast() < 0)
    reserves.removeLast();
  return reserves;
}

void DeviceSelector::setCommonReserve(double mib) {
  common_reserve_ = mib;
  for (const Row& row : rows_)
    row.reserve->setPlaceholderText(QLocale().toString(mib, 'f', 0));
}

QString DeviceSelector::selectionProblem() const {
  if (all_->isChecked() || rows_.isEmpty() || !devices().isEmpty()) return {};
  return tr("Choose at least one device, or use every device.");
}

void DeviceSelector::setManualVisible(bool visible) {
  manual_visible_ = visible;
  gb_header_->setVisible(visible);
  for (const Row& row : rows_) {
    row.gb->setVisible(visible);
    row.unit->setVisible(visible);
  }
  if (!visible) manual_issue_->setVisible(false);
}

void DeviceSelector::showIssues(const QList<SettingsIssue>& issues) {
  QStringList device_lines;
  QStringList manual_lines;
  QList<int> flagged;
  for (const SettingsIssue& issue : issues) {
    if (issue.field == SettingsIssue::Field::Devices) device_lines.append(issue.message);
    if (issue.field == SettingsIssue::Field::ManualGb) {
      manual_lines.append(issue.message);
      flagged.append(issue.device);
    }
  }
  show_text(devices_issue_, device_lines);
  show_text(manual_issue_, manual_lines, manual_visible_);
  for (int i = 0; i < rows_.size(); ++i) {
    rows_.at(i).gb->setStyleSheet(flagged.contains(i) ? kFieldIssueStyle : QString());
  }
}

void DeviceSelector::rebuild(int count) {
  for (const Row& row : rows_) {
    delete row.check;
    delete row.gb;
    delete row.unit;
    delete row.reserve;
  }
  rows_.clear();
  QWidget* host = gb_header_->parentWidget();
  for (int i = 0; i < count; ++i) {
    Row row;
    const QString name = i < names_.size() ? names_.at(i) : tr("Device %1 (not found)").arg(i);
    row.check = new QCheckBox(name, host);
    row.check->setObjectName(QStringLiteral("device_%1").arg(i));
    row.gb = new QLineEdit(host);
    row.gb->setObjectName(QStringLiteral("manualGb_%1").arg(i));
    row.gb->setPlaceholderText(tr("not used"));
    row.gb->setMaximumWidth(96);
    auto* validator = new QDoubleValidator(limits::kManualGb.min, limits::kManualGb.max,
                                           limits::kManualGb.decimals, row.gb);
    validator->setLocale(QLocale::c());
    validator->setNotation(QDoubleValidator::StandardNotation);
    row.gb->setValidator(validator);
    row.unit = new QLabel(tr("GB"), host);
    row.gb->setVisible(manual_visible_);
    row.unit->setVisible(manual_visible_);
    // Empty: the common reserve, which the placeholder shows.
    row.reserve = new QLineEdit(host);
    row.reserve->setObjectName(QStringLiteral("deviceReserveMib_%1").arg(i));
    row.reserve->setPlaceholderText(QLocale().toString(common_reserve_, 'f', 0));
    row.reserve->setToolTip(tr("MiB this device keeps free; empty: the reserve below"));
    row.reserve->setMaximumWidth(96);
    auto* reserve_validator = new QDoubleValidator(limits::kReserveMib.min, limits::kReserveMib.max,
                                                   limits::kReserveMib.decimals, row.reserve);
    reserve_validator->setLocale(QLocale::c());
    reserve_validator->setNotation(QDoubleValidator::StandardNotation);
    row.reserve->setValidator(reserve_validator);
    grid_->addWidget(row.check, i + 1, 0);
    grid_->addWidget(row.gb, i + 1, 1);
    grid_->addWidget(row.unit, i + 1, 2);
    grid_->addWidget(row.reserve, i + 1, 3);
    connect(row.check, &QCheckBox::toggled, this, [this] {
      updateEnabled();
      emit edited();
    });
    connect(row.gb, &QLineEdit::textChanged, this, &DeviceSelector::edited);
    connect(row.reserve, &QLineEdit::textChanged, this, &DeviceSelector::edited);
    rows_.append(row);
  }
}

void DeviceSelector::updateEnabled() {
  const bool all = all_->isChecked();
  for (const Row& row : rows_) {
    if (all) {
      const QSignalBlocker quiet(row.check);
      row.check->setChecked(true);
    }
    row.check->setEnabled(!all);
    row.gb->setEnabled(all || row.check->isChecked());
    row.reserve->setEnabled(all || row.check->isChecked());
  }
}

}  // namespace quire::ui
