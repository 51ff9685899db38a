#include "plan_pricer.h"

#include <QDir>
#include <QFileInfo>
#include <QLocale>
#include <algorithm>
#include <stdexcept>

#include "backend_choice.h"
#include "quire/engine/model_error.h"
#include "quire/engine/planner/planner.h"
#include "quire/engine/runtime/fit_options.h"
#include "quire/engine/runtime/weights_summary.h"
#include "runtime_settings.h"

namespace quire::gui {

ui::PlanView to_plan_view(const engine::PlacementPlan& plan) {
  ui::PlanView view;
  view.valid = true;
  view.fits = plan.fits;
  view.verdict = plan.fits ? QStringLiteral("fits") : QString::fromStdString(plan.problem);
  for (const engine::DevicePlacement& device : plan.devices) {
    ui::PlanDeviceView row;
    row.name = QString::fromStdString(device.name);
    row.weights = device.weights;
    // An offloaded layer's device holds its staging ring, not its pages; the
    // ring is cache memory all the same.
    row.cache = device.cache + device.staging;
    row.scratch = device.scratch;
    row.reserve = device.reserve;
    row.free_before = device.free_before;
    row.free_after = device.free_after;
    // The device that holds every layer's cache is used without a layer.
    row.used = device.used();
    view.devices.append(row);
  }
  if (plan.host_cache) {
    view.host_cache = plan.host_cache->bytes;
    view.host_usable = plan.host_cache->usable;
  }
  view.largest_context_tokens = plan.largest_context ? plan.largest_context->tokens : 0;
  view.largest_context_is_model_limit = plan.largest_context && plan.largest_context->model_limit;
  view.model_context_tokens = plan.model_context_tokens;
  return view;
}

void add_fit(ui::PlanView& view, const std::optional<engine::FitSuggestion>& suggestion) {
  if (!suggestion || view.fits) return;
  view.fit_label = QString::fromStdString(suggestion->label);
  view.fit_change = QString::fromStdString(suggestion->change);
  if (!suggestion->alternative.empty()) {
    view.fit_change +=
        QStringLiteral("\nAlso fits: %1.").arg(QString::fromStdString(suggestion->alternative));
  }
  if (suggestion->kind == engine::FitSuggestion::Kind::SmallerCoding) {
    view.fit_cache_format = QString::fromStdString(suggestion->coding);
  }
  view.fit_cache_tokens = suggestion->context_tokens;
}

std::shared_ptr<const engine::ModelDescription> PlanPricer::describe(const QString& directory) {
  // Headers are read again only when the folder or its config changes.
  const QDateTime stamp =
      QFileInfo(QDir(directory).filePath(QStringLiteral("config.json"))).lastModified();
  if (described_ && described_path_ == directory && described_stamp_ == stamp) return described_;
  described_.reset();
  described_ = std::make_shared<const engine::ModelDescription>(
      engine::ModelDescription::open(directory.toStdString()));
  described_path_ = directory;
  described_stamp_ = stamp;
  return described_;
}

std::optional<engine::PlacementPlan> PlanPricer::plan(const ui::EngineSettings& settings,
                                                      QString* error,
                                                      std::optional<engine::FitSuggestion>* fit) {
  auto fail = [&](const QString& why) -> std::optional<engine::PlacementPlan> {
    if (error != nullptr) *error = why;
    return std::nullopt;
  };
  if (settings.model_directory.trimmed().isEmpty()) return fail(QStringLiteral("No model chosen."));
  if (!QFileInfo(settings.model_directory).isDir()) {
    return fail(QStringLiteral("The folder %1 does not exist.").arg(settings.model_directory));
  }
  try {
    const std::shared_ptr<const engine::ModelDescription> model =
        describe(settings.model_directory);
    const BackendSelection selection = make_backend(settings, devices_);
    const std::vector<kernels::DeviceInfo> devices = selection.backend->devices();
    const engine::RuntimeOptions options =
        runtime_options(settings, *model, selection.indices, devices);
    engine::PlacementPlan planned =
        engine::plan_placement(engine::placement_request(*model, devices, options));
    if (fit != nullptr && !planned.fits) *fit = engine::suggest_fit(*model, devices, options);
    return planned;
  } catch (const std::exception& failure) {
    return fail(QString::fromStdString(failure.what()));
  }
}

ui::PlanView PlanPricer::price(const ui::EngineSettings& settings) {
  if (ui::is_remote(settings)) {
    // The weights and the cache live on the engine's machine.
    ui::PlanView view;
    view.valid = true;
    view.fits = true;
    view.remote = true;
    view.verdict = QStringLiteral(
                       "runs on the remote engine at %1: no memory of this computer "
                       "holds its weights or cache")
                       .arg(settings.remote_url.trimmed());
    return view;
  }
  QString error;
  std::optional<engine::FitSuggestion> fit;
  const std::optional<engine::PlacementPlan> planned = plan(settings, &error, &fit);
  if (!planned) {
    ui::PlanView view;
    view.error = error;
    return view;
  }
  ui::PlanView view = to_plan_view(*planned);
  add_fit(view, fit);
  // plan() has read the headers, so the description is at hand.
  if (described_) {
    view.weights = QString::fromStdString(engine::summarize_weights(*described_).text());
  }
  if (planned->fits && !ui::loaded_draft_model(settings).isEmpty())
    price_draft(settings, *planned, view);
  return view;
}

void PlanPricer::price_draft(const ui::EngineSettings& settings,
                             const engine::PlacementPlan& planned, ui::PlanView& view) {
  const QString folder = ui::loaded_draft_model(settings);
  try {
    const engine::ModelDescription draft = engine::ModelDescription::open(folder.toStdString());
    const BackendSelection selection = make_backend(settings, devices_);
    // The devices as the model leaves them: what its plan takes is taken.
    std::vector<kernels::DeviceInfo> devices = selection.backend->devices();
    for (kernels::DeviceInfo& device : devices) {
      for (const engine::DevicePlacement& placed : planned.devices) {
        if (placed.index == device.index) device.free_bytes -= placed.planned;
      }
      device.free_bytes = std::max<std::int64_t>(0, device.free_bytes);
    }
    // As the load runs it: the model's options, as many cache tokens.
    const engine::RuntimeOptions options =
        runtime_options(settings, draft, selection.indices, devices);
    const engine::PlacementPlan drafted =
        engine::plan_placement(engine::placement_request(draft, devices, options));
    std::int64_t bytes = 0;
    for (const engine::DevicePlacement& placed : drafted.devices)
      bytes += placed.planned;
    view.draft_fits = drafted.fits;
    view.draft_verdict =
        drafted.fits ? QStringLiteral("Draft model %1: %2 beside the model")
                           .arg(QDir(folder).dirName(), QLocale().formattedDataSize(bytes))
                     : QStringLiteral("Draft model %1: %2 beside the model")
                           .arg(QDir(folder).dirName(), QString::fromStdString(drafted.problem));
  } catch (const std::exception& failure) {
    view.draft_fits = false;
    view.draft_verdict = QStringLiteral("Draft model %1: %2").arg(folder, failure.what());
  }
}

}  // namespace quire::gui
