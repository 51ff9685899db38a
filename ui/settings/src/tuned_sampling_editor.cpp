#include "tuned_sampling_editor.h"

#include <QCheckBox>
#include <QDoubleSpinBox>
#include <QFormLayout>
#include <QJsonArray>
#include <QJsonDocument>
#include <QLineEdit>
#include <QSpinBox>
#include <optional>

namespace quire::ui {
namespace {

QDoubleSpinBox* tuned_real(RealRange range, double step, const QString& name, QWidget* parent) {
  auto* box = new QDoubleSpinBox(parent);
  box->setDecimals(range.decimals);
  box->setRange(range.min, range.max);
  box->setSingleStep(step);
  box->setObjectName(name);
  return box;
}

QSpinBox* tuned_integer(IntRange range, const QString& name, QWidget* parent) {
  auto* box = new QSpinBox(parent);
  box->setRange(range.min, range.max);
  box->setObjectName(name);
  return box;
}

QString tuned_number(double value) {
  return QString::number(value, 'f', 2);
}

}  // namespace

TunedSamplingEditor::TunedSamplingEditor(QWidget* parent, const QString& prefix) : QWidget(parent) {
  auto* form = new QFormLayout(this);
  form->setContentsMargins(0, 0, 0, 0);
  dry_multiplier_ =
      tuned_real(limits::kDryMultiplier, 0.1, prefix + QStringLiteral("DryMultiplier"), this);
  dry_multiplier_->setToolTip(tr("How hard a repeated sequence is penalized; 0 turns DRY off"));
  dry_base_ = tuned_real(limits::kDryBase, 0.05, prefix + QStringLiteral("DryBase"), this);
  dry_base_->setToolTip(tr("How fast the penalty grows with the length of the repeat"));
  dry_allowed_length_ =
      tuned_integer(limits::kDryAllowedLength, prefix + QStringLiteral("DryAllowedLength"), this);
  dry_allowed_length_->setToolTip(tr("Repeats up to this many tokens are not penalized"));
  dry_range_ = tuned_integer(limits::kDryRange, prefix + QStringLiteral("DryRange"), this);
  dry_range_->setSpecialValueText(tr("Whole context"));
  dry_range_->setToolTip(tr("How many tokens back DRY looks for repeats"));
  dry_breakers_ = new QLineEdit(this);
  dry_breakers_->setObjectName(prefix + QStringLiteral("DryBreakers"));
  dry_breakers_->setToolTip(
      tr("Text that ends a repeat, as quoted strings separated by commas: \"\\n\", \":\""));
  xtc_threshold_ =
      tuned_real(limits::kXtcThreshold, 0.01, prefix + QStringLiteral("XtcThreshold"), this);
  xtc_threshold_->setToolTip(tr("Tokens at least this likely may be excluded"));
  xtc_probability_ =
      tuned_real(limits::kXtcProbability, 0.05, prefix + QStringLiteral("XtcProbability"), this);
  xtc_probability_->setToolTip(
      tr("How often the likeliest tokens are excluded, keeping the least likely of them; 0 turns "
         "XTC off"));
  top_n_sigma_ = tuned_real(limits::kTopNSigma, 0.1, prefix + QStringLiteral("TopNSigma"), this);
  top_n_sigma_->setToolTip(
      tr("Keep the tokens within this many standard deviations of the best; 0 turns it off"));
  mirostat_ = new QCheckBox(tr("Mirostat v2"), this);
  mirostat_->setObjectName(prefix + QStringLiteral("Mirostat"));
  mirostat_->setToolTip(
      tr("Steer towards a steady surprise instead of top-k, top-p, min-p, top-nσ and XTC"));
  mirostat_tau_ =
      tuned_real(limits::kMirostatTau, 0.5, prefix + QStringLiteral("MirostatTau"), this);
  mirostat_tau_->setToolTip(tr("The surprise mirostat aims at, in bits"));
  mirostat_eta_ =
      tuned_real(limits::kMirostatEta, 0.05, prefix + QStringLiteral("MirostatEta"), this);
  mirostat_eta_->setToolTip(tr("How fast mirostat adjusts"));

  form->addRow(tr("DRY multiplier"), dry_multiplier_);
  form->addRow(tr("DRY base"), dry_base_);
  form->addRow(tr("DRY allowed length"), dry_allowed_length_);
  form->addRow(tr("DRY range"), dry_range_);
  form->addRow(tr("DRY sequence breakers"), dry_breakers_);
  form->addRow(tr("XTC threshold"), xtc_threshold_);
  form->addRow(tr("XTC probability"), xtc_probability_);
  form->addRow(tr("Top-nσ"), top_n_sigma_);
  form->addRow(QString(), mirostat_);
  form->addRow(tr("Mirostat τ"), mirostat_tau_);
  form->addRow(tr("Mirostat η"), mirostat_eta_);

  const auto changed = [this] {
    if (!writing_) emit this->changed();
  };
  for (QDoubleSpinBox* box : {dry_multiplier_, dry_base_, xtc_threshold_, xtc_probability_,
                              top_n_sigma_, mirostat_tau_, mirostat_eta_}) {
    connect(box, &QDoubleSpinBox::valueChanged, this, changed);
  }
  for (QSpinBox* box : {dry_allowed_length_, dry_range_})
    connect(box, &QSpinBox::valueChanged, this, changed);
  connect(mirostat_, &QCheckBox::toggled, this, changed);
  connect(dry_breakers_, &QLineEdit::textEdited, this, [this, changed](const QString& text) {
    const std::optional<QStringList> breakers = breakers_from_text(text);
    // A list half typed keeps the last one that read; the field says so.
    dry_breakers_->setStyleSheet(breakers ? QString() : QStringLiteral("color: palette(link);"));
    if (!breakers) return;
    breakers_ = *breakers;
    changed();
  });
  setValue(TunedSampling{});
}

void TunedSamplingEditor::setValue(const TunedSampling& value) {
  const bool was_writing = writing_;
  writing_ = true;
  dry_multiplier_->setValue(value.dry_multiplier);
  dry_base_->setValue(value.dry_base);
  dry_allowed_length_->setValue(value.dry_allowed_length);
  dry_range_->setValue(value.dry_range);
  breakers_ = value.dry_sequence_breakers;
  dry_breakers_->setText(breakers_to_text(breakers_));
  dry_breakers_->setStyleSheet(QString());
  xtc_threshold_->setValue(value.xtc_threshold);
  xtc_probability_->setValue(value.xtc_probability);
  top_n_sigma_->setValue(value.top_n_sigma);
  mirostat_->setChecked(value.mirostat);
  mirostat_tau_->setValue(value.mirostat_tau);
  mirostat_eta_->setValue(value.mirostat_eta);
  writing_ = was_writing;
}

TunedSampling TunedSamplingEditor::value() const {
  TunedSampling value;
  value.dry_multiplier = dry_multiplier_->value();
  value.dry_base = dry_base_->value();
  value.dry_allowed_length = dry_allowed_length_->value();
  value.dry_range = dry_range_->value();
  value.dry_sequence_breakers = breakers_;
  value.xtc_threshold = xtc_threshold_->value();
  value.xtc_probability = xtc_probability_->value();
  value.top_n_sigma = top_n_sigma_->value();
  value.mirostat = mirostat_->isChecked();
  value.mirostat_tau = mirostat_tau_->value();
  value.mirostat_eta = mirostat_eta_->value();
  return value;
}

QString tuned_sampling_summary(const TunedSampling& value) {
  QStringList parts;
  if (value.dry_multiplier > 0) {
    parts << TunedSamplingEditor::tr("DRY %1").arg(tuned_number(value.dry_multiplier));
  }
  if (value.xtc_probability > 0 && value.xtc_threshold <= 0.5) {
    parts << TunedSamplingEditor::tr("XTC %1 above %2")
                 .arg(tuned_number(value.xtc_probability), tuned_number(value.xtc_threshold));
  }
  if (value.top_n_sigma > 0) {
    parts << TunedSamplingEditor::tr("top-nσ %1").arg(tuned_number(value.top_n_sigma));
  }
  if (value.mirostat) {
    parts << TunedSamplingEditor::tr("mirostat v2 (τ %1, η %2)")
                 .arg(tuned_number(value.mirostat_tau), tuned_number(value.mirostat_eta));
  }
  return parts.isEmpty() ? TunedSamplingEditor::tr("all off") : parts.join(QStringLiteral(", "));
}

QString breakers_to_text(const QStringList& breakers) {
  QStringList quoted;
  for (const QString& breaker : breakers) {
    // A one-element JSON array is ["..."]: the quoted string is inside.
    const QByteArray array = QJsonDocument(QJsonArray{breaker}).toJson(QJsonDocument::Compact);
    quoted << QString::fromUtf8(array.mid(1, array.size() - 2));
  }
  return quoted.join(QStringLiteral(", "));
}

std::optional<QStringList> breakers_from_text(const QString& text) {
  if (text.trimmed().isEmpty()) return QStringList{};
  QJsonParseError error{};
  const QJsonDocument document =
      QJsonDocument::fromJson((QLatin1Char('[') + text + QLatin1Char(']')).toUtf8(), &error);
  if (error.error != QJsonParseError::NoError || !document.isArray()) return std::nullopt;
  QStringList breakers;
  for (const QJsonValue& item : document.array()) {
    if (!item.isString() || item.toString().isEmpty()) return std::nullopt;
    breakers << item.toString();
  }
  return breakers;
}

}  // namespace quire::ui
