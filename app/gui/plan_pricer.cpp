#include "plan_pricer.h"

#include <QDir>
#include <QFileInfo>
#include <stdexcept>

#include "backend_choice.h"
#include "quire/engine/model_error.h"
#include "quire/engine/planner/planner.h"
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
    row.cache = device.cache;
    row.scratch = device.scratch;
    row.reserve = device.reserve;
    row.free_before = device.free_before;
    row.free_after = device.free_after;
    row.used = device.module_count > 0;
    view.devices.append(row);
  }
  view.largest_context_tokens = plan.largest_context ? plan.largest_context->tokens : 0;
  view.largest_context_is_model_limit = plan.largest_context && plan.largest_context->model_limit;
  view.model_context_tokens = plan.model_context_tokens;
  return view;
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
                                                      QString* error) {
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
    const engine::RuntimeOptions options = runtime_options(settings, *model, selection.indices);
    return engine::plan_placement(engine::placement_request(*model, devices, options));
  } catch (const std::exception& failure) {
    return fail(QString::fromStdString(failure.what()));
  }
}

ui::PlanView PlanPricer::price(const ui::EngineSettings& settings) {
  QString error;
  const std::optional<engine::PlacementPlan> planned = plan(settings, &error);
  if (!planned) {
    ui::PlanView view;
    view.error = error;
    return view;
  }
  return to_plan_view(*planned);
}

}  // namespace quire::gui
