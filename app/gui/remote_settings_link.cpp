#include "remote_settings_link.h"

#include <QPointer>

#include "main_window.h"
#include "quire/remote/api_key_store.h"
#include "quire/remote/remote_client.h"
#include "quire/ui/settings_panel.h"
#include "remote_engine.h"

namespace quire::gui {
namespace {

// The key's entry: the address as the engine connects to it, so that
// "gpu-box:8000" and "http://gpu-box:8000/v1/" find the same key.
QString key_entry(const QString& url) {
  const std::optional<QUrl> base = remote::endpoint_base_url(url, nullptr);
  return base ? base->toString() : QString();
}

}  // namespace

void link_remote_settings(ui::SettingsPanel& panel, RemoteEngine& engine, remote::ApiKeyStore& keys,
                          MainWindow& window) {
  QObject::connect(&panel, &ui::SettingsPanel::remoteModelsRequested, &engine,
                   &RemoteEngine::listModelsAt);
  QObject::connect(&engine, &RemoteEngine::modelsListedFor, &panel,
                   &ui::SettingsPanel::setRemoteModels);
  QObject::connect(
      &panel, &ui::SettingsPanel::apiKeyApplied, &keys,
      [&keys, window = QPointer<MainWindow>(&window)](const QString& url, const QString& key) {
        const QString entry = key_entry(url);
        if (entry.isEmpty()) return;
        keys.write(entry, key, [window](const QString& problem) {
          if (window && !problem.isEmpty()) window->showNotice(problem, MainWindow::Notice::Info);
        });
      });
  const QString entry = key_entry(panel.appliedSettings().remote_url);
  if (entry.isEmpty()) return;
  keys.read(entry,
            [panel = QPointer<ui::SettingsPanel>(&panel)](const QString& key, const QString&) {
              if (!panel.isNull() && !panel->apiKeyEdited()) panel->setApiKey(key);
            });
}

}  // namespace quire::gui
