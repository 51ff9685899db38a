#include "quire/app/presets/preset_chooser.h"

#include <QComboBox>
#include <QEvent>
#include <QHBoxLayout>
#include <QLabel>

namespace quire::presets {

PresetChooser::PresetChooser(const PresetLibrary& library, QWidget* parent)
    : QWidget(parent), library_(library) {
  auto* layout = new QHBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->addWidget(new QLabel(tr("Start from a preset:"), this));
  combo_ = new QComboBox(this);
  combo_->setObjectName(QStringLiteral("chatPresetChooser"));
  combo_->setFocusPolicy(Qt::StrongFocus);
  combo_->installEventFilter(this);
  layout->addWidget(combo_, 1);
  state_ = new QLabel(this);
  state_->setObjectName(QStringLiteral("chatPresetState"));
  layout->addWidget(state_);
  connect(combo_, &QComboBox::activated, this, &PresetChooser::onActivated);
}

QString PresetChooser::describe(const std::optional<QString>& preset, bool changed) {
  if (!preset) return tr("No preset");
  return changed ? tr("Preset: %1 (changed)").arg(*preset) : tr("Preset: %1").arg(*preset);
}

QString PresetChooser::stateText() const {
  return state_->text();
}

void PresetChooser::show(const std::optional<QString>& preset, const store::ChatSettings& current) {
  preset_ = preset;
  const QSignalBlocker quiet(combo_);
  combo_->clear();
  combo_->addItem(tr("None"));
  for (const QString& name : library_.names())
    combo_->addItem(name, name);
  combo_->setCurrentIndex(preset ? std::max(0, combo_->findData(*preset)) : 0);
  compare(current);
}

void PresetChooser::compare(const store::ChatSettings& current) {
  bool changed = false;
  if (preset_) {
    const std::optional<Preset> stored = library_.find(*preset_);
    // A preset deleted since counts as changed: its values are not at hand.
    changed = !stored || preset_values(current) != stored->settings;
  }
  state_->setText(describe(preset_, changed));
}

bool PresetChooser::eventFilter(QObject* watched, QEvent* event) {
  if (watched == combo_ && event->type() == QEvent::Wheel && !combo_->hasFocus()) {
    event->ignore();
    return true;
  }
  return QWidget::eventFilter(watched, event);
}

void PresetChooser::onActivated(int index) {
  const QString name = combo_->itemData(index).toString();
  if (name.isEmpty()) {
    // "None": the values stay, no longer tied to a preset.
    preset_.reset();
    state_->setText(describe(preset_, false));
    return;
  }
  const std::optional<Preset> preset = library_.find(name);
  if (!preset) return;
  preset_ = name;
  state_->setText(describe(preset_, false));
  emit chosen(*preset);
}

}  // namespace quire::presets
