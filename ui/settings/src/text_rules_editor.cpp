#include "text_rules_editor.h"

#include <QDoubleSpinBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QListWidget>
#include <QPushButton>
#include <QTableWidget>
#include <QVBoxLayout>

namespace quire::ui {
namespace {

// The bias range the CLI and the server take.
constexpr double kTextBiasLimit = 100;

// Line breaks and tabs are shown as the escapes people type, so that a
// banned "\n" stays visible in the list.
QString rule_text_shown(const QString& text) {
  QString shown = text;
  shown.replace(u'\n', QStringLiteral("⏎")).replace(u'\t', QStringLiteral("⇥"));
  return shown;
}

QPushButton* rule_button(const QString& text, const QString& name, QWidget* parent) {
  auto* made = new QPushButton(text, parent);
  made->setObjectName(name);
  return made;
}

}  // namespace

TextRulesEditor::TextRulesEditor(QWidget* parent) : QWidget(parent) {
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);

  auto* banned_label = new QLabel(tr("Never show (any case; the reply chooses again where one "
                                     "would begin):"),
                                  this);
  banned_label->setWordWrap(true);
  layout->addWidget(banned_label);
  banned_ = new QListWidget(this);
  banned_->setObjectName(QStringLiteral("chatBannedStrings"));
  banned_->setMaximumHeight(96);
  layout->addWidget(banned_);
  auto* banned_row = new QHBoxLayout();
  banned_input_ = new QLineEdit(this);
  banned_input_->setObjectName(QStringLiteral("chatBannedStringInput"));
  banned_input_->setPlaceholderText(tr("Text the replies must never show"));
  add_banned_ = rule_button(tr("Add"), QStringLiteral("chatAddBannedString"), this);
  remove_banned_ = rule_button(tr("Remove"), QStringLiteral("chatRemoveBannedString"), this);
  banned_row->addWidget(banned_input_, 1);
  banned_row->addWidget(add_banned_);
  banned_row->addWidget(remove_banned_);
  layout->addLayout(banned_row);

  auto* bias_label =
      new QLabel(tr("Logit bias by text (-100 to 100, added to every token of the text):"), this);
  bias_label->setWordWrap(true);
  layout->addWidget(bias_label);
  biases_ = new QTableWidget(0, 2, this);
  biases_->setObjectName(QStringLiteral("chatTextBiases"));
  biases_->setHorizontalHeaderLabels({tr("Text"), tr("Bias")});
  biases_->horizontalHeader()->setSectionResizeMode(0, QHeaderView::Stretch);
  biases_->verticalHeader()->hide();
  biases_->setEditTriggers(QAbstractItemView::NoEditTriggers);
  biases_->setSelectionBehavior(QAbstractItemView::SelectRows);
  biases_->setMaximumHeight(120);
  layout->addWidget(biases_);
  auto* bias_row = new QHBoxLayout();
  bias_text_ = new QLineEdit(this);
  bias_text_->setObjectName(QStringLiteral("chatBiasTextInput"));
  bias_text_->setPlaceholderText(tr("Text"));
  bias_value_ = new QDoubleSpinBox(this);
  bias_value_->setObjectName(QStringLiteral("chatBiasValueInput"));
  bias_value_->setRange(-kTextBiasLimit, kTextBiasLimit);
  bias_value_->setDecimals(2);
  bias_value_->setValue(-5);
  add_bias_ = rule_button(tr("Add"), QStringLiteral("chatAddTextBias"), this);
  remove_bias_ = rule_button(tr("Remove"), QStringLiteral("chatRemoveTextBias"), this);
  bias_row->addWidget(bias_text_, 1);
  bias_row->addWidget(bias_value_);
  bias_row->addWidget(add_bias_);
  bias_row->addWidget(remove_bias_);
  layout->addLayout(bias_row);

