#include "quire/ui/status_line.h"

#include <QHBoxLayout>
#include <QLabel>
#include <QLocale>
#include <QResizeEvent>
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
  // The line decides what to show from its width (fitItems), so the layout
  // must not impose the width of everything shown as the line's minimum.
  layout->setSizeConstraint(QLayout::SetNoConstraint);

  model_ = addItem("modelLabel", tr("The model answering in this chat"));
  QFont bold = model_->font();
  bold.setWeight(QFont::DemiBold);
  model_->setFont(bold);
  // The one label that shortens (with "…") rather than giving way.
  model_->setSizePolicy(QSizePolicy::Preferred, QSizePolicy::Preferred);
  model_->setMinimumWidth(1);
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
  // Labels keep their whole width; a narrow line hides whole items instead
  // (fitItems), so no label is ever cut into a fragment.
  label->setSizePolicy(QSizePolicy::Fixed, QSizePolicy::Preferred);
  layout()->addWidget(separator);
  layout()->addWidget(label);
  items_.push_back({separator, label});
  return label;
}

void StatusLine::setItem(QLabel* label, const QString& text) {
  texts_[label] = text;
  label->setAccessibleName(text);
  fitItems();
}

QString StatusLine::itemText(const QString& objectName) const {
  for (const auto& [label, text] : texts_) {
    if (label->objectName() == objectName) return text;
  }
  return {};
}

int StatusLine::widthWithout(const std::set<const QWidget*>& hidden) const {
  const auto* box = static_cast<const QHBoxLayout*>(layout());
  const QMargins margins = box->contentsMargins();
  // The stretch between the items and the gauge takes one spacing too.
  int width = margins.left() + margins.right() + box->spacing();
  int shown = 0;
  for (const Item& item : items_) {
    const bool gone = item.widget == gauge_ ? contextMaximum_ <= 0 : hidden.contains(item.widget);
    if (gone) continue;
    width += item.widget->sizeHint().width();
    if (shown > 0) width += item.separator->sizeHint().width() + 2 * box->spacing();
    ++shown;
  }
  return width;
}

void StatusLine::fitItems() {
  for (const auto& [label, text] : texts_) {
    label->setText(text);
    label->setVisible(!text.isEmpty());
  }
  gauge_->setVisible(contextMaximum_ > 0);
  refreshSeparators();
  // Until it is shown the line has no width of its own to fit: show all.
  if (!isVisible()) return;
  // The layout measures what the shown items need (its size constraint is
  // off, so trying a set of items does not resize the line).
  const auto needed = [this] {
    layout()->invalidate();
    return layout()->sizeHint().width();
  };
  const auto drop = [this](QWidget* item) {
    item->hide();
    refreshSeparators();
  };
  for (QLabel* label : {reused_, firstToken_, devices_, cache_, speed_}) {
    if (needed() <= width()) break;
    drop(label);
  }
  if (const int excess = needed() - width(); excess > 0) {
    const int room = std::max(0, model_->sizeHint().width() - excess);
    const QString whole = texts_[model_];
    const QString shortened = model_->fontMetrics().elidedText(whole, Qt::ElideRight, room);
    // A name cut to its first letter or two and "…" names nothing: the
    // whole item goes, with its separator, rather than leave a fragment.
    if (shortened == whole || shortened.size() >= kShortestModelName) {
      model_->setText(shortened);
    } else {
      drop(model_);
    }
  }
  // The gauge goes last, and only where not even it fits.
  if (needed() > width()) drop(gauge_);
  // Lay the chosen items out now: the resize that asked for this fit has
  // already placed them as they were.
  layout()->invalidate();
  layout()->activate();
}

QSize StatusLine::minimumSizeHint() const {
  // What the line needs with every item that can give way gone: it must not
  // hold the chat column open at the width of everything it shows now.
  std::set<const QWidget*> hidden{reused_, firstToken_, devices_, cache_, speed_};
  const int model = model_->sizeHint().width();
  return {widthWithout(hidden) - model + model_->minimumWidth(), layout()->minimumSize().height()};
}

void StatusLine::showEvent(QShowEvent* event) {
  QWidget::showEvent(event);
  fitItems();
}

void StatusLine::resizeEvent(QResizeEvent* event) {
  QWidget::resizeEvent(event);
  fitItems();
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
  // A new fill says nothing yet of what the next turn drops.
  contextDrop_ = ContextDrop{};
  gauge_->setDropped(0, 0);
  refreshGaugeTip();
  gauge_->setVisible(contextMaximum_ > 0);
  fitItems();  // the gauge's width changes with its figures
}

void StatusLine::setContextDrop(const ContextDrop& drop) {
  contextDrop_ = drop;
  gauge_->setDropped(drop.from, drop.to);
  refreshGaugeTip();
}

void StatusLine::refreshGaugeTip() {
  QString tip = tr("Context of this chat: %1 of %2 tokens used (%3%).")
                    .arg(QLocale().toString(contextUsed_), QLocale().toString(contextMaximum_))
                    .arg(qRound(contextFraction() * 100));
  if (!contextDrop_.description.isEmpty()) {
    tip += u'\n' + contextDrop_.description;
  } else {
    tip += u' ' + tr("When it is full, the chat's context policy (Chat settings) decides what "
                     "the model no longer reads.");
  }
  gauge_->setToolTip(tip);
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
