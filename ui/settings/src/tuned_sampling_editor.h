#pragma once

#include <QWidget>

#include "quire/ui/tuned_sampling.h"

class QCheckBox;
class QDoubleSpinBox;
class QLineEdit;
class QSpinBox;

namespace quire::ui {

// The "Advanced sampling" fields: DRY, XTC, top-nσ and mirostat v2, of a chat
// (prefix "chat") or of the global settings (prefix "default"). Object names:
// <prefix> followed by "DryMultiplier", "DryBase", "DryAllowedLength",
// "DryRange", "DryBreakers", "XtcThreshold", "XtcProbability", "TopNSigma",
// "Mirostat", "MirostatTau", "MirostatEta".
// The breakers are written as text-generation-webui writes them: quoted
// strings separated by commas, "\n" for a line break.
class TunedSamplingEditor : public QWidget {
  Q_OBJECT

 public:
  explicit TunedSamplingEditor(QWidget* parent = nullptr,
                               const QString& prefix = QStringLiteral("chat"));

  // Shows `value`; emits nothing.
  void setValue(const TunedSampling& value);
  // What the fields say; breakers that do not read keep the last good list.
  TunedSampling value() const;

 signals:
  void changed();

 private:
  QDoubleSpinBox* dry_multiplier_ = nullptr;
  QDoubleSpinBox* dry_base_ = nullptr;
  QSpinBox* dry_allowed_length_ = nullptr;
  QSpinBox* dry_range_ = nullptr;
  QLineEdit* dry_breakers_ = nullptr;
  QDoubleSpinBox* xtc_threshold_ = nullptr;
  QDoubleSpinBox* xtc_probability_ = nullptr;
  QDoubleSpinBox* top_n_sigma_ = nullptr;
  QCheckBox* mirostat_ = nullptr;
  QDoubleSpinBox* mirostat_tau_ = nullptr;
  QDoubleSpinBox* mirostat_eta_ = nullptr;
  QStringList breakers_;  // the last list the breakers field held
  bool writing_ = false;
};

// One line for a chat's state label: "DRY 0.80, XTC 0.50 above 0.10,
// top-nσ 1.00, mirostat v2 (τ 5.00, η 0.10)", or "all off".
QString tuned_sampling_summary(const TunedSampling& value);
// Breakers as the editor writes them: "\n", ":", "\"", "*".
QString breakers_to_text(const QStringList& breakers);
// The editor's text back into breakers; nullopt when it does not read (an
// empty text is no breakers).
std::optional<QStringList> breakers_from_text(const QString& text);

}  // namespace quire::ui
