// The Get models window's lower half: the downloads, the models already on
// this computer (and their removal), and the Hub token.

#include <QDir>
#include <QFileInfo>
#include <algorithm>

#include "model_hub_controller.h"
#include "quire/hub/cached_models.h"
#include "quire/hub/download_queue.h"
#include "quire/hub/hub_error.h"
#include "quire/remote/api_key_store.h"
#include "quire/ui/model_hub_window.h"

namespace quire::gui {
namespace {

ui::DownloadRow::State state_of(hub::QueuedDownload::State state) {
  using From = hub::QueuedDownload::State;
  using To = ui::DownloadRow::State;
  switch (state) {
    case From::Queued:
      return To::Queued;
    case From::Running:
      return To::Running;
    case From::Paused:
      return To::Paused;
    case From::Failed:
      return To::Failed;
    case From::Done:
      return To::Done;
  }
  return To::Queued;
}

// "org/name 4.0bpw", "org/name main: exl3/4.0bpw", "org/name @1a2b3c4".
QString title_of(const hub::CachedModel& model) {
  QString title = from_std(model.repo) + u' ';
  if (!model.refs.empty()) {
    QStringList refs;
    for (const std::string& ref : model.refs)
      refs << from_std(ref);
    title += refs.join(u", ");
  } else {
    title += u'@' + from_std(model.commit).left(7);
  }
  if (!model.subfolder.empty()) title += QStringLiteral(": ") + from_std(model.subfolder);
  return title;
}

}  // namespace

void ModelHubController::refreshDownloads() {
  QList<ui::DownloadRow> rows;
  for (const hub::QueuedDownload& download : downloads_->downloads()) {
    ui::DownloadRow row;
    row.id = download.record.id;
    row.title = download.record.title;
    row.state = state_of(download.state);
    row.bytes_done = download.record.bytes_done;
    row.bytes_total = download.record.bytes_total;
    row.bytes_per_second = download.bytes_per_second;
    row.message = download.message;
    rows << row;
  }
  window_->setDownloads(rows);
  // The quantization list says which are downloading or downloaded.
  for (const hub::Quantization& quantization : quantizations_)
    window_->updateQuantization(rowFor(repo_, quantization));
}

void ModelHubController::refreshLocalModels() {
  QList<ui::LocalModelRow> rows;
  try {
    for (const hub::CachedModel& model : hub::list_cached_models(cache_.root())) {
      ui::LocalModelRow row;
      row.id = from_std(model.repo) + u'@' + from_std(model.commit);
      if (!model.subfolder.empty()) row.id += u'/' + from_std(model.subfolder);
      row.title = title_of(model);
      row.folder = QString::fromStdString(model.folder.string());
      row.bytes = model.bytes;
      row.removable = true;
      rows << row;
    }
  } catch (const std::exception& error) {
    emit notice(
        tr("Could not list the models in %1: %2")
            .arg(QString::fromStdString(cache_.root().string()), QString::fromUtf8(error.what())),
        true);
  }
  if (!options_.models_folder.isEmpty()) {
    try {
      for (const hub::CachedModel& model :
           hub::list_model_folders(options_.models_folder.toStdString())) {
        ui::LocalModelRow row;
        row.folder = QString::fromStdString(model.folder.string());
        row.id = row.folder;
        row.title = QFileInfo(row.folder).fileName();
        row.bytes = model.bytes;
        // The user's own folder: Quire opens what is there and deletes nothing.
        row.removable = false;
        rows << row;
      }
    } catch (const std::exception&) {
    }
  }
  window_->setLocalModels(rows);
}

void ModelHubController::remove(const QString& id) {
  const qsizetype at = id.indexOf(u'@');
  if (at < 0) return;
  const QString repo = id.left(at);
  const QString commit = id.mid(at + 1).section(u'/', 0, 0);
  QStringList models;
  for (const ui::LocalModelRow& row : window_->localModels())
    if (row.id.startsWith(repo + u'@' + commit)) models << row.title;
  const QString question =
      tr("Remove %1 from the Hugging Face cache %2?%3 Files another snapshot of the repository "
         "still uses are kept.")
          .arg(models.isEmpty() ? repo : models.join(u", "),
               QString::fromStdString(cache_.root().string()),
               models.size() > 1 ? tr(" These models share one snapshot and go together.")
                                 : QString());
  if (options_.loaded_folder) {
    const QString loaded = QDir(options_.loaded_folder()).canonicalPath();
    const QString snapshot =
        QDir(QString::fromStdString(
                 cache_.snapshot_dir(repo.toStdString(), commit.toStdString()).string()))
            .canonicalPath();
    if (!loaded.isEmpty() && !snapshot.isEmpty() &&
        (loaded == snapshot || loaded.startsWith(snapshot + u'/'))) {
      emit notice(tr("%1 is loaded; unload it first (Model → Unload), then remove it.")
                      .arg(models.isEmpty() ? repo : models.join(u", ")),
                  true);
      return;
    }
  }
  if (options_.confirm && !options_.confirm(question)) return;
  try {
    const hub::SnapshotRemoval removal =
        cache_.remove_snapshot(repo.toStdString(), commit.toStdString());
    emit notice(tr("Removed %1: %2 freed%3.")
                    .arg(models.isEmpty() ? repo : models.join(u", "),
                         QLocale().formattedDataSize(removal.freed_bytes),
                         removal.blobs_kept == 1 ? tr(", 1 file kept for other snapshots")
                         : removal.blobs_kept > 1
                             ? tr(", %1 files kept for other snapshots").arg(removal.blobs_kept)
                             : QString()),
                false);
  } catch (const std::exception& error) {
    emit notice(QString::fromUtf8(error.what()), true);
  }
  refreshLocalModels();
  for (const hub::Quantization& quantization : quantizations_)
    window_->updateQuantization(rowFor(repo_, quantization));
}

void ModelHubController::saveToken(const QString& token) {
  client_->setToken(token.toStdString());
  token_source_ = token.isEmpty() ? QString() : tr("the keyring");
  showTokenState();
  repriceUnknown();
  if (!options_.keys) return;
  options_.keys->write(from_std(options_.hub.endpoint), token,
                       [self = QPointer<ModelHubController>(this)](const QString& problem) {
                         ModelHubController* controller = self.data();
                         if (controller != nullptr && !problem.isEmpty())
                           controller->tokenKeptForSession(problem);
                       });
}

void ModelHubController::repriceUnknown() {
  for (auto it = priced_.begin(); it != priced_.end();) {
    if (it->verdict == ui::FitVerdict::Unknown)
      it = priced_.erase(it);
    else
      ++it;
  }
  bool any = false;
  for (const hub::Quantization& quantization : quantizations_) {
    if (priced_.contains(hub::DownloadQueue::idOf(repo_, quantization))) continue;
    if (std::any_of(to_probe_.begin(), to_probe_.end(),
                    [&](const auto& queued) { return queued.second.key() == quantization.key(); }))
      continue;
    to_probe_.emplace_back(repo_, quantization);
    window_->updateQuantization(rowFor(repo_, quantization));
    any = true;
  }
  if (any) probeNext();
}

void ModelHubController::tokenKeptForSession(const QString& problem) {
  token_source_ = tr("this session only");
  showTokenState();
  emit notice(problem, true);
}

void ModelHubController::useKeyringToken(const QString& token) {
  if (token.isEmpty()) return;
  client_->setToken(token.toStdString());
  token_source_ = tr("the keyring");
  showTokenState();
  repriceUnknown();
}

void ModelHubController::showTokenState() {
  window_->setTokenState(
      token_source_.isEmpty()
          ? tr("No token: gated and private models cannot be downloaded. Create a read token "
               "on %1/settings/tokens and accept each gated model's licence on its page.")
                .arg(from_std(options_.hub.endpoint))
          : tr("A token from %1 is used for the Hub; it is never sent to the file hosts.")
                .arg(token_source_));
}

}  // namespace quire::gui
