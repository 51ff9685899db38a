#pragma once

// Settings → Server: the OpenAI-compatible server inside the application.
// Off by default. When on, it shows the address clients use, with a button
// that copies it, and the API requests in flight; when it cannot listen, why.
// A change (the checkbox, a port confirmed with Enter or by leaving the
// field) is announced at once through settingsChanged: there is nothing to
// apply, and the panel shows what the engine reports with setStatus.

#include <QGroupBox>

#include "quire/ui/server_settings.h"

class QCheckBox;
class QLabel;
class QLineEdit;
class QPushButton;
class QSpinBox;

namespace quire::ui {

class ServerPanel : public QGroupBox {
  Q_OBJECT

 public:
  explicit ServerPanel(QWidget* parent = nullptr);

  // Shows `settings` without announcing them.
  void setSettings(const ServerSettings& settings);
  ServerSettings settings() const;
  void setStatus(const ServerStatusView& status);
  const ServerStatusView& status() const { return status_; }

 public slots:
  // Puts the address on the clipboard.
  void copyUrl();

 signals:
  void settingsChanged(const quire::ui::ServerSettings& settings);

 private:
  void announce();
  void refresh();

  ServerSettings shown_;
  ServerStatusView status_;
  QCheckBox* enabled_ = nullptr;
  QSpinBox* port_ = nullptr;
  QLineEdit* url_ = nullptr;
  QPushButton* copy_ = nullptr;
  QLabel* requests_ = nullptr;
  QLabel* message_ = nullptr;
};

}  // namespace quire::ui
