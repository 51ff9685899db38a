#pragma once

// Everything the desktop program is, except main(): the settings, the chat
// store, the engine thread, the planner for the live plan, the window and
// the wiring between them. Tests make one against a temporary data folder,
// destroy it and make another against the same folder, as a restart would.

#include <QElapsedTimer>
#include <QObject>
#include <QString>
#include <QTimer>
#include <functional>
#include <memory>
#include <optional>

#include "engine_messages.h"
#include "help_menu.h"
#include "quire/app/app_settings.h"
#include "quire/app/store/chat_list_model.h"
#include "quire/app/store/chat_store.h"

namespace quire::tools {
class ToolServers;
}
namespace quire::remote {
class ApiKeyStore;
}
namespace quire::presets {
class PresetLibrary;
class PresetsPage;
}  // namespace quire::presets

namespace quire::gui {

class ChatController;
class ChatSettingsEditor;
class DiskCacheLink;
class ModelHubController;
struct ModelHubOptions;
class EngineHost;
class MainWindow;
class PlanPricer;
class ToolSettingsLink;

struct ApplicationOptions {
  // Chats and settings live here (chats.sqlite, quire.conf) when set; else in
  // the user's data and configuration folders.
  QString data_dir;
  // The folder of presets; empty: presets::default_presets_dir(), which
  // quire-cli reads too.
  QString presets_dir;
  // Load this model folder instead of the configured one (not saved until
  // the user applies settings).
  QString model_override;
  // With no model configured, load the bundled demo model instead of waiting
  // on the welcome view.
  bool demo_when_unconfigured = false;
  // The bundled demo model; empty when this installation has none.
  QString demo_model;
  // The CPU backend's devices; empty: default_cpu_devices().
  QString cpu_devices;
  // The CUDA backend's devices; empty: default_cuda_devices().
  QString cuda_devices;
  // Asked for a folder (a model) or a file (import, export); tests answer
  // without a dialog. `start` is the folder, or for an export the suggested
  // file. Return "" for cancel.
  std::function<QString(const QString& title, const QString& start)> choose_directory;
  std::function<QString(const QString& title, const QString& start, const QString& filter,
                        bool save)>
      choose_file;
  // Milliseconds a streamed reply may stay uncommitted.
  int commit_interval_ms = 1000;
  // The longest reply, in tokens.
  int max_new_tokens = 1024;
  // How often the memory chart takes a sample (and an idle engine is asked
  // for a fresh snapshot).
  int sample_interval_ms = 1000;
  // Where the API keys of remote engines are kept; null: the desktop keyring.
  std::shared_ptr<remote::ApiKeyStore> api_keys;
  // Changes the Get models window's Hub settings (tests point it at a fake
  // Hub and a temporary cache); by default they come from the environment.
  std::function<void(ModelHubOptions&)> adjust_hub;
  // Changes each chat reply's request before the engine gets it (tests make
  // a random model begin a tool call with a bias).
  std::function<void(ReplyRequest&)> adjust_request;
  // The disk tier's root (Settings → Disk cache); empty: the user's cache
  // folder, $XDG_CACHE_HOME/quire/pages.
  QString disk_cache_dir;
  // The calls that write the disk cache's page files; null: the system's.
  // Tests make them fail as a full disk would.
  std::shared_ptr<engine::disk_cache::PageFileOps> disk_file_ops;
  // Asked before something is removed for good (Disk cache → Clear); null:
  // a dialog. Tests answer without one.
  std::function<bool(const QString& title, const QString& question)> confirm;
};

// How long a confirmation, and a note about memory, stay in the status bar.
inline constexpr int kStatusMessageMs = 10'000;
inline constexpr int kMemoryMessageMs = 30'000;

class QuireApplication : public QObject {
  Q_OBJECT

 public:
  explicit QuireApplication(ApplicationOptions options, QObject* parent = nullptr);
  // Saves the window's layout and settings; replies in flight end, keeping
  // what was committed.
  ~QuireApplication() override;

