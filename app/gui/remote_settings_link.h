#pragma once

// Connects the settings' remote engine fields to the engine and the keyring:
// "List models" asks the engine, an applied key is kept in the keyring
// (saying so where no keyring keeps it), and the key stored for the address
// in the settings fills its field.

namespace quire::remote {
class ApiKeyStore;
}
namespace quire::ui {
class SettingsPanel;
}

namespace quire::gui {

class MainWindow;
class RemoteEngine;

void link_remote_settings(ui::SettingsPanel& panel, RemoteEngine& engine, remote::ApiKeyStore& keys,
                          MainWindow& window);

}  // namespace quire::gui
