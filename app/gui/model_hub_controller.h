#pragma once

// Drives the "Get models" window: searches the Hub, surveys a repository's
// quantizations, reads each one's headers (ModelHeaderProbe) and prices it
// with the planner for this computer's devices before a byte of weights is
// downloaded, runs the downloads (DownloadQueue), lists the models already
// here (the shared Hugging Face cache and Quire's own folder), removes them
// (keeping blobs another snapshot still uses) and keeps the Hub token in the
// keyring. Opening a model is left to the application (openModel).

#include <QHash>
#include <QObject>
#include <QPointer>
#include <QString>
#include <QTemporaryDir>
#include <functional>
#include <memory>
#include <optional>
#include <vector>

#include "engine_messages.h"
#include "quire/hub/hub_cache.h"
#include "quire/hub/hub_client.h"
#include "quire/hub/repo_quantizations.h"
#include "quire/hub/snapshot_download.h"
#include "quire/ui/model_hub_data.h"
#include "quire/ui/settings_data.h"

namespace quire::remote {
class ApiKeyStore;
}
namespace quire::ui {
class ModelHubWindow;
}
namespace quire::hub {
class DownloadQueue;
}  // namespace quire::hub

namespace quire::gui {

class PlanPricer;

// The Hub library's std::string as the window's QString.
inline QString from_std(const std::string& text) {
  return QString::fromStdString(text);
}

struct ModelHubOptions {
  hub::HubSettings hub;
  QString records_file;   // the unfinished downloads; "" keeps none
  QString models_folder;  // Quire's own models folder
  QString probe_folder;   // where headers are read into; "" a temporary folder
  std::shared_ptr<remote::ApiKeyStore> keys;
  DeviceLists devices;
  // The engine settings a model would be loaded with (context, cache coding).
  std::function<ui::EngineSettings()> engine_settings;
  // The folder of the model loaded now ("" when none): it is not removed.
  std::function<QString()> loaded_folder;
  // Asked before a removal; tests answer without a dialog.
  std::function<bool(const QString& question)> confirm;
  hub::RetryPolicy retry;
  hub::SnapshotOptions snapshot;
};

// The Hub's search filters for a format; the second list, when not empty,
// is searched too and merged (GPTQ or AWQ).
std::vector<QStringList> hub_filters_for(ui::HubFormat format);
// The formats a repository's tags name: "EXL2", "GPTQ", "GGUF", ...
QStringList formats_from_tags(const std::vector<std::string>& tags);
// The window's verdict for a quantization from the planner's view of its headers.
void apply_plan(ui::QuantizationRow& row, const ui::PlanView& plan);

class ModelHubController : public QObject {
  Q_OBJECT

 public:
  ModelHubController(ui::ModelHubWindow* window, ModelHubOptions options,
                     QObject* parent = nullptr);
  ~ModelHubController() override;

  // Shows and raises the window, with the models here listed afresh.
  void show();
  void refreshLocalModels();

  hub::HubClient& client() { return *client_; }
  hub::DownloadQueue& downloads() { return *downloads_; }
  const hub::HubCache& cache() const { return cache_; }

 signals:
  void openModel(const QString& folder);
  // Something for the main window's notice bar (a finished download).
  void notice(const QString& text, bool error);

 private:
  void search(const ui::HubSearchRequest& request);
  void chooseRepository(const QString& repo);
  void onSurvey(const QString& repo, const std::vector<hub::Quantization>& found,
                const QString& why);
  void probeNext();
  void onProbed(const QString& repo, const QString& key, const QString& folder,
                const QString& error);
  ui::QuantizationRow rowFor(const QString& repo, const hub::Quantization& quantization) const;
  bool isDownloaded(const QString& repo, const hub::Quantization& quantization) const;
  void refreshDownloads();
  void remove(const QString& id);
  void saveToken(const QString& token);
  void showTokenState();
  void useKeyringToken(const QString& token);
  // A new token may open what could not be read: those verdicts are asked again.
  void repriceUnknown();
  void tokenKeptForSession(const QString& problem);

  ui::ModelHubWindow* window_;
  ModelHubOptions options_;
  hub::HubCache cache_;
  hub::HubClient* client_;
  hub::DownloadQueue* downloads_;
  std::unique_ptr<PlanPricer> pricer_;
  std::unique_ptr<QTemporaryDir> probe_dir_;
  int search_serial_ = 0;
  QString token_source_;

  QString repo_;  // the one on show
  std::vector<hub::Quantization> quantizations_;
  // Verdicts already found, by repo@key: a repository chosen again is not probed again.
  QHash<QString, ui::QuantizationRow> priced_;
  std::vector<std::pair<QString, hub::Quantization>> to_probe_;
  int probes_running_ = 0;
  int probe_serial_ = 0;
};

}  // namespace quire::gui
