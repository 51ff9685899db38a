#pragma once

// Prices engine settings with the engine's planner before anything is loaded:
// reads the chosen model's headers (cached per folder), asks the backend's
// devices what they hold free, and turns the plan into the panel's PlanView.

#include <QDateTime>
#include <QString>
#include <memory>
#include <optional>

#include "engine_messages.h"
#include "quire/engine/planner/fit_suggestion.h"
#include "quire/engine/planner/placement_plan.h"
#include "quire/engine/runtime/model_description.h"
#include "quire/ui/settings_data.h"

namespace quire::gui {

ui::PlanView to_plan_view(const engine::PlacementPlan& plan);
// Adds the nearest settings that fit, when there are any, to a plan that does not.
void add_fit(ui::PlanView& view, const std::optional<engine::FitSuggestion>& suggestion);

class PlanPricer {
 public:
  explicit PlanPricer(DeviceLists devices) : devices_(std::move(devices)) {}

  // The planner's answer for `settings`, or nullopt with *error saying why
  // there is none (no folder, unreadable model, unusable setting).
  // With `fit`, a plan that does not fit also gets the nearest settings that do.
  std::optional<engine::PlacementPlan> plan(const ui::EngineSettings& settings, QString* error,
                                            std::optional<engine::FitSuggestion>* fit = nullptr);
  // The same, as the settings panel and the welcome view show it.
  ui::PlanView price(const ui::EngineSettings& settings);

  const DeviceLists& devices() const { return devices_; }

 private:
  std::shared_ptr<const engine::ModelDescription> describe(const QString& directory);
  // The draft model of `settings` beside `planned` (the model's plan) on the
  // same devices, into view.draft_verdict.
  void price_draft(const ui::EngineSettings& settings, const engine::PlacementPlan& planned,
                   ui::PlanView& view);

  DeviceLists devices_;
  QString described_path_;
  QDateTime described_stamp_;
  std::shared_ptr<const engine::ModelDescription> described_;
};

}  // namespace quire::gui
