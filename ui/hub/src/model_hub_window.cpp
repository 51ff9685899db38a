#include "quire/ui/model_hub_window.h"

#include <QComboBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QListWidget>
#include <QPushButton>
#include <QSplitter>
#include <QTreeWidget>
#include <QVBoxLayout>

#include "hub_text.h"

namespace quire::ui {
namespace {

enum QuantizationColumn { kLabel, kSize, kWeights, kVerdict, kColumns };

QLabel* wrapping_label(const QString& name) {
  auto* label = new QLabel;
  label->setObjectName(name);
  label->setWordWrap(true);
  label->setTextInteractionFlags(Qt::TextSelectableByMouse);
  return label;
}

}  // namespace

ModelHubWindow::ModelHubWindow(QWidget* parent) : QWidget(parent, Qt::Window) {
  setObjectName(QStringLiteral("modelHubWindow"));
  setWindowTitle(tr("Get models"));
  resize(1100, 760);

  auto* top = new QSplitter(Qt::Horizontal);
  top->addWidget(buildSearch());
  top->addWidget(buildDetails());
  top->setStretchFactor(0, 2);
  top->setStretchFactor(1, 3);

  auto* whole = new QSplitter(Qt::Vertical);
  whole->addWidget(top);
  whole->addWidget(buildLibrary());
  whole->setStretchFactor(0, 3);
  whole->setStretchFactor(1, 2);

  auto* layout = new QVBoxLayout(this);
  layout->addWidget(whole);
  refreshButtons();
}

QWidget* ModelHubWindow::buildSearch() {
  auto* box = new QWidget;
  auto* layout = new QVBoxLayout(box);
  layout->setContentsMargins(0, 0, 0, 0);

  auto* row = new QHBoxLayout;
  search_text_ = new QLineEdit;
  search_text_->setObjectName(QStringLiteral("hubSearchText"));
  search_text_->setPlaceholderText(tr("Search models on Hugging Face (e.g. Llama 3 exl2)"));
  search_text_->setClearButtonEnabled(true);
  search_button_ = new QPushButton(tr("Search"));
  search_button_->setObjectName(QStringLiteral("hubSearchButton"));
  search_button_->setDefault(true);
  row->addWidget(search_text_, 1);
  row->addWidget(search_button_);
  layout->addLayout(row);

  auto* filters = new QHBoxLayout;
  sort_ = new QComboBox;
  sort_->setObjectName(QStringLiteral("hubSort"));
  sort_->addItem(tr("Most downloaded"), QStringLiteral("downloads"));
  sort_->addItem(tr("Most liked"), QStringLiteral("likes"));
  sort_->addItem(tr("Recently updated"), QStringLiteral("lastModified"));
  format_ = new QComboBox;
  format_->setObjectName(QStringLiteral("hubFormat"));
  format_->addItem(tr("Any format"), static_cast<int>(HubFormat::Any));
  format_->addItem(QStringLiteral("EXL2"), static_cast<int>(HubFormat::Exl2));
  format_->addItem(QStringLiteral("EXL3"), static_cast<int>(HubFormat::Exl3));
  format_->addItem(QStringLiteral("GPTQ / AWQ"), static_cast<int>(HubFormat::GptqAwq));
  format_->addItem(QStringLiteral("FP8"), static_cast<int>(HubFormat::Fp8));
  format_->addItem(QStringLiteral("FP16 / BF16"), static_cast<int>(HubFormat::Fp16));
  filters->addWidget(new QLabel(tr("Sort:")));
  filters->addWidget(sort_);
  filters->addWidget(new QLabel(tr("Format:")));
  filters->addWidget(format_);
  filters->addStretch(1);
  layout->addLayout(filters);

  search_status_ = wrapping_label(QStringLiteral("hubSearchStatus"));
  layout->addWidget(search_status_);
  results_list_ = new QListWidget;
  results_list_->setObjectName(QStringLiteral("hubResults"));
  results_list_->setAlternatingRowColors(true);
  results_list_->setWordWrap(true);
  layout->addWidget(results_list_, 1);

  const auto ask = [this] { emit searchRequested(searchRequest()); };
  connect(search_button_, &QPushButton::clicked, this, ask);
  connect(search_text_, &QLineEdit::returnPressed, this, ask);
  connect(sort_, &QComboBox::activated, this, ask);
  connect(format_, &QComboBox::activated, this, ask);
  connect(results_list_, &QListWidget::currentRowChanged, this, [this](int index) {
    if (index >= 0 && index < results_.size()) emit repositoryChosen(results_.at(index).repo);
  });
  return box;
}

QWidget* ModelHubWindow::buildDetails() {
  auto* box = new QWidget;
  auto* layout = new QVBoxLayout(box);
  layout->setContentsMargins(0, 0, 0, 0);
  repo_title_ = wrapping_label(QStringLiteral("hubRepoTitle"));
  QFont title_font = repo_title_->font();
  title_font.setBold(true);
  title_font.setPointSizeF(title_font.pointSizeF() * 1.2);
  repo_title_->setFont(title_font);
  repo_title_->setText(tr("Choose a repository to see its quantizations."));
  repo_status_ = wrapping_label(QStringLiteral("hubRepoStatus"));
  layout->addWidget(repo_title_);
  layout->addWidget(repo_status_);

  quantization_list_ = new QTreeWidget;
  quantization_list_->setObjectName(QStringLiteral("hubQuantizations"));
  quantization_list_->setRootIsDecorated(false);
  quantization_list_->setColumnCount(kColumns);
  quantization_list_->setHeaderLabels(
      {tr("Quantization"), tr("Download"), tr("Weights"), tr("On your devices")});
  quantization_list_->header()->setSectionResizeMode(kWeights, QHeaderView::Stretch);
  quantization_list_->setWordWrap(true);
  layout->addWidget(quantization_list_, 1);

  download_ = new QPushButton(tr("Download"));
  download_->setObjectName(QStringLiteral("hubDownloadButton"));
  auto* row = new QHBoxLayout;
  row->addStretch(1);
  row->addWidget(download_);
  layout->addLayout(row);

  connect(quantization_list_, &QTreeWidget::currentItemChanged, this, [this] { refreshButtons(); });
  connect(download_, &QPushButton::clicked, this, [this] {
    const QString key = selectedQuantization();
    if (!key.isEmpty()) emit downloadRequested(repo_, key);
  });
  return box;
}

HubSearchRequest ModelHubWindow::searchRequest() const {
  HubSearchRequest request;
  request.text = search_text_->text().trimmed();
  request.sort = sort_->currentData().toString();
  request.format = static_cast<HubFormat>(format_->currentData().toInt());
  return request;
}

void ModelHubWindow::setSearching(const QString& text) {
  search_status_->setText(text);
}

void ModelHubWindow::setResults(const QList<HubModelRow>& rows, const QString& error) {
  results_ = error.isEmpty() ? rows : QList<HubModelRow>();
  const QSignalBlocker quiet(results_list_);
  results_list_->clear();
  if (!error.isEmpty()) {
    search_status_->setText(error);
    return;
  }
  // Spelled out for one and many: without a translation, Qt's %n says "(s)".
  search_status_->setText(rows.isEmpty()     ? tr("No model matches.")
                          : rows.size() == 1 ? tr("1 model")
                                             : tr("%1 models").arg(rows.size()));
  for (const HubModelRow& row : rows) {
    QString line = row.repo;
    if (!row.formats.isEmpty()) line += QStringLiteral("  [") + row.formats.join(u", ") + u']';
    auto* item = new QListWidgetItem(line + u'\n' + hub_text::popularity(row));
    item->setData(Qt::UserRole, row.repo);
    results_list_->addItem(item);
  }
}

void ModelHubWindow::showRepository(const QString& repo, const QString& status) {
  if (repo != repo_) {
    repo_ = repo;
    quantizations_.clear();
    quantization_list_->clear();
  }
  repo_title_->setText(repo);
  repo_status_->setText(status);
  refreshButtons();
}

void ModelHubWindow::setQuantizations(const QList<QuantizationRow>& rows, const QString& note) {
  const QString selected = selectedQuantization();
  quantizations_ = rows;
  {
    const QSignalBlocker quiet(quantization_list_);
    quantization_list_->clear();
    for (int i = 0; i < quantizations_.size(); ++i) {
      quantization_list_->addTopLevelItem(new QTreeWidgetItem);
      fillQuantizationItem(i);
    }
  }
  repo_status_->setText(note);
  if (!selected.isEmpty()) selectQuantization(selected);
  refreshButtons();
}

void ModelHubWindow::updateQuantization(const QuantizationRow& row) {
  for (int i = 0; i < quantizations_.size(); ++i) {
    if (quantizations_[i].key != row.key) continue;
    quantizations_[i] = row;
    fillQuantizationItem(i);
  }
  refreshButtons();
}

void ModelHubWindow::fillQuantizationItem(int index) {
  QTreeWidgetItem* item = quantization_list_->topLevelItem(index);
  if (item == nullptr) return;
  const QuantizationRow& row = quantizations_.at(index);
  item->setData(kLabel, Qt::UserRole, row.key);
  item->setText(kLabel, row.label);
  item->setText(kSize, row.downloaded ? tr("%1, downloaded").arg(hub_text::size(row.bytes))
                                      : hub_text::size(row.bytes));
  item->setText(kWeights, row.weights);
  item->setText(kVerdict, hub_text::verdict(row));
  item->setToolTip(kVerdict, row.detail);
  item->setToolTip(kWeights, row.weights);
  const bool good = row.verdict == FitVerdict::Fits || row.verdict == FitVerdict::FitsSmaller;
  const bool bad = row.verdict == FitVerdict::DoesNotFit ||
                   row.verdict == FitVerdict::Unsupported || row.verdict == FitVerdict::Unknown;
  item->setForeground(kVerdict, good  ? QBrush(QColor(0x2e, 0x7d, 0x32))
                                : bad ? QBrush(QColor(0xc6, 0x28, 0x28))
                                      : palette().text());
}

QString ModelHubWindow::selectedQuantization() const {
  const QTreeWidgetItem* item = quantization_list_->currentItem();
  return item == nullptr ? QString() : item->data(kLabel, Qt::UserRole).toString();
}

void ModelHubWindow::selectQuantization(const QString& key) {
  for (int i = 0; i < quantization_list_->topLevelItemCount(); ++i) {
    QTreeWidgetItem* item = quantization_list_->topLevelItem(i);
    if (item->data(kLabel, Qt::UserRole).toString() == key)
      quantization_list_->setCurrentItem(item);
  }
}

}  // namespace quire::ui
