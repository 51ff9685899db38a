#include "quire/ui/server_panel.h"

#include <QApplication>
#include <QCheckBox>
#include <QClipboard>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QSpinBox>

#include "wheel_guard.h"

namespace quire::ui {

QString server_url(int port) {
  return QStringLiteral("http://127.0.0.1:%1/v1").arg(port);
}

ServerPanel::ServerPanel(QWidget* parent) : QGroupBox(tr("Server"), parent) {
  setObjectName(QStringLiteral("serverPanel"));
  enabled_ = new QCheckBox(tr("Serve the model to other programs (OpenAI-compatible API)"));
  enabled_->setObjectName(QStringLiteral("serverEnabled"));
  port_ = new QSpinBox;
  port_->setObjectName(QStringLiteral("serverPort"));
  port_->setRange(limits::kServerPort.min, limits::kServerPort.max);
  port_->setKeyboardTracking(false);
  url_ = new QLineEdit;
  url_->setObjectName(QStringLiteral("serverUrl"));
  url_->setReadOnly(true);
  copy_ = new QPushButton(tr("Copy"));
  copy_->setObjectName(QStringLiteral("copyServerUrl"));
  requests_ = new QLabel;
  requests_->setObjectName(QStringLiteral("serverRequests"));
  message_ = new QLabel;
  message_->setObjectName(QStringLiteral("serverMessage"));
  message_->setWordWrap(true);
  auto* note = new QLabel(
      tr("Only programs on this computer can connect (127.0.0.1), so no API key is needed. "
         "API requests and chats share the model, its batches and its cache."));
  note->setWordWrap(true);

  auto* url_row = new QHBoxLayout;
  url_row->addWidget(url_, 1);
  url_row->addWidget(copy_);
  auto* form = new QFormLayout(this);
  form->addRow(enabled_);
  form->addRow(tr("Port"), port_);
  form->addRow(tr("Address"), url_row);
  form->addRow(tr("Requests"), requests_);
  form->addRow(message_);
  form->addRow(note);
  guard_wheel_in(this);

  connect(enabled_, &QCheckBox::toggled, this, &ServerPanel::announce);
  connect(port_, &QSpinBox::valueChanged, this, &ServerPanel::announce);
  connect(copy_, &QPushButton::clicked, this, &ServerPanel::copyUrl);
  setSettings(shown_);
}

void ServerPanel::setSettings(const ServerSettings& settings) {
  shown_ = settings;
  const QSignalBlocker block_enabled(enabled_);
  const QSignalBlocker block_port(port_);
  enabled_->setChecked(settings.enabled);
  port_->setValue(settings.port);
  refresh();
}

ServerSettings ServerPanel::settings() const {
  return {enabled_->isChecked(), port_->value()};
}

void ServerPanel::setStatus(const ServerStatusView& status) {
  status_ = status;
  refresh();
}

void ServerPanel::copyUrl() {
  QApplication::clipboard()->setText(url_->text());
}

void ServerPanel::announce() {
  const ServerSettings edited = settings();
  if (edited == shown_) return;
  shown_ = edited;
  refresh();
  emit settingsChanged(edited);
}

void ServerPanel::refresh() {
  using State = ServerStatusView::State;
  const bool serving = status_.state == State::Serving;
  url_->setText(serving ? status_.url : server_url(shown_.port));
  url_->setEnabled(shown_.enabled);
  copy_->setEnabled(serving);
  if (serving) {
    requests_->setText(tr("%1 running, %2 waiting").arg(status_.running).arg(status_.waiting));
  } else {
    requests_->setText(tr("none (the server is off)"));
  }
  switch (status_.state) {
    case State::Off:
      message_->setText(shown_.enabled ? tr("Starting…") : QString());
      break;
    case State::WaitingModel:
      message_->setText(tr("The server starts once a model is loaded."));
      break;
    case State::Serving:
      message_->setText(tr("Serving on %1.").arg(status_.url));
      break;
    case State::Failed:
      message_->setText(status_.message);
      break;
  }
  message_->setVisible(!message_->text().isEmpty());
}

}  // namespace quire::ui
