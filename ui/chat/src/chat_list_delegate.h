#pragma once

#include <QDateTime>
#include <QStyledItemDelegate>

namespace quire::ui {

// "just now", "5 min ago", "14:32" (today), "Yesterday", a weekday within the
// last week, then a date: short enough for a sidebar, precise where it matters.
QString formatLastActivity(const QDateTime& when, const QDateTime& now);

// Paints a chat as its title over its last activity time, in palette colours.
// Renaming edits the title in a line edit; the result is handed to
// renameCommitted instead of the model, which belongs to the app.
class ChatListDelegate : public QStyledItemDelegate {
  Q_OBJECT

 public:
  using QStyledItemDelegate::QStyledItemDelegate;

  void paint(QPainter* painter, const QStyleOptionViewItem& option,
             const QModelIndex& index) const override;
  QSize sizeHint(const QStyleOptionViewItem& option, const QModelIndex& index) const override;
  // The title as the row draws it in `option.rect` (see elide_title: a
  // closing "(branch)" or "(imported)" stays whole).
  QString shownTitle(const QStyleOptionViewItem& option, const QModelIndex& index) const;
  QWidget* createEditor(QWidget* parent, const QStyleOptionViewItem& option,
                        const QModelIndex& index) const override;
  void setEditorData(QWidget* editor, const QModelIndex& index) const override;
  void setModelData(QWidget* editor, QAbstractItemModel* model,
                    const QModelIndex& index) const override;
  void updateEditorGeometry(QWidget* editor, const QStyleOptionViewItem& option,
                            const QModelIndex& index) const override;

 signals:
  void renameCommitted(const QModelIndex& index, const QString& title) const;
};

}  // namespace quire::ui
