#include "chat_list_delegate.h"

#include <QApplication>
#include <QLineEdit>
#include <QLocale>
#include <QPainter>
#include <algorithm>

#include "chat_style.h"
#include "quire/ui/chat_list_roles.h"
#include "title_elide.h"

namespace quire::ui {
namespace {

constexpr int kPadX = 10;
constexpr int kPadY = 7;
constexpr int kLineGap = 2;
constexpr qreal kTimeScale = 0.86;

QFont timeFont(const QFont& base) {
  QFont font = base;
  if (font.pointSizeF() > 0)
    font.setPointSizeF(font.pointSizeF() * kTimeScale);
  else
    font.setPixelSize(qRound(font.pixelSize() * kTimeScale));
  return font;
}

QRect titleRect(const QStyleOptionViewItem& option) {
  const QRect inner = option.rect.adjusted(kPadX, kPadY, -kPadX, -kPadY);
  return {inner.left(), inner.top(), inner.width(), QFontMetrics(option.font).height()};
}

}  // namespace

QString formatLastActivity(const QDateTime& when, const QDateTime& now) {
  if (!when.isValid()) return {};
  const qint64 seconds = when.secsTo(now);
  if (seconds < 60) return ChatListDelegate::tr("just now");
  if (seconds < 3600) return ChatListDelegate::tr("%1 min ago").arg(seconds / 60);
  const QLocale locale;
  const qint64 days = when.date().daysTo(now.date());
  if (days == 0) {
    // Some locales' short format still carries seconds, which a sidebar does not need.
    QString format = locale.timeFormat(QLocale::ShortFormat);
    format.remove(QStringLiteral(":ss"));
    return locale.toString(when.time(), format);
  }
  if (days == 1) return ChatListDelegate::tr("Yesterday");
  if (days < 7) return locale.dayName(when.date().dayOfWeek(), QLocale::LongFormat);
  if (when.date().year() == now.date().year()) return locale.toString(when.date(), u"d MMM");
  return locale.toString(when.date(), u"d MMM yyyy");
}

void ChatListDelegate::paint(QPainter* painter, const QStyleOptionViewItem& option,
                             const QModelIndex& index) const {
  QStyleOptionViewItem opt(option);
  initStyleOption(&opt, index);
  const QString title = opt.text;
  // The style draws background, hover and selection; the text is ours.
  opt.text.clear();
  const QWidget* widget = opt.widget;
  QStyle* style = widget ? widget->style() : QApplication::style();
  style->drawControl(QStyle::CE_ItemViewItem, &opt, painter, widget);

  const bool selected = opt.state & QStyle::State_Selected;
  const QPalette::ColorGroup group = !(opt.state & QStyle::State_Enabled) ? QPalette::Disabled
                                     : (opt.state & QStyle::State_Active) ? QPalette::Active
                                                                          : QPalette::Inactive;
  const QColor text =
      opt.palette.color(group, selected ? QPalette::HighlightedText : QPalette::Text);
  const QColor muted = selected
                           ? mixColors(text, opt.palette.color(group, QPalette::Highlight), 0.3)
                           : opt.palette.color(group, QPalette::PlaceholderText);

  const QRect titleArea = titleRect(opt);
  const QFont small = timeFont(opt.font);
  const QRect timeArea(titleArea.left(), titleArea.bottom() + 1 + kLineGap, titleArea.width(),
                       QFontMetrics(small).height());
  const QString when = formatLastActivity(index.data(ChatLastActivityRole).toDateTime(),
                                          QDateTime::currentDateTime());
  painter->save();
  painter->setFont(opt.font);
  painter->setPen(text);
  painter->drawText(titleArea, Qt::AlignLeft | Qt::AlignVCenter,
                    elide_title(QFontMetrics(opt.font), title, titleArea.width()));
  painter->setFont(small);
  painter->setPen(muted);
  painter->drawText(timeArea, Qt::AlignLeft | Qt::AlignVCenter, when);
  painter->restore();
}

QString ChatListDelegate::shownTitle(const QStyleOptionViewItem& option,
                                     const QModelIndex& index) const {
  QStyleOptionViewItem opt(option);
  initStyleOption(&opt, index);
  return elide_title(QFontMetrics(opt.font), opt.text, titleRect(opt).width());
}

QSize ChatListDelegate::sizeHint(const QStyleOptionViewItem& option, const QModelIndex&) const {
  const int height = QFontMetrics(option.font).height() + kLineGap +
                     QFontMetrics(timeFont(option.font)).height() + 2 * kPadY;
  return {160, height};
}

QWidget* ChatListDelegate::createEditor(QWidget* parent, const QStyleOptionViewItem&,
                                        const QModelIndex&) const {
  auto* editor = new QLineEdit(parent);
  editor->setObjectName(QStringLiteral("renameEditor"));
  editor->setAccessibleName(tr("Chat title"));
  return editor;
}

void ChatListDelegate::setEditorData(QWidget* editor, const QModelIndex& index) const {
  auto* line = static_cast<QLineEdit*>(editor);
  line->setText(index.data(Qt::DisplayRole).toString());
  line->selectAll();
}

void ChatListDelegate::setModelData(QWidget* editor, QAbstractItemModel*,
                                    const QModelIndex& index) const {
  emit renameCommitted(index, static_cast<QLineEdit*>(editor)->text());
}

void ChatListDelegate::updateEditorGeometry(QWidget* editor, const QStyleOptionViewItem& option,
                                            const QModelIndex&) const {
  const QRect title = titleRect(option);
  const int height = std::max(title.height() + 6, editor->sizeHint().height());
  editor->setGeometry(title.left() - 4, title.center().y() - height / 2, title.width() + 8, height);
}

}  // namespace quire::ui
