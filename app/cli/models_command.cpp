// quire-cli models: what is already downloaded, and whether each model fits.
// The folders come from app/hub (the cache layout, no engine); the engine
// reads each folder's headers and the planner prices it for the devices of
// --devices, as quire-cli inspect does, with nothing loaded.

#include "models_command.h"

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <ctime>
#include <filesystem>
#include <iostream>
#include <nlohmann/json.hpp>
#include <optional>
#include <vector>

#include "cli_support.h"
#include "quire/engine/planner/planner.h"
#include "quire/engine/runtime/fit_options.h"
#include "quire/engine/runtime/model_description.h"
#include "quire/engine/runtime/weights_summary.h"
#include "quire/hub/cached_models.h"
#include "quire/hub/hub_environment.h"

namespace quire::cli {
namespace {

using ModelsJson = nlohmann::ordered_json;

// One model folder as the command reports it.
struct ModelRow {
  hub::CachedModel found;
  bool in_hub_cache = false;
  std::string name;              // org/name@ref[/subfolder], or the folder
  std::string revision;          // the ref the name shows, or the commit; "" outside the cache
  std::string format;            // the weights summed up; "" when Quire cannot open the folder
  std::string error;             // why Quire cannot open it
  std::string fits = "unknown";  // yes, smaller, no or unknown
  std::optional<std::int64_t> largest_context;
  std::string verdict;
};

// main when a ref of that name points at the snapshot, else its first ref.
std::string shown_revision(const hub::CachedModel& model) {
  if (model.refs.empty()) return model.commit;
  const bool main = std::find(model.refs.begin(), model.refs.end(), "main") != model.refs.end();
  return main ? "main" : model.refs.front();
}

ModelRow row_of(hub::CachedModel found, bool in_hub_cache) {
  ModelRow row;
  row.in_hub_cache = in_hub_cache;
  if (in_hub_cache) {
    row.revision = shown_revision(found);
    row.name = found.repo + "@" + row.revision;
    if (!found.subfolder.empty()) row.name += "/" + found.subfolder;
  } else {
    row.name = found.folder.string();
  }
  row.found = std::move(found);
  return row;
}

// The planner's verdict on the model with the command's settings: it fits
// (and the most context that would), fits only with what suggest_fit
// changes, or does not fit.
void judge(ModelRow& row, const engine::ModelDescription& model,
           const std::vector<kernels::DeviceInfo>& devices, const engine::RuntimeOptions& options) {
  const engine::PlacementPlan plan =
      engine::plan_placement(engine::placement_request(model, devices, options));
  if (plan.largest_context) row.largest_context = plan.largest_context->tokens;
  if (plan.fits) {
    row.fits = "yes";
    row.verdict = "fits";
    if (plan.largest_context) {
      row.verdict += ", with up to " + engine::group_thousands(plan.largest_context->tokens) +
                     " tokens of context" +
                     (plan.largest_context->model_limit ? " (the model's limit)" : "");
    }
    return;
  }
  if (const std::optional<engine::FitSuggestion> suggestion =
          engine::suggest_fit(model, devices, options)) {
    row.fits = "smaller";
    row.verdict = "fits with the " + suggestion->change;
    if (!suggestion->alternative.empty()) row.verdict += ", or with " + suggestion->alternative;
    return;
  }
  row.fits = "no";
  row.verdict = plan.problem;
}

void describe(ModelRow& row, const std::vector<kernels::DeviceInfo>& devices,
              const engine::RuntimeOptions& options) {
  std::optional<engine::ModelDescription> model;
  try {
    model.emplace(engine::ModelDescription::open(row.found.folder));
    row.format = engine::summarize_weights(*model).text();
  } catch (const std::exception& error) {
    // Unsupported architectures, broken or partial downloads: a row, not a failure.
    row.error = error.what();
    row.verdict = "Quire cannot open it: " + row.error;
    return;
  }
  try {
    judge(row, *model, devices, options);
  } catch (const std::exception& error) {
    row.fits = "unknown";
    row.verdict = std::string("cannot be planned: ") + error.what();
  }
}

// "2026-11-29T10:04:05Z"
std::string utc_text(std::filesystem::file_time_type time) {
  const auto system = std::chrono::file_clock::to_sys(time);
  const std::time_t seconds =
      std::chrono::system_clock::to_time_t(std::chrono::floor<std::chrono::seconds>(system));
  std::tm parts{};
  gmtime_r(&seconds, &parts);
  char text[32];
  std::strftime(text, sizeof(text), "%Y-%m-%dT%H:%M:%SZ", &parts);
  return text;
}

ModelsJson json_of(const ModelRow& row) {
  const auto text_or_null = [](const std::string& text) {
    return text.empty() ? ModelsJson(nullptr) : ModelsJson(text);
  };
  return {{"name", row.name},
          {"source", row.in_hub_cache ? "hub_cache" : "models_folder"},
          {"repo", row.found.repo},
          {"revision", row.revision},
          {"refs", row.found.refs},
          {"commit", row.found.commit},
          {"subfolder", row.found.subfolder},
          {"folder", row.found.folder.string()},
          {"bytes", row.found.bytes},
          {"modified", utc_text(row.found.modified)},
          {"format", text_or_null(row.format)},
          {"error", text_or_null(row.error)},
          {"fits", row.fits},
          {"largest_context", row.largest_context ? ModelsJson(*row.largest_context) : nullptr},
          {"verdict", row.verdict}};
}

void print_table(const std::vector<ModelRow>& rows, std::ostream& out) {
  struct Cells {
    std::string model, size, fits, context, weights;
  };
  std::vector<Cells> cells{{"MODEL", "SIZE", "FITS", "CONTEXT", "WEIGHTS"}};
  for (const ModelRow& row : rows) {
    cells.push_back({row.name, human_bytes(row.found.bytes), row.fits,
                     row.largest_context ? engine::group_thousands(*row.largest_context) : "-",
                     row.format.empty() ? "-" : row.format});
  }
  std::size_t widths[4] = {0, 0, 0, 0};
  for (const Cells& line : cells) {
    widths[0] = std::max(widths[0], line.model.size());
    widths[1] = std::max(widths[1], line.size.size());
    widths[2] = std::max(widths[2], line.fits.size());
    widths[3] = std::max(widths[3], line.context.size());
  }
  const auto padded = [](const std::string& text, std::size_t width) {
    return text + std::string(width - text.size() + 2, ' ');
  };
  for (std::size_t i = 0; i < cells.size(); ++i) {
    const Cells& line = cells[i];
    out << padded(line.model, widths[0]) << padded(line.size, widths[1])
        << padded(line.fits, widths[2]) << padded(line.context, widths[3]) << line.weights << '\n';
    if (i == 0) continue;
    // Under each model: its folder, and the verdict when it is more than "fits".
    const ModelRow& row = rows[i - 1];
    if (row.in_hub_cache) out << "    " << row.found.folder.string() << '\n';
    if (row.fits != "yes") out << "    " << row.verdict << '\n';
  }
}

// The folder an option names, which must be there; or the default, which
// need not be (nothing downloaded yet).
std::filesystem::path checked_folder(const std::string& given, const char* option,
                                     std::filesystem::path fallback) {
  if (given.empty()) return fallback;
  std::error_code error;
  if (!std::filesystem::is_directory(given, error))
    throw UsageError(std::string(option) + " " + given + " is not a folder");
  return given;
}

}  // namespace

void run_models(const ModelsRequest& request, std::ostream& out) {
  const hub::EnvironmentLookup environment = hub::process_environment();
  const std::filesystem::path cache = checked_folder(
      request.cache_dir, "--cache-dir", hub::resolve_hub_settings(environment).cache_dir);
  const std::filesystem::path models = checked_folder(
      request.models_dir, "--models-dir", hub::default_quire_models_folder(environment));
  const engine::RuntimeOptions options = request.engine.runtime_options();
  const std::unique_ptr<kernels::Backend> backend = request.engine.make_backend();
  const std::vector<kernels::DeviceInfo> devices = backend->devices();

  std::vector<ModelRow> rows;
  for (hub::CachedModel& found : hub::list_cached_models(cache))
    rows.push_back(row_of(std::move(found), true));
  for (hub::CachedModel& found : hub::list_model_folders(models))
    rows.push_back(row_of(std::move(found), false));
  for (ModelRow& row : rows)
    describe(row, devices, options);

  if (request.json) {
    ModelsJson list = ModelsJson::array();
    for (const ModelRow& row : rows)
      list.push_back(json_of(row));
    out << list.dump(2) << '\n';
    return;
  }
  if (rows.empty()) {
    out << "No models in the Hugging Face cache " << cache.string() << " or in Quire's models "
        << "folder " << models.string() << ".\n";
    return;
  }
  print_table(rows, out);
}

void add_models_command(CLI::App& app, int& exit_code) {
  auto request = std::make_shared<ModelsRequest>();
  CLI::App* command = app.add_subcommand(
      "models",
      "List the models on this computer: the Hugging Face cache (HF_HUB_CACHE, else "
      "$HF_HOME/hub) and Quire's models folder ($XDG_DATA_HOME/Quire/models, else "
      "~/.local/share/Quire/models), with each one's size, weights, and whether it fits the "
      "devices of --devices with these settings");
  command->add_flag("--json", request->json, "Print one JSON array");
  command->add_option("--cache-dir", request->cache_dir,
                      "The Hugging Face cache folder, in place of HF_HUB_CACHE");
  command->add_option("--models-dir", request->models_dir,
                      "Quire's models folder, in place of the default");
  request->engine.add_to(*command, /*with_context=*/true);
  command->callback([request, &exit_code] {
    run_models(*request, std::cout);
    exit_code = 0;
  });
}

}  // namespace quire::cli
