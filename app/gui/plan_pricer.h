#pragma once

// Prices engine settings with the engine's planner before anything is loaded:
// reads the chosen model's headers (cached per folder), asks the backend's
// devices what they hold free, and turns the plan into the panel's PlanView.

#include <QDateTime>
#include <QString>
#include <memory>
#include <optional>

#include "quire/engine/planner/placement_plan.h"
#include "quire/engine/runtime/model_description.h"
#include "quire/ui/settings_data.h"

namespace quire::gui {

ui::PlanView to_plan_view(const engine::PlacementPlan& plan);

class PlanPricer {
 public:
  explicit PlanPricer(QString cpu_devices) : cpu_devices_(std::move(cpu_devices)) {}

  // The planner's answer for `settings`, or nullopt with *error saying why
  // there is none (no folder, unreadable model, unusable setting).
  std::optional<engine::PlacementPlan> plan(const ui::EngineSettings& settings, QString* error);
  // The same, as the settings panel and the welcome view show it.
  ui::PlanView price(const ui::EngineSettings& settings);

  const QString& cpu_devices() const { return cpu_devices_; }

 private:
  std::shared_ptr<const engine::ModelDescription> describe(const QString& directory);

  QString cpu_devices_;
  QString described_path_;
  QDateTime described_stamp_;
  std::shared_ptr<const engine::ModelDescription> described_;
};

}  // namespace quire::gui
