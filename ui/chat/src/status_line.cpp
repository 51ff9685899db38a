#include "quire/ui/status_line.h"

#include <QHBoxLayout>
#include <QLabel>
#include <QLocale>
#include <algorithm>
#include <cmath>

#include "chat_style.h"
#include "context_gauge.h"

namespace quire::ui {

StatusLine::StatusLine(QWidget* parent) : QWidget(parent) {
  setAccessibleName(tr("Status"));
  scaleFont(this, 0.92);
  auto* layout = new QHBoxLayout(this);
  layout->setContentsMargins(12, 4, 12, 4);
  layout->setSpacing(6);

  model_ = addItem("modelLabel", tr("The model answering in this chat"));
  QFont bold = model_->font();
  bold.setWeight(QFont::DemiBold);
  model_->setFont(bold);
  devices_ =
      addItem("devicesLabel", tr("Devices the model's layers and its cache are spread over"));
  cache_ = addItem("cacheLabel",
                   tr("How the KV cache stores keys and values. FP16 is exact; Q8, Q6, Q4 and FP8 "
                      "keep more context in the same memory, and a smaller cache also decodes "
                      "faster at long context."));
  speed_ = addItem("speedLabel", tr("Generation speed of the last reply, in tokens per second"));
  firstToken_ = addItem("firstTokenLabel",
                        tr("Time from sending the last message to the first token of the reply: "
                           "mostly reading the part of the prompt that was not cached"));
  reused_ = addItem("reusedLabel",
                    tr("Tokens of the last prompt taken from the KV cache instead of being "
                       "computed again"));
  layout->addStretch(1);

  gauge_ = new ContextGauge(this);
  gauge_->setObjectName(QStringLiteral("contextGauge"));
  gauge_->setAccessibleName(tr("Context"));
  auto* separator = new QLabel(QStringLiteral("·"), this);
  useMutedText(separator);
  layout->addWidget(separator);
  layout->addWidget(gauge_);
  items_.push_back({separator, gauge_});

  setModelName({});
  setDevices({});
  setCacheFormat({});
  clearLastReply();
  setContextFill(0, 0);
}

QLabel* StatusLine::addItem(const char* name, const QString& tip) {
  auto* separator = new QLabel(QStringLiteral("·"), this);
  useMutedText(separator);
  auto* label = new QLabel(this);
  label->setObjectName(QString::fromLatin1(name));
  label->setToolTip(tip);
  label->setAccessibleDescription(tip);
  label->setTextFormat(Qt::PlainText);
  // An explicit minimum lets a narrow chat column shorten the labels (their
  // tooltips keep every word) instead of pushing the context gauge out of sight.
  label->setMinimumWidth(1);
  layout()->addWidget(separator);
  layout()->addWidget(label);
  items_.push_back({separator, label});
  return label;
}

void StatusLine::setItem(QLabel* label, const QString& text) {
  label->setText(text);
  label->setAccessibleName(text);
  label->setVisible(!text.isEmpty());
  refreshSeparators();
}

void StatusLine::refreshSeparators() {
  // A dot between two shown items, never before the first or around hidden ones.
  bool anyBefore = false;
  for (const Item& item : items_) {
    const bool shown = !item.widget->isHidden();
    item.separator->setVisible(shown && anyBefore);
    anyBefore = anyBefore || shown;
  }
}

void StatusLine::setModelName(const QString& name) {
  setItem(model_, name.isEmpty() ? tr("No model loaded") : name);
  model_->setForegroundRole(name.isEmpty() ? QPalette::PlaceholderText : QPalette::WindowText);
}

void StatusLine::setDevices(const QString& devices) {
  setItem(devices_, devices);
}

void StatusLine::setCacheFormat(const QString& format) {
  setItem(cache_, format.isEmpty() ? QString() : tr("%1 cache").arg(format));
}

void StatusLine::setTokensPerSecond(double tokensPerSecond) {
  // 0: nothing was decoded (stopped before the first token); no rate to show.
  setItem(speed_, tokensPerSecond <= 0 || !std::isfinite(tokensPerSecond)
                      ? QString()
                      : tr("%1 tok/s").arg(QLocale().toString(tokensPerSecond, 'f', 1)));
}

void StatusLine::setTimeToFirstToken(double seconds) {
  QString text;
  if (seconds >= 0 && std::isfinite(seconds)) {
    text = seconds < 1.0 ? tr("first token %1 ms").arg(qRound(seconds * 1000))
                         : tr("first token %1 s").arg(QLocale().toString(seconds, 'f', 2));
  }
  setItem(firstToken_, text);
}

void StatusLine::setReusedTokens(qint64 reused, qint64 promptTokens) {
  const QLocale locale;
  QString text;
  if (reused >= 0) {
    text = promptTokens > 0 ? tr("%1 of %2 tokens reused")
                                  .arg(locale.toString(reused), locale.toString(promptTokens))
                            : tr("%1 tokens reused").arg(locale.toString(reused));
  }
  setItem(reused_, text);
}

void StatusLine::clearLastReply() {
  setTokensPerSecond(-1);
  setTimeToFirstToken(-1);
  setReusedTokens(-1);
}

void StatusLine::setContextFill(qint64 used, qint64 maximum) {
  contextUsed_ = std::max<qint64>(0, used);
  contextMaximum_ = std::max<qint64>(0, maximum);
  gauge_->setFill(contextUsed_, contextMaximum_, kWarningFill, kCriticalFill);
  gauge_->setToolTip(
      tr("Context of this chat: %1 of %2 tokens used (%3%). When it is full, the oldest "
         "messages no longer fit in what the model reads.")
          .arg(QLocale().toString(contextUsed_), QLocale().toString(contextMaximum_))
          .arg(qRound(contextFraction() * 100)));
  gauge_->setVisible(contextMaximum_ > 0);
  refreshSeparators();
}

double StatusLine::contextFraction() const {
  return gauge_->fraction();
}

StatusLine::FillLevel StatusLine::contextLevel() const {
  const double share = contextFraction();
  if (share >= kCriticalFill) return FillLevel::Critical;
  if (share >= kWarningFill) return FillLevel::Warning;
  return FillLevel::Normal;
}

}  // namespace quire::ui
