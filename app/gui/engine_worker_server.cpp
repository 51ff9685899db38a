// The engine worker's side of Settings → Server: the server's lifetime
// follows the loaded model, and its jobs are taken between two steps.

#include <QDir>
#include <QFileInfo>
#include <stdexcept>

#include "app_server.h"
#include "engine_failure.h"
#include "engine_worker.h"
#include "engine_worker_loaded.h"
#include "quire/app/images/prompt_images.h"
#include "quire/app/presets/server_catalog.h"
#include "runtime_settings.h"

namespace quire::gui {
namespace {

// Jobs of API requests running or waiting at once; more are refused with
// 503, as quire-cli serve's --parallel plus --max-queue are.
constexpr std::size_t kMaxServerJobs = 64;

// What /v1/models lists and requests name: the folder's name, as quire-cli
// serve calls a model by default.
std::string served_id(const QString& directory) {
  const QString name = QFileInfo(QDir::cleanPath(directory)).fileName();
  return name.isEmpty() ? std::string("model") : name.toStdString();
}

}  // namespace

void EngineWorker::setServer(const ui::ServerSettings& settings) {
  if (settings == server_settings_ && (server_ || !settings.enabled || !loaded_)) {
    publishServerStatus();
    return;
  }
  server_settings_ = settings;
  stopServer();
  startServer();
}

void EngineWorker::setServerDrafts(const ui::DraftDefaults& drafts) {
  server_drafts_ = drafts;
  if (server_) server_->jobs().set_draft(draft_settings(drafts, loaded_ && loaded_->draft));
}

void EngineWorker::setServerPresets(const QString& dir) {
  server_presets_dir_ = dir;
}

void EngineWorker::startServer() {
  server_failure_.clear();
  if (server_ || !loaded_ || !server_settings_.enabled) {
    publishServerStatus();
    return;
  }
  const Loaded& loaded = *loaded_;
  AppServerSetup setup;
  setup.port = server_settings_.port;
  setup.model.id = served_id(loaded.info.directory);
  setup.model.context_tokens = loaded.info.context_tokens;
  setup.model.vocab_size = loaded.tokenizer->vocab_size();
  // A tower the plan found no host memory for is none (ModelInfo::has_vision).
  setup.model.vision_tower = loaded.info.has_vision;
  if (loaded.images && loaded.info.has_vision) {
    setup.model.prepare_image = [preparer = loaded.images](const server::MessageImage& image) {
      const QByteArray bytes(reinterpret_cast<const char*>(image.bytes.data()),
                             static_cast<qsizetype>(image.bytes.size()));
      return images::prepare_image_file(*preparer, bytes);
    };
  }
  // The format the model was loaded with; a chat's own format setting does
  // not reach the API, whose clients send messages, not a format.
  setup.format = loaded.books.at(loaded.request.settings.prompt_format)->format();
  setup.tokenizer = loaded.tokenizer.get();
  setup.max_jobs = kMaxServerJobs;
  if (!server_presets_dir_.isEmpty()) setup.presets = presets::server_catalog(server_presets_dir_);
  // From HTTP threads: the request is taken at the next pump, on this thread.
  setup.wake = [this] {
    QMetaObject::invokeMethod(
        this, [this] { schedulePump(); }, Qt::QueuedConnection);
  };
  try {
    server_ = std::make_unique<AppServer>(std::move(setup));
    server_->jobs().set_draft(draft_settings(server_drafts_, loaded_->draft != nullptr));
  } catch (const std::exception& error) {
    server_failure_ = QString::fromStdString(error.what());
  }
  publishServerStatus();
}

void EngineWorker::stopServer() {
  if (!server_) return;
  server::GeneratorJobs& jobs = server_->jobs();
  jobs.close();
  if (loaded_) {
    // Every request handed over ends now, as cancelled (with what it had
    // generated), so that no HTTP thread waits on the closing server.
    jobs.take(*loaded_->generator);
    jobs.cancel_all(*loaded_->generator);
    try {
      // Cancelled jobs end at the start of the next step, before any compute.
      while (jobs.holding() && loaded_->generator->step())
        settleFinished();
      settleFinished();
    } catch (...) {
      recoverFromStepFailure(failure_from(std::current_exception()));
    }
  }
  if (jobs.holding()) jobs.abandon("The server stopped");
  server_.reset();
  publishServerStatus();
  // The chats' replies go on.
  if (loaded_ && !loaded_->generator->idle()) schedulePump();
}

void EngineWorker::takeServerJobs() {
  if (!server_ || !loaded_) return;
  server_->jobs().take(*loaded_->generator);
  if (!loaded_->generator->idle()) setBusy(true);
}

void EngineWorker::publishServerStatus() {
  using State = ui::ServerStatusView::State;
  ui::ServerStatusView status;
  if (server_) {
    if (loaded_) server_->jobs().publish(*loaded_->generator);
    const server::EngineStats stats = server_->jobs().stats();
    status.state = State::Serving;
    status.url = server_->url();
    status.running = static_cast<int>(stats.running);
    status.waiting = static_cast<int>(stats.waiting);
  } else if (!server_settings_.enabled) {
    status.state = State::Off;
  } else if (!server_failure_.isEmpty()) {
    status.state = State::Failed;
    status.message = server_failure_;
  } else {
    status.state = State::WaitingModel;
  }
  if (status == server_status_) return;
  server_status_ = status;
  emit serverStatus(status);
}

}  // namespace quire::gui
