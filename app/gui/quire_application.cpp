#include "quire_application.h"

#include <QAction>
#include <QCoreApplication>
#include <QDir>
#include <QDockWidget>
#include <QFileDialog>
#include <QFileInfo>
#include <QSplitter>
#include <QStandardPaths>
#include <QStatusBar>

#include "backend_choice.h"
#include "chat_controller.h"
#include "chat_overrides.h"
#include "chat_settings_editor.h"
#include "context_text.h"
#include "demo_model_text.h"
#include "disk_cache_link.h"
#include "engine_host.h"
#include "help_menu.h"
#include "main_window.h"
#include "model_hub_controller.h"
#include "plan_pricer.h"
#include "quire/app/presets/preset_library.h"
#include "quire/app/store/chat_export.h"
#include "quire/engine/generator/prompt_format.h"
#include "quire/remote/api_key_store.h"
#include "quire/tools/tool_servers.h"
#include "quire/ui/chat_list_widget.h"
#include "quire/ui/chat_view.h"
#include "quire/ui/input_box.h"
#include "quire/ui/memory_panel.h"
#include "quire/ui/server_panel.h"
#include "quire/ui/settings_panel.h"
#include "quire/ui/status_line.h"
#include "quire/ui/welcome_view.h"
#include "remote_settings_link.h"
#include "tool_settings_link.h"
#include "tooltip_width.h"

#ifndef QUIRE_SOURCE_DEMO_MODEL
#define QUIRE_SOURCE_DEMO_MODEL ""
#endif