  connect(add_banned_, &QPushButton::clicked, this, &TextRulesEditor::addBanned);
  connect(banned_input_, &QLineEdit::returnPressed, this, &TextRulesEditor::addBanned);
  connect(banned_input_, &QLineEdit::textChanged, this, &TextRulesEditor::refreshButtons);
  connect(remove_banned_, &QPushButton::clicked, this, [this] {
    delete banned_->currentItem();
    refreshButtons();
    emit changed();
  });
  connect(banned_, &QListWidget::currentRowChanged, this, &TextRulesEditor::refreshButtons);
  connect(add_bias_, &QPushButton::clicked, this, &TextRulesEditor::addBias);
  connect(bias_text_, &QLineEdit::returnPressed, this, &TextRulesEditor::addBias);
  connect(bias_text_, &QLineEdit::textChanged, this, &TextRulesEditor::refreshButtons);
  connect(remove_bias_, &QPushButton::clicked, this, [this] {
    if (biases_->currentRow() >= 0) biases_->removeRow(biases_->currentRow());
    refreshButtons();
    emit changed();
  });
  connect(biases_, &QTableWidget::itemSelectionChanged, this, &TextRulesEditor::refreshButtons);
  refreshButtons();
}

void TextRulesEditor::setValue(const QStringList& banned, const QMap<QString, double>& biases) {
  banned_->clear();
  for (const QString& text : banned) {
    auto* item = new QListWidgetItem(rule_text_shown(text), banned_);
    item->setData(Qt::UserRole, text);
  }
  showBiases(biases);
  refreshButtons();
}

QStringList TextRulesEditor::bannedStrings() const {
  QStringList texts;
  for (int row = 0; row < banned_->count(); ++row)
    texts << banned_->item(row)->data(Qt::UserRole).toString();
  return texts;
}

QMap<QString, double> TextRulesEditor::textBiases() const {
  QMap<QString, double> biases;
  for (int row = 0; row < biases_->rowCount(); ++row) {
    const QTableWidgetItem* text = biases_->item(row, 0);
    biases.insert(text->data(Qt::UserRole).toString(),
                  biases_->item(row, 1)->data(Qt::UserRole).toDouble());
  }
  return biases;
}

void TextRulesEditor::addBanned() {
  const QString text = banned_input_->text();
  if (text.isEmpty()) return;
  banned_input_->clear();
  if (bannedStrings().contains(text)) return;  // refreshed by the cleared input
  auto* item = new QListWidgetItem(rule_text_shown(text), banned_);
  item->setData(Qt::UserRole, text);
  refreshButtons();
  emit changed();
}

void TextRulesEditor::addBias() {
  const QString text = bias_text_->text();
  if (text.isEmpty()) return;
  QMap<QString, double> biases = textBiases();
  biases.insert(text, bias_value_->value());
  showBiases(biases);
  bias_text_->clear();
  refreshButtons();
  emit changed();
}

void TextRulesEditor::showBiases(const QMap<QString, double>& biases) {
  biases_->setRowCount(0);
  for (auto it = biases.begin(); it != biases.end(); ++it) {
    const int row = biases_->rowCount();
    biases_->insertRow(row);
    auto* text = new QTableWidgetItem(rule_text_shown(it.key()));
    text->setData(Qt::UserRole, it.key());
    auto* bias = new QTableWidgetItem(QString::number(it.value(), 'f', 2));
    bias->setData(Qt::UserRole, it.value());
    biases_->setItem(row, 0, text);
    biases_->setItem(row, 1, bias);
  }
}

void TextRulesEditor::refreshButtons() {
  add_banned_->setEnabled(!banned_input_->text().isEmpty());
  remove_banned_->setEnabled(banned_->currentItem() != nullptr);
  add_bias_->setEnabled(!bias_text_->text().isEmpty());
  remove_bias_->setEnabled(biases_->currentRow() >= 0 && biases_->rowCount() > 0);
}

}  // namespace quire::ui
