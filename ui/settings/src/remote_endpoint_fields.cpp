#include "quire/ui/remote_endpoint_fields.h"

#include <QComboBox>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>

namespace quire::ui {

RemoteEndpointFields::RemoteEndpointFields(QWidget* parent)
    : QGroupBox(tr("Remote engine"), parent) {
  auto* form = new QFormLayout(this);
  auto* intro = new QLabel(
      tr("Chat through vLLM, SGLang, TabbyAPI, llama.cpp's server, Ollama or another Quire on "
         "a larger machine. Leave the address empty to run the model folder on this computer."),
      this);
  intro->setWordWrap(true);
  form->addRow(intro);

  url_ = new QLineEdit(this);
  url_->setObjectName(QStringLiteral("remoteUrl"));
  url_->setPlaceholderText(tr("http://gpu-box:8000/v1"));
  form->addRow(tr("Address"), url_);
  issue_ = new QLabel(this);
  issue_->setObjectName(QStringLiteral("remoteUrlIssue"));
  issue_->setStyleSheet(QStringLiteral("color: #b3261e;"));
  issue_->setWordWrap(true);
  issue_->hide();
  form->addRow(QString(), issue_);

  key_ = new QLineEdit(this);
  key_->setObjectName(QStringLiteral("remoteKey"));
  key_->setEchoMode(QLineEdit::Password);
  key_->setPlaceholderText(tr("None, or the key the engine was started with"));
  key_->setToolTip(tr("Kept in the desktop keyring, not in Quire's settings file."));
  form->addRow(tr("API key"), key_);

  model_ = new QComboBox(this);
  model_->setObjectName(QStringLiteral("remoteModel"));
  model_->setEditable(true);
  model_->setInsertPolicy(QComboBox::NoInsert);
  model_->lineEdit()->setPlaceholderText(tr("The engine's first model"));
  list_ = new QPushButton(tr("List models"), this);
  list_->setObjectName(QStringLiteral("listRemoteModels"));
  auto* row = new QHBoxLayout;
  row->addWidget(model_, 1);
  row->addWidget(list_);
  form->addRow(tr("Model"), row);
  status_ = new QLabel(this);
  status_->setObjectName(QStringLiteral("remoteStatus"));
  status_->setWordWrap(true);
  status_->hide();
  form->addRow(QString(), status_);

  connect(url_, &QLineEdit::textEdited, this, [this] {
    list_->setEnabled(!url_->text().trimmed().isEmpty());
    emit edited();
  });
  connect(key_, &QLineEdit::textEdited, this, [this] {
    key_edited_ = true;
    emit edited();
  });
  connect(model_, &QComboBox::currentTextChanged, this, [this] {
    if (!writing_) emit edited();
  });
  connect(list_, &QPushButton::clicked, this,
          [this] { emit listModelsRequested(url_->text().trimmed(), key_->text()); });
  list_->setEnabled(false);
}

void RemoteEndpointFields::setValues(const QString& url, const QString& model) {
  writing_ = true;
  url_->setText(url);
  model_->setEditText(model);
  list_->setEnabled(!url.trimmed().isEmpty());
  status_->hide();
  writing_ = false;
}

QString RemoteEndpointFields::url() const {
  return url_->text().trimmed();
}

QString RemoteEndpointFields::model() const {
  return model_->currentText().trimmed();
}

void RemoteEndpointFields::setKey(const QString& key) {
  key_->setText(key);
  key_edited_ = false;
}

QString RemoteEndpointFields::key() const {
  return key_->text();
}

void RemoteEndpointFields::setModels(const QStringList& models, const QString& problem) {
  if (!problem.isEmpty()) {
    status_->setText(problem);
    status_->setStyleSheet(QStringLiteral("color: #b3261e;"));
    status_->show();
    return;
  }
  writing_ = true;
  const QString current = model();
  model_->clear();
  model_->addItems(models);
  // The model chosen before stays chosen when the engine still serves it.
  model_->setEditText(current.isEmpty() || !models.contains(current) ? models.value(0) : current);
  writing_ = false;
  status_->setStyleSheet(QString());
  status_->setText(models.isEmpty()     ? tr("The engine serves no model.")
                   : models.size() == 1 ? tr("The engine serves 1 model.")
                                        : tr("The engine serves %1 models.").arg(models.size()));
  status_->show();
  emit edited();
}

void RemoteEndpointFields::showAsking(const QString& url) {
  status_->setText(tr("Asking %1 for its models…").arg(url));
  status_->setStyleSheet(QString());
  status_->show();
}

void RemoteEndpointFields::setIssue(const QString& issue) {
  issue_->setText(issue);
  issue_->setVisible(!issue.isEmpty());
}

}  // namespace quire::ui