  // Opens the store, applies the settings, restores the window and starts
  // loading the configured model. Call once, before show().
  void start();
  void show();

  MainWindow& window() { return *window_; }
  store::ChatStore& store() { return store_; }
  store::ChatListModel& chatList() { return *chat_list_; }
  ChatController& chats() { return *chats_; }
  ChatSettingsEditor& chatSettings() { return *chat_settings_; }
  presets::PresetLibrary& presets() { return *presets_; }
  // Model → Presets…'s dialog, made when first opened; null before.
  presets::PresetsPage* presetsPage() const { return presets_page_; }
  void openPresets();
  // Made by start().
  ModelHubController& modelHub() { return *hub_; }
  DiskCacheLink& diskCache() { return *disk_cache_; }
  EngineHost& engine() { return *host_; }
  app::AppSettings& settings() { return settings_; }
  const std::optional<ModelInfo>& model() const;

  // Loads `settings` (they become the applied settings and are saved).
  void loadModel(const ui::EngineSettings& settings);
  // The settings file in use.
  QString settingsPath() const { return settings_.filePath(); }

 signals:
  void modelLoaded(const quire::gui::ModelInfo& info);
  void loadFailed(const quire::gui::EngineFailure& failure);

 private:
  void wireChatList();
  void wireSettings();
  void wireWelcome();
  void wireModelHub();
  void wireEngine();
  void wireServer();
  void wireDiskCache();
  // The disk tier as the applied settings want it, for the engine.
  DiskCacheRequest diskCacheRequest() const;
  void wireFiles();
  void onModelLoaded(const ModelInfo& info);
  void onLoadFailed(const EngineFailure& failure);
  // The title, the status line and the engine state name the model the
  // engine serves now, or say that none is loaded.
  void showServingModel();
  void loadDemoModel();
  void onSettingsApplied(const ui::EngineSettings& settings, bool needs_reload);
  void selectChat(std::optional<store::ChatId> chat);
  void priceWelcome(const QString& directory);
  void refreshCentral();
  void saveSettings();
  // Settings -> Tools: the user's tool servers, the enabled ones started.
  void startToolServers();
  void takeSample();
  AboutFacts aboutFacts() const;
  QString chooseDirectory(const QString& title, const QString& start);
  QString chooseFile(const QString& title, const QString& start, const QString& filter, bool save);

  ApplicationOptions options_;
  DeviceLists devices_;  // the options' lists, defaults filled in
  app::AppSettings settings_;
  store::ChatStore store_;
  std::unique_ptr<store::ChatListModel> chat_list_;
  std::shared_ptr<remote::ApiKeyStore> keys_;
  std::unique_ptr<EngineHost> host_;
  std::unique_ptr<PlanPricer> pricer_;
  std::unique_ptr<MainWindow> window_;
  // After the window: the link shows the servers in its panel.
  std::unique_ptr<tools::ToolServers> tool_servers_;
  std::unique_ptr<ToolSettingsLink> tool_settings_;
  std::unique_ptr<ChatController> chats_;
  std::unique_ptr<presets::PresetLibrary> presets_;
  presets::PresetsPage* presets_page_ = nullptr;
  std::unique_ptr<ChatSettingsEditor> chat_settings_;
  std::unique_ptr<ModelHubController> hub_;
  std::unique_ptr<DiskCacheLink> disk_cache_;
  QTimer sample_timer_;
  QElapsedTimer clock_;
  bool started_ = false;
  // The settings the model that serves was loaded with; a load that fails
  // while it serves leaves them the applied settings.
  std::optional<ui::EngineSettings> serving_settings_;
  // The server's state last shown, so that the status line speaks of changes.
  ui::ServerStatusView::State server_state_ = ui::ServerStatusView::State::Off;
};

// The bundled demo model: $QUIRE_DEMO_MODEL, else <exe>/../share/quire/demo-model
// (an installation), else the source tree's copy (a build folder). Empty when
// none exists.
QString demo_model_directory();

}  // namespace quire::gui