namespace quire::gui {
namespace {

app::AppSettings make_settings(const QString& data_dir) {
  if (data_dir.isEmpty()) return app::AppSettings();
  return app::AppSettings(QDir(data_dir).filePath(QStringLiteral("quire.conf")));
}

bool is_model_directory(const QString& path) {
  return !path.isEmpty() && QFileInfo(QDir(path).filePath(QStringLiteral("config.json"))).isFile();
}

QString devices_text(const ModelInfo& info) {
  if (info.devices.size() <= 1) return info.devices.join(QString());
  return QStringLiteral("%1 × %2 (%3)")
      .arg(info.devices.size())
      .arg(info.backend.toUpper(), info.devices.join(QStringLiteral(", ")));
}

// What a load names while it runs: the folder, or the remote engine's address.
QString loading_name(const ui::EngineSettings& engine) {
  if (ui::is_remote(engine)) return engine.remote_url.trimmed();
  return QFileInfo(QDir::cleanPath(engine.model_directory)).fileName();
}

QStringList prompt_format_names() {
  // "template": the model's own chat template, and nothing else.
  QStringList names{QStringLiteral("template")};
  for (const engine::PromptFormatId format : engine::all_prompt_formats()) {
    const std::string_view name = engine::to_string(format);
    names << QString::fromUtf8(name.data(), static_cast<qsizetype>(name.size()));
  }
  return names;
}

}  // namespace

QString demo_model_directory() {
  const QString from_environment = qEnvironmentVariable("QUIRE_DEMO_MODEL");
  if (!from_environment.isEmpty())
    return is_model_directory(from_environment) ? from_environment : QString();
  const QString installed = QDir(QCoreApplication::applicationDirPath())
                                .filePath(QStringLiteral("../share/quire/demo-model"));
  if (is_model_directory(installed)) return QDir::cleanPath(installed);
  const QString source = QStringLiteral(QUIRE_SOURCE_DEMO_MODEL);
  if (is_model_directory(source)) return source;
  return {};
}

QuireApplication::QuireApplication(ApplicationOptions options, QObject* parent)
    : QObject(parent), options_(std::move(options)), settings_(make_settings(options_.data_dir)) {
  devices_.cpu = options_.cpu_devices.isEmpty() ? default_cpu_devices() : options_.cpu_devices;
  devices_.cuda = options_.cuda_devices.isEmpty() ? default_cuda_devices() : options_.cuda_devices;
  new TooltipWidth(this);
  chat_list_ = std::make_unique<store::ChatListModel>(&store_);
  keys_ = options_.api_keys ? options_.api_keys : std::make_shared<remote::KeyringStore>();
  host_ = std::make_unique<EngineHost>(*keys_);
  pricer_ = std::make_unique<PlanPricer>(devices_);
  window_ = std::make_unique<MainWindow>();
  chats_ = std::make_unique<ChatController>(store_, *host_, *window_->chatView(), *window_->input(),
                                            *window_->statusLine());
  chats_->setCommitInterval(options_.commit_interval_ms);
  chats_->setMaxNewTokens(options_.max_new_tokens);
  chats_->setRequestAdjuster(options_.adjust_request);
  presets_ = std::make_unique<presets::PresetLibrary>(
      options_.presets_dir.isEmpty() ? presets::default_presets_dir() : options_.presets_dir);
  chat_settings_ = std::make_unique<ChatSettingsEditor>(
      store_, *chats_, *window_,
      [this] { return chat_defaults(settings_.engine, options_.max_new_tokens); }, *presets_);
  // Settings offers the library's presets as the one new chats start from.
  window_->settingsPanel()->setPresetNames(presets_->names());
  connect(window_->presetsAction(), &QAction::triggered, this, &QuireApplication::openPresets);
  // Before any server starts: its requests name presets from the same library.
  host_->configureServerPresets(presets_->dir());
  connect(window_->chatSettingsAction(), &QAction::triggered, chat_settings_.get(),
          &ChatSettingsEditor::open);
  connect(chat_settings_.get(), &ChatSettingsEditor::problem, this,
          [this](const QString& text) { window_->showNotice(text); });
  wireChatList();
  wireSettings();
  wireWelcome();
  wireEngine();
  wireServer();
  wireDiskCache();
  wireFiles();
  fill_help_menu(*window_->helpMenu(), *window_, [this] { return aboutFacts(); });
  connect(&sample_timer_, &QTimer::timeout, this, &QuireApplication::takeSample);
}

AboutFacts QuireApplication::aboutFacts() const {
  AboutFacts facts;
  facts.data_folder = options_.data_dir.isEmpty()
                          ? QFileInfo(store::ChatStore::default_path()).absolutePath()
                          : QDir(options_.data_dir).absolutePath();
  const std::optional<ModelInfo>& loaded = host_->model();
  if (!loaded) {
    facts.cuda_state = tr("not checked yet: no model is loaded");
  } else if (loaded->backend == QLatin1String("cuda")) {
    facts.cuda_state = tr("in use (%1)").arg(loaded->devices.join(QStringLiteral(", ")));
  } else if (!loaded->backend_note.isEmpty()) {
    facts.cuda_state = tr("not used. %1").arg(loaded->backend_note);
  } else if (settings_.engine.backend == QLatin1String("cpu")) {
    facts.cuda_state = tr("not used: the settings choose the CPU");
  } else {
    facts.cuda_state = tr("not used: this machine has no NVIDIA GPU");
  }
  return facts;
}

QuireApplication::~QuireApplication() {
  sample_timer_.stop();
  if (started_) {
    settings_.window.geometry = window_->saveGeometry();
    settings_.window.state = window_->saveState();
    settings_.window.splitter = window_->splitter()->saveState();
    settings_.preferences.show_memory_panel = !window_->memoryDock()->isHidden();
    saveSettings();
  }
  // The controller's writers commit their last text before the store closes,
  // and the engine thread stops before the window's widgets go; it stops
  // once the cache's pages are on disk (the disk tier), so this may wait.
  chats_.reset();
  disk_cache_.reset();
  host_.reset();
}

const std::optional<ModelInfo>& QuireApplication::model() const {
  return host_->model();
}

void QuireApplication::start() {
  started_ = true;
  clock_.start();
  const QList<app::SettingsProblem> problems = settings_.load();
  // After the options' last changes (tests point it at a fake Hub).
  wireModelHub();

  store::StoreOptions store_options;
  if (!options_.data_dir.isEmpty()) {
    QDir().mkpath(options_.data_dir);
    store_options.path = QDir(options_.data_dir).filePath(QStringLiteral("chats.sqlite"));
  }
  if (store_.open(store_options)) {
    store_.purge_previous_sessions();
  } else {
    window_->showNotice(tr("Your chat history could not be opened, so chats will not be saved. %1")
                            .arg(store_.error_string()));
  }
  if (!problems.isEmpty()) {
    QStringList lines;
    for (const app::SettingsProblem& problem : problems)
      lines << problem.text();
    window_->showNotice(
        tr("Some settings could not be used: %1").arg(lines.join(QStringLiteral("; "))),
        MainWindow::Notice::Info);
  }

  ui::SettingsPanel& panel = *window_->settingsPanel();
  panel.setAvailableDevices(device_labels(settings_.engine, devices_));
  panel.setPromptFormats(prompt_format_names());
  chat_settings_->setPromptFormats(prompt_format_names());
  panel.setSettings(settings_.engine);
  panel.setPlan(pricer_->price(settings_.engine));
  link_remote_settings(panel, host_->remoteEngine(), *keys_, *window_);
  chats_->setEngineSettings(settings_.engine);
  chat_settings_->setDefaultPreset(settings_.engine.default_preset);
  host_->configureServerDrafts(settings_.engine.drafts);
  // Before any load: the worker starts the server once the model is in.
  window_->serverPanel()->setSettings(settings_.server);
  host_->configureServer(settings_.server);
  host_->configureDiskCache(diskCacheRequest());
  disk_cache_->refresh();
  startToolServers();
  window_->welcome()->setDemoAvailable(!options_.demo_model.isEmpty());
  window_->demoAction()->setEnabled(!options_.demo_model.isEmpty());

  if (!settings_.window.geometry.isEmpty()) window_->restoreGeometry(settings_.window.geometry);
  if (!settings_.window.state.isEmpty()) window_->restoreState(settings_.window.state);
  if (!settings_.window.splitter.isEmpty())
    window_->splitter()->restoreState(settings_.window.splitter);
  window_->memoryDock()->setVisible(settings_.preferences.show_memory_panel);

  // The chat open at the last exit comes back.
  bool ok = false;
  const qint64 last = settings_.preferences.last_chat.toLongLong(&ok);
  if (ok && store_.is_open() && store_.chat(store::ChatId{last}) &&
      !store_.chat(store::ChatId{last})->deleted) {
    selectChat(store::ChatId{last});
  }

  ui::EngineSettings engine = settings_.engine;
  if (!options_.model_override.isEmpty()) {
    engine.model_directory = options_.model_override;
    engine.remote_url.clear();
  } else if (!ui::has_model(engine) && options_.demo_when_unconfigured &&
             !options_.demo_model.isEmpty()) {
    engine.model_directory = options_.demo_model;
  }
  if (ui::has_model(engine)) {
    window_->setEngineState(tr("Loading %1…").arg(loading_name(engine)));
    host_->load(engine, devices_);
  } else if (!options_.demo_model.isEmpty()) {
    // First run: the demo model is offered with its plan, one click from loading.
    priceWelcome(options_.demo_model);
  }
  showServingModel();
  refreshCentral();
  sample_timer_.start(options_.sample_interval_ms);
}

void QuireApplication::startToolServers() {
  tool_servers_ = std::make_unique<tools::ToolServers>();
  tool_settings_ = std::make_unique<ToolSettingsLink>(
      *window_->toolServersPanel(), *tool_servers_,
      QFileInfo(settings_.filePath()).dir().filePath(QStringLiteral("tool-servers.json")));
  connect(tool_settings_.get(), &ToolSettingsLink::notice, this,
          [this](const QString& text) { window_->showNotice(text); });
  tool_settings_->load();
  chats_->setToolServers(tool_servers_.get());
}

void QuireApplication::show() {
  window_->show();
}

void QuireApplication::refreshCentral() {
  // The welcome view stands in for the conversation until a model is there
  // (or loading) or the user opens a chat to read.
  const bool engine_ready = host_->model().has_value() || host_->isLoading();
  // A message sent with no model would only come back as a failed reply.
  window_->input()->setUnavailableReason(
      engine_ready ? QString()
                   : tr("Load a model to chat: Model → Open a model folder (Ctrl+O) or Get "
                        "models (Ctrl+Shift+G)"));
  if (engine_ready || chats_->currentChat()) {
    window_->showChat();
  } else {
    window_->showWelcome();
  }
}

void QuireApplication::saveSettings() {
  if (!settings_.save()) {
    window_->showNotice(tr("Settings could not be saved: %1").arg(settings_.errorString()));
  }
}

void QuireApplication::selectChat(std::optional<store::ChatId> chat) {
  chats_->openChat(chat);
  chat_settings_->chatShown();
  // The list's selection is the chat on show; a new chat is not listed yet.
  if (chat)
    window_->chatList()->setCurrentChat(store::raw(*chat));
  else
    window_->chatList()->clearCurrentChat();
  settings_.preferences.last_chat = chat ? QString::number(store::raw(*chat)) : QString();
  window_->showChat();
}

// ---- the sidebar ----

void QuireApplication::wireChatList() {
  ui::ChatListWidget& list = *window_->chatList();
  list.setModel(chat_list_.get());
  connect(&list, &ui::ChatListWidget::chatSelected, this,
          [this](qint64 id) { selectChat(store::ChatId{id}); });
  connect(&list, &ui::ChatListWidget::newChatRequested, this, [this] {
    selectChat(std::nullopt);
    window_->input()->focusInput();
  });
  connect(
      &list, &ui::ChatListWidget::renameRequested, this, [this](qint64 id, const QString& title) {
        if (!store_.rename_chat(store::ChatId{id}, title)) {
          window_->showNotice(tr("The chat could not be renamed: %1").arg(store_.error_string()));
        }
      });
  connect(&list, &ui::ChatListWidget::deleteRequested, this, [this](qint64 id) {
    chats_->chatRemoved(store::ChatId{id});
    if (!store_.delete_chat(store::ChatId{id})) {
      window_->showNotice(tr("The chat could not be deleted: %1").arg(store_.error_string()));
    }
    refreshCentral();
  });
  connect(&list, &ui::ChatListWidget::undoDeleteRequested, this, [this](qint64 id) {
    if (store_.restore_chat(store::ChatId{id})) selectChat(store::ChatId{id});
  });
  connect(&list, &ui::ChatListWidget::searchChanged, this, [this](const QString& text) {
    QList<qint64> ids;
    for (const store::SearchHit& hit : store_.search(text))
      ids << store::raw(hit.chat.id);
    window_->chatList()->setTextMatches(text, ids);
  });
  connect(chats_.get(), &ChatController::chatCreated, this, [this](store::ChatId chat) {
    window_->chatList()->setCurrentChat(store::raw(chat));
    settings_.preferences.last_chat = QString::number(store::raw(chat));
  });
  connect(chats_.get(), &ChatController::problem, this,
          [this](const QString& text) { window_->showNotice(text); });
}

// ---- settings and the live plan ----

void QuireApplication::wireSettings() {
  ui::SettingsPanel& panel = *window_->settingsPanel();
  panel.setDirectoryChooser([this](QWidget*, const QString& start) {
    return chooseDirectory(tr("Choose a model folder"), start);
  });
  connect(&panel, &ui::SettingsPanel::settingsEdited, this,
          [this](const ui::EngineSettings& edited) {
            window_->settingsPanel()->setPlan(pricer_->price(edited));
          });
  connect(&panel, &ui::SettingsPanel::applyRequested, this, &QuireApplication::onSettingsApplied);
  connect(window_->demoAction(), &QAction::triggered, this, &QuireApplication::loadDemoModel);
  connect(window_->unloadAction(), &QAction::triggered, this, [this] { host_->unload(); });
}

void QuireApplication::onSettingsApplied(const ui::EngineSettings& applied, bool needs_reload) {
  const QList<app::SettingsProblem> problems = settings_.setEngineSettings(applied);
  for (const app::SettingsProblem& problem : problems) {
    window_->showNotice(tr("A setting could not be used: %1").arg(problem.text()));
  }
  saveSettings();
  chats_->setEngineSettings(settings_.engine);
  chat_settings_->setDefaultPreset(settings_.engine.default_preset);
  host_->configureServerDrafts(settings_.engine.drafts);
  // Live: the loaded model's tier opens, closes or takes the new limit.
  host_->configureDiskCache(diskCacheRequest());
  // Another backend has other devices to choose from.
  window_->settingsPanel()->setAvailableDevices(device_labels(settings_.engine, devices_));
  const bool loaded = host_->model().has_value() || host_->isLoading();
  if (needs_reload || (!loaded && ui::has_model(settings_.engine))) {
    loadModel(settings_.engine);
  }
}

void QuireApplication::loadModel(const ui::EngineSettings& engine) {
  settings_.setEngineSettings(engine);
  saveSettings();
  window_->settingsPanel()->setSettings(settings_.engine);
  window_->settingsPanel()->setPlan(pricer_->price(settings_.engine));
  chats_->setEngineSettings(settings_.engine);
  chat_settings_->setDefaultPreset(settings_.engine.default_preset);
  host_->configureServerDrafts(settings_.engine.drafts);
  window_->clearNotice();
  window_->setEngineState(tr("Loading %1…").arg(loading_name(engine)));
  host_->load(settings_.engine, devices_);
  refreshCentral();
}

// ---- the engine ----

void QuireApplication::wireEngine() {
  EngineHost& host = *host_;
  connect(&host, &EngineHost::loadStarted, this, [this](const QString& directory) {
    window_->showLoading(tr("Loading %1").arg(QFileInfo(QDir::cleanPath(directory)).fileName()), 0,
                         0);
  });
  connect(&host, &EngineHost::loadProgress, this, [this](qint64 done, qint64 total) {
    window_->showLoading(tr("Loading weights"), done, total);
  });
  connect(&host, &EngineHost::modelLoaded, this, &QuireApplication::onModelLoaded);
  connect(&host, &EngineHost::loadFailed, this, &QuireApplication::onLoadFailed);
  connect(&host, &EngineHost::modelUnloaded, this, [this] {
    window_->restoreEmptyStateText();
    // The last reply's speed belonged to the model that is gone.
    window_->statusLine()->clearLastReply();
    showServingModel();
    window_->memoryPanel()->clear();
    window_->memoryPanel()->setRemoteEndpoint(QString());
    chats_->modelChanged();
    refreshCentral();
  });
  connect(&host, &EngineHost::modelRestored, this, [this] {
    showServingModel();
    chats_->modelChanged();
    refreshCentral();
  });
  connect(&host, &EngineHost::snapshotReady, window_->memoryPanel(), &ui::MemoryPanel::setSnapshot);
  connect(&host, &EngineHost::busyChanged, this, [this](bool busy) {
    if (!host_->model()) return;
    // The engine also runs the API server's requests: "Generating…" is for
    // the chats' own replies.
    // Idle again, it says what it said when the model loaded (its context,
    // prompt format and whether it sees images), not a bare "Ready".
    if (!busy) {
      window_->setEngineState(ready_text(*host_->model()), ready_tooltip(*host_->model()));
      return;
    }
    window_->setEngineState(chats_->runningReplies() > 0 ? tr("Generating…")
                                                         : tr("Answering API requests…"));
  });
  connect(window_.get(), &MainWindow::cancelLoadRequested, this, [this] { host_->cancelLoad(); });
  // Replies went on after memory ran short: said once, where the engine's
  // state is, for long enough to be read.
  connect(&host, &EngineHost::memoryRecovered, this, [this](const QString& text) {
    window_->statusBar()->showMessage(text, kMemoryMessageMs);
  });
}

void QuireApplication::onModelLoaded(const ModelInfo& info) {
  window_->hideLoading();
  ui::StatusLine& status = *window_->statusLine();
  status.setModelName(info.name);
  status.setDevices(devices_text(info));
  status.setCacheFormat(info.cache_format);
  // Why the model runs on another backend than the settings prefer; it stays
  // in the status bar as long as the model is loaded.
  window_->setBackendNote(info.backend_note);
  window_->setEngineState(ready_text(info), ready_tooltip(info));
  // The demo model's odd English is expected: say so where its replies appear.
  if (is_demo_model(info.directory)) {
    window_->chatView()->setEmptyStateText(demo_chat_title(), demo_chat_hint());
  } else {
    window_->restoreEmptyStateText();
  }
  // The model's template could not be used: say why, and which format runs.
  if (!info.format_notice.isEmpty())
    window_->showNotice(info.format_notice, MainWindow::Notice::Info);
  if (!info.draft_notice.isEmpty())
    window_->showNotice(info.draft_notice, MainWindow::Notice::Error);
  // The model runs without its disk tier: say why.
  if (!info.disk_notice.isEmpty()) {
    window_->showNotice(info.disk_notice, info.disk_notice_is_error ? MainWindow::Notice::Error
                                                                    : MainWindow::Notice::Info);
  }
  window_->setWindowTitle(QStringLiteral("%1 — Quire").arg(info.name));
  serving_settings_ = settings_.engine;
  // A remote model's address is not a folder for the recent list.
  if (info.backend != QLatin1String("remote")) {
    settings_.rememberModel(info.directory);
    serving_settings_->model_directory = info.directory;
  }
  window_->memoryPanel()->setRemoteEndpoint(info.backend == QLatin1String("remote")
                                                ? info.devices.join(QStringLiteral(", "))
                                                : QString());
  window_->settingsPanel()->setSettings(settings_.engine);
  saveSettings();
  chats_->modelChanged();
  refreshCentral();
  window_->input()->focusInput();
  emit modelLoaded(info);
}

void QuireApplication::onLoadFailed(const EngineFailure& failure) {
  window_->hideLoading();
  if (host_->model() && serving_settings_) {
    // The model that serves runs with the settings it was loaded with: they
    // are the applied ones again, live settings as last applied.
    ui::EngineSettings kept = *serving_settings_;
    const ui::EngineSettings& tried = settings_.engine;
    kept.recent_models = tried.recent_models;
    kept.sampling = tried.sampling;
    kept.drafts = tried.drafts;
    kept.system_prompt = tried.system_prompt;
    kept.prompt_format = tried.prompt_format;
    kept.max_context = tried.max_context;
    settings_.setEngineSettings(kept);
    saveSettings();
    window_->settingsPanel()->setSettings(settings_.engine);
    window_->settingsPanel()->setPlan(pricer_->price(settings_.engine));
    chats_->setEngineSettings(settings_.engine);
    host_->configureServerDrafts(settings_.engine.drafts);
  } else if (!host_->model()) {
    serving_settings_.reset();
  }
  showServingModel();
  window_->showNotice(failure.text(), failure.kind == EngineFailure::Kind::Cancelled
                                          ? MainWindow::Notice::Info
                                          : MainWindow::Notice::Error);
  if (!settings_.engine.model_directory.isEmpty()) priceWelcome(settings_.engine.model_directory);
  refreshCentral();
  emit loadFailed(failure);
}

void QuireApplication::showServingModel() {
  const std::optional<ModelInfo>& model = host_->model();
  ui::StatusLine& status = *window_->statusLine();
  status.setModelName(model ? model->name : QString());
  status.setDevices(model ? devices_text(*model) : QString());
  status.setCacheFormat(model ? model->cache_format : QString());
  // Why the model runs on another backend than the settings prefer; it stays
  // in the status bar as long as the model is loaded.
  window_->setBackendNote(model ? model->backend_note : QString());
  window_->setWindowTitle(model ? QStringLiteral("%1 — Quire").arg(model->name)
                                : tr("No model loaded — Quire"));
  // While a load is in flight the state says what is loading.
  if (host_->isLoading()) return;
  window_->setEngineState(model ? ready_text(*model) : tr("No model loaded"),
                          model ? ready_tooltip(*model) : QString());
}

void QuireApplication::loadDemoModel() {
  ui::EngineSettings engine = settings_.engine;
  engine.model_directory = options_.demo_model;
  engine.remote_url.clear();
  loadModel(engine);
}

void QuireApplication::takeSample() {
  window_->memoryPanel()->recordSample(clock_.elapsed());
  // While generating the worker publishes on its own; when idle the devices'
  // free memory can still change under other programs.
  if (host_->model() && !host_->isBusy()) host_->requestSnapshot();
}

// ---- files ----

QString QuireApplication::chooseDirectory(const QString& title, const QString& start) {
  if (options_.choose_directory) return options_.choose_directory(title, start);
  return QFileDialog::getExistingDirectory(window_.get(), title, start);
}

QString QuireApplication::chooseFile(const QString& title, const QString& start,
                                     const QString& filter, bool save) {
  if (options_.choose_file) return options_.choose_file(title, start, filter, save);
  return save ? QFileDialog::getSaveFileName(window_.get(), title, start, filter)
              : QFileDialog::getOpenFileName(window_.get(), title, start, filter);
}

}  // namespace quire::gui
