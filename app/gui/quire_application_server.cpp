// The API server inside the application: its settings panel, and what its
// status says to the user.

#include <QStatusBar>

#include "engine_host.h"
#include "main_window.h"
#include "quire/ui/server_panel.h"
#include "quire_application.h"

namespace quire::gui {

void QuireApplication::wireServer() {
  connect(window_->serverPanel(), &ui::ServerPanel::settingsChanged, this,
          [this](const ui::ServerSettings& edited) {
            for (const app::SettingsProblem& problem : settings_.setServerSettings(edited))
              window_->showNotice(tr("A setting could not be used: %1").arg(problem.text()));
            saveSettings();
            window_->serverPanel()->setSettings(settings_.server);
            host_->configureServer(settings_.server);
          });
  connect(host_.get(), &EngineHost::serverStatus, this, [this](const ui::ServerStatusView& status) {
    using State = ui::ServerStatusView::State;
    window_->serverPanel()->setStatus(status);
    window_->setServerAddress(status.state == State::Serving ? status.url : QString());
    // Said when it changes, not for each request that comes and goes.
    if (status.state == server_state_) return;
    server_state_ = status.state;
    if (status.state == State::Failed) {
      window_->showNotice(status.message);
      window_->statusBar()->showMessage(status.message, kMemoryMessageMs);
    } else if (status.state == State::Serving) {
      window_->statusBar()->showMessage(tr("The API server is on at %1").arg(status.url),
                                        kStatusMessageMs);
    }
  });
}

}  // namespace quire::gui
