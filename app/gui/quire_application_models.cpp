// Where the models come from: the welcome view (a folder, or the demo
// model) and the Get models window (the Hugging Face Hub).

#include <QAction>
#include <QDir>
#include <QFileInfo>
#include <QMessageBox>
#include <QStandardPaths>

#include "engine_host.h"
#include "main_window.h"
#include "model_hub_controller.h"
#include "plan_pricer.h"
#include "quire/hub/hub_environment.h"
#include "quire/ui/model_hub_window.h"
#include "quire/ui/settings_panel.h"
#include "quire/ui/welcome_view.h"
#include "quire_application.h"

namespace quire::gui {

void QuireApplication::priceWelcome(const QString& directory) {
  ui::WelcomeView& welcome = *window_->welcome();
  welcome.setModelDirectory(directory);
  ui::EngineSettings engine = settings_.engine;
  engine.model_directory = directory;
  engine.remote_url.clear();
  welcome.setPlan(pricer_->price(engine));
}

void QuireApplication::wireWelcome() {
  ui::WelcomeView& welcome = *window_->welcome();
  connect(&welcome, &ui::WelcomeView::chooseModelRequested, this, [this] {
    const QString directory = chooseDirectory(tr("Choose a model folder"), QDir::homePath());
    if (!directory.isEmpty()) priceWelcome(directory);
  });
  // The button says what it does: the demo model loads at once.
  connect(&welcome, &ui::WelcomeView::useDemoModelRequested, this, [this] {
    priceWelcome(options_.demo_model);
    loadDemoModel();
  });
  connect(&welcome, &ui::WelcomeView::loadRequested, this, [this] {
    ui::EngineSettings engine = settings_.engine;
    engine.model_directory = window_->welcome()->modelDirectory();
    engine.remote_url.clear();
    loadModel(engine);
  });
  connect(&welcome, &ui::WelcomeView::getModelsRequested, this, [this] {
    if (hub_) hub_->show();
  });
  // Model → Open a model folder: the folder loads at once with the settings
  // in use, as a model opened from Get models does.
  connect(window_->openModelAction(), &QAction::triggered, this, [this] {
    const QString loaded = host_->model() ? host_->model()->directory : QString();
    const QString directory =
        chooseDirectory(tr("Choose a model folder"), loaded.isEmpty() ? QDir::homePath() : loaded);
    if (directory.isEmpty()) return;
    ui::EngineSettings engine = settings_.engine;
    engine.model_directory = directory;
    engine.remote_url.clear();
    loadModel(engine);
  });
}

// ---- the Get models window ----

void QuireApplication::wireModelHub() {
  const QString data_folder =
      options_.data_dir.isEmpty()
          ? QStandardPaths::writableLocation(QStandardPaths::AppDataLocation)
          : options_.data_dir;
  const hub::EnvironmentLookup environment = hub::process_environment();
  ModelHubOptions hub_options;
  hub_options.hub = hub::resolve_hub_settings(environment);
  hub_options.records_file = QDir(data_folder).filePath(QStringLiteral("downloads.json"));
  hub_options.models_folder =
      QString::fromStdString(hub::default_quire_models_folder(environment).string());
  hub_options.keys = keys_;
  hub_options.devices = devices_;
  hub_options.engine_settings = [this] { return settings_.engine; };
  hub_options.loaded_folder = [this] {
    return host_->model() ? host_->model()->directory : QString();
  };
  hub_options.confirm = [this](const QString& question) {
    return QMessageBox::question(window_->modelHubWindow(), tr("Remove model"), question) ==
           QMessageBox::Yes;
  };
  if (options_.adjust_hub) options_.adjust_hub(hub_options);
  hub_ = std::make_unique<ModelHubController>(window_->modelHubWindow(), std::move(hub_options));

  connect(window_->getModelsAction(), &QAction::triggered, this, [this] { hub_->show(); });
  connect(hub_.get(), &ModelHubController::notice, this, [this](const QString& text, bool error) {
    window_->showNotice(text, error ? MainWindow::Notice::Error : MainWindow::Notice::Info);
  });
  // A downloaded model opens with the settings in use, in place of the one loaded.
  connect(hub_.get(), &ModelHubController::openModel, this, [this](const QString& folder) {
    ui::EngineSettings engine = settings_.engine;
    engine.model_directory = folder;
    engine.remote_url.clear();
    loadModel(engine);
    window_->raise();
    window_->activateWindow();
  });
}

}  // namespace quire::gui
