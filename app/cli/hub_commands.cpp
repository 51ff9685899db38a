// quire-cli download / search. The Hub client is Qt Network's, so these two
// commands run a QCoreApplication of their own for the length of the
// command; the other commands do not touch Qt.

#include "hub_commands.h"

#include <CLI/CLI.hpp>
#include <QCoreApplication>
#include <QElapsedTimer>
#include <QEventLoop>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>

#include "cli_support.h"
#include "quire/hub/hub_client.h"
#include "quire/hub/snapshot_download.h"

namespace quire::cli {
namespace {

using HubJson = nlohmann::ordered_json;

// Qt's event loop needs an application object; quire-cli makes one only for
// the commands that talk to the Hub.
std::unique_ptr<QCoreApplication> qt_application() {
  if (QCoreApplication::instance() != nullptr) return nullptr;
  static int argc = 1;
  static char name[] = "quire-cli";
  static char* argv[] = {name, nullptr};
  return std::make_unique<QCoreApplication>(argc, argv);
}

hub::HubSettings settings_with(const std::string& cache_dir) {
  hub::HubSettings settings = hub::resolve_hub_settings(hub::process_environment());
  if (!cache_dir.empty()) settings.cache_dir = cache_dir;
  return settings;
}

std::string percent(std::int64_t done, std::int64_t total) {
  if (total <= 0) return "100%";
  return std::to_string(done * 100 / total) + "%";
}

}  // namespace

void run_download(const DownloadCommandRequest& request, std::ostream& out, std::ostream& err) {
  const auto application = qt_application();
  const hub::HubSettings settings = settings_with(request.cache_dir);
  hub::HubClient client(settings);
  hub::SnapshotRequest snapshot;
  snapshot.repo = QString::fromStdString(request.repo);
  snapshot.revision = QString::fromStdString(request.revision);
  snapshot.filter.include = request.include;
  snapshot.filter.exclude = request.exclude;
  hub::SnapshotDownload download(
      &client, hub::HubCache(settings.cache_dir, !settings.disable_symlinks), snapshot, {});

  QEventLoop loop;
  std::optional<std::string> folder;
  std::string error;
  QElapsedTimer since_report;
  since_report.start();
  bool announced = false;
  int files_reported = 0;
  QObject::connect(
      &download, &hub::SnapshotDownload::progressed, [&](const hub::SnapshotProgress& progress) {
        if (!announced) {
          announced = true;
          err << request.repo << " at " << request.revision << ": " << progress.files_total
              << " files, " << human_bytes(progress.bytes_total) << '\n';
        }
        const bool file_done = progress.files_done != files_reported;
        if (!file_done && since_report.elapsed() < 1000) return;
        files_reported = progress.files_done;
        since_report.restart();
        err << "  " << percent(progress.bytes_done, progress.bytes_total) << "  "
            << human_bytes(progress.bytes_done) << " of " << human_bytes(progress.bytes_total)
            << ", " << progress.files_done << " of " << progress.files_total << " files\n";
      });
  QObject::connect(&download, &hub::SnapshotDownload::note,
                   [&](const QString& text) { err << "  " << text.toStdString() << '\n'; });
  QObject::connect(&download, &hub::SnapshotDownload::finished, [&](const QString& path) {
    folder = path.toStdString();
    loop.quit();
  });
  QObject::connect(&download, &hub::SnapshotDownload::failed, [&](const QString& message) {
    error = message.toStdString();
    loop.quit();
  });
  download.start();
  if (!folder && error.empty()) loop.exec();
  if (!folder) throw UsageError(error);
  out << *folder << std::endl;
}

void run_search(const SearchCommandRequest& request, std::ostream& out) {
  if (request.limit < 1) throw UsageError("--limit must be at least 1");
  const auto application = qt_application();
  hub::HubClient client(settings_with({}));
  hub::SearchQuery query;
  query.search = QString::fromStdString(request.query);
  query.sort = QString::fromStdString(request.sort);
  for (const std::string& filter : request.filters)
    query.filters.append(QString::fromStdString(filter));
  query.limit = request.limit;

  QEventLoop loop;
  bool over = false;
  std::optional<std::vector<hub::ModelSummary>> models;
  std::string error;
  client.search(query,
                [&](std::optional<std::vector<hub::ModelSummary>> found, const QString& message) {
                  models = std::move(found);
                  error = message.toStdString();
                  over = true;
                  loop.quit();
                });
  if (!over) loop.exec();
  if (!models) throw UsageError(error);

  if (request.json) {
    HubJson list = HubJson::array();
    for (const hub::ModelSummary& model : *models)
      list.push_back({{"id", model.id},
                      {"author", model.author},
                      {"downloads", model.downloads},
                      {"likes", model.likes},
                      {"last_modified", model.last_modified},
                      {"gated", model.gated},
                      {"tags", model.tags}});
    out << list.dump(2) << '\n';
    return;
  }
  for (const hub::ModelSummary& model : *models) {
    out << model.id << "  downloads " << model.downloads << "  likes " << model.likes;
    if (!model.last_modified.empty()) out << "  updated " << model.last_modified.substr(0, 10);
    if (!model.gated.empty()) out << "  gated";
    out << '\n';
  }
  if (models->empty()) out << "No model matches \"" << request.query << "\".\n";
}

void add_hub_commands(CLI::App& app, int& exit_code) {
  auto download = std::make_shared<DownloadCommandRequest>();
  CLI::App* download_command = app.add_subcommand(
      "download",
      "Download a Hugging Face repository into the cache Hugging Face's own tools share "
      "(HF_HUB_CACHE, else $HF_HOME/hub); prints the snapshot folder as the last line. Resumes "
      "partial files; HF_TOKEN or the token file opens gated models; HF_ENDPOINT picks a mirror; "
      "HF_HUB_OFFLINE=1 answers from the cache only");
  download_command->add_option("repo", download->repo, "The repository, such as org/name")
      ->required();
  download_command->add_option("--revision", download->revision,
                               "Branch, tag or commit (default main; EXL2/EXL3 repositories "
                               "often keep each bits-per-weight on its own branch)");
  download_command->add_option("--include", download->include,
                               "Only files matching this glob (repeatable)");
  download_command->add_option("--exclude", download->exclude,
                               "Leave out files matching this glob (repeatable)");
  download_command->add_option("--cache-dir", download->cache_dir,
                               "The cache folder, in place of HF_HUB_CACHE");
  download_command->callback([download, &exit_code] {
    run_download(*download, std::cout, std::cerr);
    exit_code = 0;
  });

  auto search = std::make_shared<SearchCommandRequest>();
  CLI::App* search_command =
      app.add_subcommand("search", "Search the Hugging Face Hub's models (HF_ENDPOINT)");
  search_command->add_option("query", search->query, "Words of the repository's name")->required();
  search_command->add_option("--limit", search->limit, "Results to list (default 20)");
  search_command
      ->add_option("--sort", search->sort,
                   "downloads, likes, lastModified, trendingScore or createdAt")
      ->check(CLI::IsMember({"downloads", "likes", "lastModified", "trendingScore", "createdAt"}));
  search_command->add_option("--filter", search->filters,
                             "Only models with this tag, such as exl2 or exl3 (repeatable)");
  search_command->add_flag("--json", search->json, "Print one JSON array");
  search_command->callback([search, &exit_code] {
    run_search(*search, std::cout);
    exit_code = 0;
  });
}

}  // namespace quire::cli
