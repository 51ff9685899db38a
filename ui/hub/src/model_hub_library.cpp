// The lower half of the "Get models" window: downloads in progress, the
// models already on this computer, and the Hub token.

#include <QFormLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QProgressBar>
#include <QPushButton>
#include <QTreeWidget>
#include <QVBoxLayout>

#include "hub_text.h"
#include "quire/ui/model_hub_window.h"

namespace quire::ui {
namespace {

QTreeWidget* make_list(const QString& name, const QStringList& headers) {
  auto* list = new QTreeWidget;
  list->setObjectName(name);
  list->setRootIsDecorated(false);
  list->setColumnCount(static_cast<int>(headers.size()));
  list->setHeaderLabels(headers);
  list->header()->setStretchLastSection(true);
  return list;
}

QPushButton* make_button(const QString& text, const QString& name) {
  auto* button = new QPushButton(text);
  button->setObjectName(name);
  return button;
}

QString current_id(const QTreeWidget* list) {
  const QTreeWidgetItem* item = list->currentItem();
  return item == nullptr ? QString() : item->data(0, Qt::UserRole).toString();
}

void select_id(QTreeWidget* list, const QString& id) {
  for (int i = 0; i < list->topLevelItemCount(); ++i)
    if (list->topLevelItem(i)->data(0, Qt::UserRole).toString() == id)
      list->setCurrentItem(list->topLevelItem(i));
}

}  // namespace

QWidget* ModelHubWindow::buildLibrary() {
  auto* box = new QWidget;
  auto* layout = new QHBoxLayout(box);
  layout->setContentsMargins(0, 0, 0, 0);

  auto* downloads = new QGroupBox(tr("Downloads"));
  auto* downloads_layout = new QVBoxLayout(downloads);
  download_list_ = make_list(QStringLiteral("hubDownloads"), {tr("Model"), tr("Progress")});
  download_list_->header()->setSectionResizeMode(0, QHeaderView::ResizeToContents);
  downloads_layout->addWidget(download_list_, 1);
  auto* download_buttons = new QHBoxLayout;
  pause_ = make_button(tr("Pause"), QStringLiteral("hubPauseButton"));
  resume_ = make_button(tr("Resume"), QStringLiteral("hubResumeButton"));
  cancel_ = make_button(tr("Cancel"), QStringLiteral("hubCancelButton"));
  download_buttons->addStretch(1);
  download_buttons->addWidget(pause_);
  download_buttons->addWidget(resume_);
  download_buttons->addWidget(cancel_);
  downloads_layout->addLayout(download_buttons);

  auto* local = new QGroupBox(tr("On this computer"));
  auto* local_layout = new QVBoxLayout(local);
  local_list_ =
      make_list(QStringLiteral("hubLocalModels"), {tr("Model"), tr("Size"), tr("Folder")});
  local_list_->header()->setSectionResizeMode(0, QHeaderView::ResizeToContents);
  local_layout->addWidget(local_list_, 1);
  auto* local_buttons = new QHBoxLayout;
  open_ = make_button(tr("Open and chat"), QStringLiteral("hubOpenButton"));
  remove_ = make_button(tr("Remove…"), QStringLiteral("hubRemoveButton"));
  local_buttons->addStretch(1);
  local_buttons->addWidget(remove_);
  local_buttons->addWidget(open_);
  local_layout->addLayout(local_buttons);

  auto* token_box = new QWidget;
  auto* token_form = new QFormLayout(token_box);
  token_form->setContentsMargins(0, 0, 0, 0);
  token_text_ = new QLineEdit;
  token_text_->setObjectName(QStringLiteral("hubTokenText"));
  token_text_->setEchoMode(QLineEdit::Password);
  token_text_->setPlaceholderText(tr("hf_… (for gated and private models)"));
  auto* save = make_button(tr("Save in keyring"), QStringLiteral("hubTokenSave"));
  auto* token_row = new QHBoxLayout;
  token_row->addWidget(token_text_, 1);
  token_row->addWidget(save);
  token_form->addRow(tr("Hugging Face token:"), token_row);
  token_state_ = new QLabel;
  token_state_->setObjectName(QStringLiteral("hubTokenState"));
  token_state_->setWordWrap(true);
  token_form->addRow(QString(), token_state_);
  local_layout->addWidget(token_box);

  layout->addWidget(downloads, 1);
  layout->addWidget(local, 1);

  connect(download_list_, &QTreeWidget::currentItemChanged, this, [this] { refreshButtons(); });
  connect(local_list_, &QTreeWidget::currentItemChanged, this, [this] { refreshButtons(); });
  connect(pause_, &QPushButton::clicked, this, [this] {
    if (const QString id = selectedDownload(); !id.isEmpty()) emit pauseRequested(id);
  });
  connect(resume_, &QPushButton::clicked, this, [this] {
    if (const QString id = selectedDownload(); !id.isEmpty()) emit resumeRequested(id);
  });
  connect(cancel_, &QPushButton::clicked, this, [this] {
    if (const QString id = selectedDownload(); !id.isEmpty()) emit cancelRequested(id);
  });
  connect(open_, &QPushButton::clicked, this, [this] {
    const QString id = selectedLocal();
    for (const LocalModelRow& row : local_)
      if (row.id == id) emit openRequested(row.folder);
  });
  connect(local_list_, &QTreeWidget::itemDoubleClicked, this, [this] { open_->click(); });
  connect(remove_, &QPushButton::clicked, this, [this] {
    if (const QString id = selectedLocal(); !id.isEmpty()) emit removeRequested(id);
  });
  const auto save_token = [this] {
    emit tokenEntered(token_text_->text().trimmed());
    token_text_->clear();
  };
  connect(save, &QPushButton::clicked, this, save_token);
  connect(token_text_, &QLineEdit::returnPressed, this, save_token);
  return box;
}

void ModelHubWindow::setDownloads(const QList<DownloadRow>& rows) {
  const QString selected = selectedDownload();
  downloads_ = rows;
  {
    const QSignalBlocker quiet(download_list_);
    // Rows are updated in place so that the bars do not flicker.
    while (download_list_->topLevelItemCount() > rows.size())
      delete download_list_->takeTopLevelItem(download_list_->topLevelItemCount() - 1);
    for (int i = 0; i < rows.size(); ++i) {
      QTreeWidgetItem* item = download_list_->topLevelItem(i);
      if (item == nullptr) {
        item = new QTreeWidgetItem;
        download_list_->addTopLevelItem(item);
        auto* bar = new QProgressBar;
        bar->setTextVisible(true);
        download_list_->setItemWidget(item, 1, bar);
      }
      const DownloadRow& row = rows.at(i);
      item->setData(0, Qt::UserRole, row.id);
      item->setText(0, row.title);
      item->setToolTip(0, row.message);
      auto* bar = qobject_cast<QProgressBar*>(download_list_->itemWidget(item, 1));
      // Permille, so that files past 2 GiB fit an int.
      bar->setRange(0, 1000);
      bar->setValue(row.bytes_total > 0 ? int(row.bytes_done * 1000 / row.bytes_total) : 0);
      bar->setFormat(hub_text::progress(row));
      bar->setToolTip(row.message);
    }
  }
  if (!selected.isEmpty()) select_id(download_list_, selected);
  if (download_list_->currentItem() == nullptr && download_list_->topLevelItemCount() > 0)
    download_list_->setCurrentItem(download_list_->topLevelItem(0));
  refreshButtons();
}

void ModelHubWindow::setLocalModels(const QList<LocalModelRow>& rows) {
  const QString selected = selectedLocal();
  local_ = rows;
  {
    const QSignalBlocker quiet(local_list_);
    local_list_->clear();
    for (const LocalModelRow& row : rows) {
      auto* item = new QTreeWidgetItem({row.title, hub_text::size(row.bytes), row.folder});
      item->setData(0, Qt::UserRole, row.id);
      item->setToolTip(2, row.folder);
      local_list_->addTopLevelItem(item);
    }
  }
  if (!selected.isEmpty()) select_id(local_list_, selected);
  refreshButtons();
}

void ModelHubWindow::selectLocalModel(const QString& id) {
  select_id(local_list_, id);
}

void ModelHubWindow::setTokenState(const QString& text) {
  token_state_->setText(text);
}

QString ModelHubWindow::selectedDownload() const {
  return current_id(download_list_);
}

QString ModelHubWindow::selectedLocal() const {
  return current_id(local_list_);
}

void ModelHubWindow::refreshButtons() {
  const QString key = selectedQuantization();
  bool can_download = false;
  for (const QuantizationRow& row : quantizations_)
    if (row.key == key)
      can_download = !row.downloaded && !row.downloading && row.verdict != FitVerdict::Unsupported;
  download_->setEnabled(can_download);

  const QString id = selectedDownload();
  DownloadRow::State state = DownloadRow::State::Done;
  bool any = false;
  for (const DownloadRow& row : downloads_)
    if (row.id == id) {
      state = row.state;
      any = true;
    }
  using State = DownloadRow::State;
  pause_->setEnabled(any && (state == State::Running || state == State::Queued));
  resume_->setEnabled(any && (state == State::Paused || state == State::Failed));
  cancel_->setEnabled(any && state != State::Done);

  const QString local = selectedLocal();
  bool removable = false;
  for (const LocalModelRow& row : local_)
    if (row.id == local) removable = row.removable;
  open_->setEnabled(!local.isEmpty());
  remove_->setEnabled(removable);
}

}  // namespace quire::ui
