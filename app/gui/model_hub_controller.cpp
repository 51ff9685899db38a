#include "model_hub_controller.h"

#include <QDir>
#include <QLocale>
#include <algorithm>
#include <filesystem>

#include "plan_pricer.h"
#include "quire/hub/download_queue.h"
#include "quire/hub/hub_error.h"
#include "quire/hub/model_header_probe.h"
#include "quire/hub/quantization_survey.h"
#include "quire/remote/api_key_store.h"
#include "quire/ui/model_hub_window.h"

namespace quire::gui {
namespace fs = std::filesystem;
namespace {

// Headers read at once: each is a few ranged requests.
constexpr int kParallelProbes = 2;

// The format tags a repository carries that say its weights are quantized.
const char* const kQuantizedTags[] = {
    "exl2", "exl3", "gptq", "awq", "fp8", "gguf", "compressed-tensors", "4-bit", "8-bit"};

bool has_tag(const std::vector<std::string>& tags, std::string_view tag) {
  return std::find(tags.begin(), tags.end(), tag) != tags.end();
}

}  // namespace

std::vector<QStringList> hub_filters_for(ui::HubFormat format) {
  switch (format) {
    case ui::HubFormat::Any:
      return {{}};
    case ui::HubFormat::Exl2:
      return {{QStringLiteral("exl2")}};
    case ui::HubFormat::Exl3:
      return {{QStringLiteral("exl3")}};
    case ui::HubFormat::GptqAwq:
      // The Hub ANDs its filters: two searches, merged.
      return {{QStringLiteral("gptq")}, {QStringLiteral("awq")}};
    case ui::HubFormat::Fp8:
      return {{QStringLiteral("fp8")}};
    case ui::HubFormat::Fp16:
      return {{QStringLiteral("safetensors")}};
  }
  return {{}};
}

QStringList formats_from_tags(const std::vector<std::string>& tags) {
  QStringList formats;
  const std::pair<const char*, const char*> named[] = {{"exl2", "EXL2"}, {"exl3", "EXL3"},
                                                       {"gptq", "GPTQ"}, {"awq", "AWQ"},
                                                       {"fp8", "FP8"},   {"gguf", "GGUF"}};
  for (const auto& [tag, name] : named)
    if (has_tag(tags, tag)) formats << QString::fromLatin1(name);
  if (formats.isEmpty() && has_tag(tags, "safetensors")) formats << QStringLiteral("safetensors");
  return formats;
}

void apply_plan(ui::QuantizationRow& row, const ui::PlanView& plan) {
  row.weights = plan.weights;
  if (!plan.valid) {
    row.verdict = ui::FitVerdict::Unsupported;
    row.detail = plan.error;
  } else if (plan.fits) {
    row.verdict = ui::FitVerdict::Fits;
    row.largest_context_tokens = plan.largest_context_tokens;
    row.context_is_model_limit = plan.largest_context_is_model_limit;
  } else if (!plan.fit_label.isEmpty()) {
    row.verdict = ui::FitVerdict::FitsSmaller;
    row.fit_label = plan.fit_label;
    row.largest_context_tokens = plan.fit_cache_tokens;
    row.detail = plan.fit_change;
  } else {
    row.verdict = ui::FitVerdict::DoesNotFit;
    row.detail = plan.verdict;
  }
}

ModelHubController::ModelHubController(ui::ModelHubWindow* window, ModelHubOptions options,
                                       QObject* parent)
    : QObject(parent),
      window_(window),
      options_(std::move(options)),
      cache_(options_.hub.cache_dir, !options_.hub.disable_symlinks),
      client_(new hub::HubClient(options_.hub, this)),
      pricer_(std::make_unique<PlanPricer>(options_.devices)) {
  client_->setRetryPolicy(options_.retry);
  if (options_.probe_folder.isEmpty()) {
    probe_dir_ = std::make_unique<QTemporaryDir>(
        QDir::temp().filePath(QStringLiteral("quire-probe-XXXXXX")));
    options_.probe_folder = probe_dir_->path();
  }
  token_source_ = options_.hub.token.empty() ? QString() : QStringLiteral("the environment");
  downloads_ =
      new hub::DownloadQueue(client_, cache_, options_.records_file, options_.snapshot, this);

  connect(window_, &ui::ModelHubWindow::searchRequested, this, &ModelHubController::search);
  connect(window_, &ui::ModelHubWindow::repositoryChosen, this,
          &ModelHubController::chooseRepository);
  connect(window_, &ui::ModelHubWindow::downloadRequested, this,
          [this](const QString& repo, const QString& key) {
            for (const hub::Quantization& quantization : quantizations_)
              if (repo == repo_ && from_std(quantization.key()) == key)
                downloads_->add(repo, quantization);
          });
  connect(window_, &ui::ModelHubWindow::pauseRequested, downloads_, &hub::DownloadQueue::pause);
  connect(window_, &ui::ModelHubWindow::resumeRequested, downloads_, &hub::DownloadQueue::resume);
  connect(window_, &ui::ModelHubWindow::cancelRequested, downloads_, &hub::DownloadQueue::cancel);
  connect(window_, &ui::ModelHubWindow::openRequested, this, &ModelHubController::openModel);
  connect(window_, &ui::ModelHubWindow::removeRequested, this, &ModelHubController::remove);
  connect(window_, &ui::ModelHubWindow::tokenEntered, this, &ModelHubController::saveToken);

  connect(downloads_, &hub::DownloadQueue::changed, this, &ModelHubController::refreshDownloads);
  connect(downloads_, &hub::DownloadQueue::downloaded, this,
          [this](const QString& id, const QString&) {
            refreshLocalModels();
            if (const hub::QueuedDownload* done = downloads_->find(id))
              emit notice(tr("Downloaded %1. Open it from Get models → On this computer.")
                              .arg(done->record.title),
                          false);
          });
  connect(downloads_, &hub::DownloadQueue::downloadFailed, this,
          [this](const QString&, const QString& error) { emit notice(error, true); });
  connect(downloads_, &hub::DownloadQueue::problem, this,
          [this](const QString& text) { emit notice(text, true); });

  const QString restore_error = downloads_->restore();
  if (!restore_error.isEmpty()) emit notice(restore_error, true);

  // A token from the environment or HF's token file wins, as in Python's
  // tools; otherwise the one this program keeps in the keyring.
  if (options_.keys && options_.hub.token.empty()) {
    options_.keys->read(
        from_std(options_.hub.endpoint),
        [self = QPointer<ModelHubController>(this)](const QString& key, const QString&) {
          if (ModelHubController* controller = self.data()) controller->useKeyringToken(key);
        });
  }
  showTokenState();
  refreshLocalModels();
}

ModelHubController::~ModelHubController() = default;

void ModelHubController::show() {
  refreshLocalModels();
  window_->show();
  window_->raise();
  window_->activateWindow();
}

// ---- search ----

void ModelHubController::search(const ui::HubSearchRequest& request) {
  const int serial = ++search_serial_;
  if (options_.hub.offline) {
    window_->setResults({}, tr("HF_HUB_OFFLINE is set, so the Hub is not asked; the models "
                               "already on this computer are listed below."));
    return;
  }
  window_->setSearching(tr("Searching…"));
  const std::vector<QStringList> filter_sets = hub_filters_for(request.format);
  auto merged = std::make_shared<std::vector<hub::ModelSummary>>();
  auto waiting = std::make_shared<int>(static_cast<int>(filter_sets.size()));
  auto failure = std::make_shared<QString>();
  for (const QStringList& filters : filter_sets) {
    hub::SearchQuery query;
    query.search = request.text;
    query.filters = filters;
    query.sort = request.sort;
    query.limit = 40;
    client_->search(
        query, [this, serial, request, merged, waiting, failure](
                   std::optional<std::vector<hub::ModelSummary>> models, const QString& error) {
          if (serial != search_serial_) return;  // a newer search replaced it
          if (models)
            merged->insert(merged->end(), models->begin(), models->end());
          else
            *failure = error;
          if (--*waiting > 0) return;
          if (merged->empty() && !failure->isEmpty()) {
            window_->setResults({}, *failure);
            return;
          }
          QList<ui::HubModelRow> rows;
          for (const hub::ModelSummary& model : *merged) {
            // FP16: the safetensors repositories whose weights are not quantized.
            if (request.format == ui::HubFormat::Fp16 &&
                std::any_of(std::begin(kQuantizedTags), std::end(kQuantizedTags),
                            [&](const char* tag) { return has_tag(model.tags, tag); }))
              continue;
            if (std::any_of(rows.begin(), rows.end(), [&](const ui::HubModelRow& row) {
                  return row.repo == from_std(model.id);
                }))
              continue;
            ui::HubModelRow row;
            row.repo = from_std(model.id);
            row.downloads = model.downloads;
            row.likes = model.likes;
            row.last_modified = from_std(model.last_modified);
            row.formats = formats_from_tags(model.tags);
            row.gated = !model.gated.empty() && model.gated != "false";
            rows << row;
          }
          // Merged searches keep the order asked for.
          const QString sort = request.sort;
          std::stable_sort(rows.begin(), rows.end(),
                           [&](const ui::HubModelRow& a, const ui::HubModelRow& b) {
                             if (sort == QLatin1String("likes")) return a.likes > b.likes;
                             if (sort == QLatin1String("lastModified"))
                               return a.last_modified > b.last_modified;
                             return a.downloads > b.downloads;
                           });
          window_->setResults(rows, QString());
        });
  }
}

// ---- a repository's quantizations and their verdicts ----

void ModelHubController::chooseRepository(const QString& repo) {
  if (repo == repo_ && !quantizations_.empty()) return;
  repo_ = repo;
  quantizations_.clear();
  to_probe_.clear();
  window_->showRepository(repo, tr("Reading its branches and files…"));
  auto* survey = new hub::QuantizationSurvey(client_, repo, this);
  connect(survey, &hub::QuantizationSurvey::finished, this,
          [this, survey, repo](const std::vector<hub::Quantization>& found, const QString& why) {
            survey->deleteLater();
            onSurvey(repo, found, why);
          });
  connect(survey, &hub::QuantizationSurvey::failed, this,
          [this, survey, repo](const QString& error) {
            survey->deleteLater();
            if (repo == repo_) window_->showRepository(repo, error);
          });
  survey->start();
}

ui::QuantizationRow ModelHubController::rowFor(const QString& repo,
                                               const hub::Quantization& quantization) const {
  const QString id = hub::DownloadQueue::idOf(repo, quantization);
  ui::QuantizationRow row = priced_.value(id);
  row.key = from_std(quantization.key());
  row.label = from_std(quantization.label());
  row.bytes = quantization.bytes;
  row.downloaded = isDownloaded(repo, quantization);
  const hub::QueuedDownload* download = downloads_->find(id);
  row.downloading = download != nullptr && download->state != hub::QueuedDownload::State::Done;
  return row;
}

bool ModelHubController::isDownloaded(const QString& repo,
                                      const hub::Quantization& quantization) const {
  try {
    const std::string name = repo.toStdString();
    for (const hub::RepoFile& file : quantization.files) {
      std::error_code error;
      if (!fs::exists(cache_.snapshot_file(name, quantization.commit, file.path), error))
        return false;
    }
    return !quantization.files.empty();
  } catch (const hub::HubProtocolError&) {
    return false;
  }
}

void ModelHubController::onSurvey(const QString& repo, const std::vector<hub::Quantization>& found,
                                  const QString& why) {
  if (repo != repo_) return;
  quantizations_ = found;
  QList<ui::QuantizationRow> rows;
  for (const hub::Quantization& quantization : found) {
    rows << rowFor(repo, quantization);
    if (!priced_.contains(hub::DownloadQueue::idOf(repo, quantization)))
      to_probe_.emplace_back(repo, quantization);
  }
  QString note = found.empty() ? tr("Quire cannot run this repository. %1").arg(why)
                               : (found.size() == 1 ? tr("1 quantization.")
                                                    : tr("%1 quantizations.").arg(found.size())) +
                                     tr(" The verdicts are for this computer's devices with the "
                                        "current settings.");
  if (!found.empty() && !why.isEmpty()) note += u' ' + why;
  window_->setQuantizations(rows, note);
  for (int i = 0; i < kParallelProbes; ++i)
    probeNext();
}

void ModelHubController::probeNext() {
  while (probes_running_ < kParallelProbes && !to_probe_.empty()) {
    auto [repo, quantization] = std::move(to_probe_.front());
    to_probe_.erase(to_probe_.begin());
    if (repo != repo_) continue;  // the user moved on
    ++probes_running_;
    const QString folder =
        QDir(options_.probe_folder).filePath(QStringLiteral("probe-%1").arg(++probe_serial_));
    QDir(folder).removeRecursively();
    const QString key = from_std(quantization.key());
    auto* probe = new hub::ModelHeaderProbe(client_, repo, quantization, folder, this);
    connect(probe, &hub::ModelHeaderProbe::finished, this,
            [this, probe, repo, key](const QString& done_folder) {
              probe->deleteLater();
              onProbed(repo, key, done_folder, QString());
            });
    connect(probe, &hub::ModelHeaderProbe::failed, this,
            [this, probe, repo, key, folder](const QString& error) {
              probe->deleteLater();
              onProbed(repo, key, folder, error);
            });
    probe->start();
  }
}

void ModelHubController::onProbed(const QString& repo, const QString& key, const QString& folder,
                                  const QString& error) {
  --probes_running_;
  ui::QuantizationRow row;
  if (!error.isEmpty()) {
    row.verdict = ui::FitVerdict::Unknown;
    row.detail = error;
  } else {
    ui::EngineSettings settings =
        options_.engine_settings ? options_.engine_settings() : ui::EngineSettings();
    settings.model_directory = folder;
    settings.remote_url.clear();
    apply_plan(row, pricer_->price(settings));
  }
  QDir(folder).removeRecursively();
  priced_.insert(repo + u'@' + key, row);
  if (repo == repo_) {
    for (const hub::Quantization& quantization : quantizations_)
      if (from_std(quantization.key()) == key)
        window_->updateQuantization(rowFor(repo, quantization));
  }
  probeNext();
}

}  // namespace quire::gui
