#include "help_menu.h"

#include <QAction>
#include <QDesktopServices>
#include <QDialog>
#include <QDialogButtonBox>
#include <QHeaderView>
#include <QKeySequence>
#include <QLabel>
#include <QMenu>
#include <QRegularExpression>
#include <QSet>
#include <QStyle>
#include <QTableWidget>
#include <QUrl>
#include <QVBoxLayout>
#include <algorithm>
#include <optional>

#include "build_info.h"

namespace quire::gui {
namespace {

// Past this the shortcuts table scrolls rather than growing off the screen.
constexpr int kShortcutsMaxHeight = 640;

QString action_name(const QAction& action) {
  QString text = action.text();
  text.remove(QRegularExpression(QStringLiteral("&(?!&)")));
  text.replace(QStringLiteral("&&"), QStringLiteral("&"));
  if (text.endsWith(QChar(0x2026))) text.chop(1);
  if (text.endsWith(QStringLiteral("..."))) text.chop(3);
  return text.trimmed();
}

QDialog* reusable_dialog(QWidget& window, const QString& name, const QString& title) {
  if (auto* existing = window.findChild<QDialog*>(name)) return existing;
  auto* dialog = new QDialog(&window);
  dialog->setObjectName(name);
  dialog->setWindowTitle(title);
  auto* layout = new QVBoxLayout(dialog);
  auto* buttons = new QDialogButtonBox(QDialogButtonBox::Close, dialog);
  QObject::connect(buttons, &QDialogButtonBox::rejected, dialog, &QDialog::hide);
  layout->addWidget(buttons);
  return dialog;
}

void show_about(QWidget& window, const AboutFacts& facts) {
  QDialog* dialog =
      reusable_dialog(window, QStringLiteral("aboutDialog"), QObject::tr("About Quire"));
  auto* text = dialog->findChild<QLabel*>(QStringLiteral("aboutText"));
  if (text == nullptr) {
    text = new QLabel(dialog);
    text->setObjectName(QStringLiteral("aboutText"));
    text->setWordWrap(true);
    text->setTextFormat(Qt::RichText);
    text->setOpenExternalLinks(true);
    text->setTextInteractionFlags(Qt::TextBrowserInteraction);
    text->setMinimumWidth(420);
    static_cast<QVBoxLayout*>(dialog->layout())->insertWidget(0, text);
  }
  text->setText(about_text(facts));
  dialog->show();
  dialog->raise();
}

// The keys column must show every key in full: the dialog is as wide as
// both columns' contents, and as tall as its rows up to a screenful.
void fit_table(QTableWidget& table) {
  table.resizeColumnsToContents();
  table.resizeRowsToContents();
  const int frame = 2 * table.frameWidth();
  const int width = table.horizontalHeader()->length() + frame +
                    table.style()->pixelMetric(QStyle::PM_ScrollBarExtent, nullptr, &table);
  const int height = table.horizontalHeader()->height() + table.verticalHeader()->length() + frame;
  table.setMinimumWidth(width);
  table.setMinimumHeight(std::min(height, kShortcutsMaxHeight));
}

void show_shortcuts(QWidget& window) {
  QDialog* dialog =
      reusable_dialog(window, QStringLiteral("shortcutsDialog"), QObject::tr("Keyboard shortcuts"));
  auto* table = dialog->findChild<QTableWidget*>(QStringLiteral("shortcutsTable"));
  if (table == nullptr) {
    table = new QTableWidget(dialog);
    table->setObjectName(QStringLiteral("shortcutsTable"));
    table->setColumnCount(2);
    table->setHorizontalHeaderLabels({QObject::tr("Action"), QObject::tr("Keys")});
    table->verticalHeader()->hide();
    table->horizontalHeader()->setStretchLastSection(true);
    table->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    table->setEditTriggers(QAbstractItemView::NoEditTriggers);
    table->setSelectionMode(QAbstractItemView::NoSelection);
    table->setWordWrap(false);
    static_cast<QVBoxLayout*>(dialog->layout())->insertWidget(0, table);
  }
  // Read afresh each time: actions added or rebound since are listed as they are now.
  const QList<ShortcutRow> rows = shortcut_rows(window);
  table->setRowCount(static_cast<int>(rows.size()));
  for (int row = 0; row < rows.size(); ++row) {
    table->setItem(row, 0, new QTableWidgetItem(rows.at(row).action));
    table->setItem(row, 1, new QTableWidgetItem(rows.at(row).keys));
  }
  fit_table(*table);
  dialog->adjustSize();
  dialog->show();
  dialog->raise();
}

}  // namespace

QString about_text(const AboutFacts& facts) {
  const QString commit = QString::fromLatin1(build_commit());
  return QObject::tr(
             "<h3>Quire %1</h3>"
             "<p>A desktop chat application for local language models.</p>"
             "<p>Version %1, commit %2.<br>CUDA backend: %3.<br>Data folder: %4</p>"
             "<p><b>The bundled demo model</b> is a 5.8M-parameter Llama trained only to show "
             "how Quire works; its replies are often odd. Its weights are distributed under "
             "the GNU General Public License version 2 or later, because they are derived from "
             "GCIDE, the Collaborative International Dictionary of English (GPL-2.0-or-later), "
             "and from the fortune files of Debian's fortunes packages (BSD license of the "
             "University of California; the quotations belong to their authors).</p>")
      .arg(QString::fromLatin1(build_version()), commit.toHtmlEscaped(),
           facts.cuda_state.toHtmlEscaped(), facts.data_folder.toHtmlEscaped());
}

QList<ShortcutRow> shortcut_rows(const QWidget& window) {
  QList<ShortcutRow> rows;
  QSet<QString> seen;
  for (const QAction* action : window.findChildren<QAction*>()) {
    if (action->isSeparator() || action->shortcut().isEmpty()) continue;
    ShortcutRow row{action_name(*action), action->shortcut().toString(QKeySequence::NativeText)};
    const QString key = row.action + QChar(u'\t') + row.keys;
    if (row.action.isEmpty() || seen.contains(key)) continue;
    seen.insert(key);
    rows.append(row);
  }
  std::sort(rows.begin(), rows.end(), [](const ShortcutRow& a, const ShortcutRow& b) {
    return a.action.localeAwareCompare(b.action) < 0;
  });
  rows.append(typed_key_rows());
  return rows;
}

QList<ShortcutRow> typed_key_rows() {
  // Keys the message box and a message's editor read themselves (InputBox and
  // MessageWidget): no action carries them, so they are listed here.
  const auto keys = [](QKeyCombination first, std::optional<QKeyCombination> second = {}) {
    QString text = QKeySequence(first).toString(QKeySequence::NativeText);
    if (second) {
      text = QObject::tr("%1 or %2")
                 .arg(text, QKeySequence(*second).toString(QKeySequence::NativeText));
    }
    return text;
  };
  const QKeyCombination enter(Qt::Key_Enter);
  const QKeyCombination ctrl_enter(Qt::CTRL | Qt::Key_Enter);
  return {
      {QObject::tr("Send the message"), keys(enter, ctrl_enter)},
      {QObject::tr("New line in the message"), keys(Qt::SHIFT | Qt::Key_Enter)},
      {QObject::tr("Send an edited message again"), keys(enter, ctrl_enter)},
      {QObject::tr("Cancel editing a message"), keys(QKeyCombination(Qt::Key_Escape))},
  };
}

void fill_help_menu(QMenu& menu, QWidget& window, std::function<AboutFacts()> facts) {
  QAction* shortcuts = menu.addAction(QObject::tr("&Keyboard shortcuts"));
  shortcuts->setObjectName(QStringLiteral("shortcutsAction"));
  shortcuts->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_Slash));
  QObject::connect(shortcuts, &QAction::triggered, &window, [&window] { show_shortcuts(window); });
  QAction* folder = menu.addAction(QObject::tr("Open the &data folder"));
  folder->setObjectName(QStringLiteral("dataFolderAction"));
  QObject::connect(folder, &QAction::triggered, &window, [facts] {
    QDesktopServices::openUrl(QUrl::fromLocalFile(facts().data_folder));
  });
  menu.addSeparator();
  QAction* about = menu.addAction(QObject::tr("&About Quire"));
  about->setObjectName(QStringLiteral("aboutAction"));
  about->setMenuRole(QAction::AboutRole);
  QObject::connect(about, &QAction::triggered, &window,
                   [&window, facts] { show_about(window, facts()); });
}

}  // namespace quire::gui
