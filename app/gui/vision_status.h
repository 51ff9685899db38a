#pragma once

// The loaded model's vision tower as the window tells it: ModelInfo's vision
// fields, taken from the model's description and its plan; what the model
// line says about images; and the memory panel's item for the tower.
//
// The model line says "sees images" only when images reach the model
// (model_sees_images). A model with a tower whose images are not yet given
// to it (engine::kGeneratorTakesImages off) is described in the line exactly
// as a text-only model, since for the chat it is one; its tooltip says that
// it has a tower and that Quire does not send it images yet. A tower that
// cannot be used (a damaged download, too little host memory) is said in the
// tooltip with its reason.

#include <QString>
#include <optional>

#include "engine_messages.h"
#include "quire/engine/planner/placement_plan.h"
#include "quire/engine/vision/vision_tower_summary.h"
#include "quire/ui/memory_view_data.h"

namespace quire::gui {

// Sets info.vision_tower (the tower's name, empty for none), info.has_vision
// (a tower the plan finds room for) and info.vision_problem (why a declared
// tower cannot be used: the description's reason, else the plan's).
void describe_vision(ModelInfo& info, const engine::vision::VisionAvailability& vision,
                     const std::optional<engine::VisionTowerPlacement>& planned);

// "sees images" when model_sees_images(info), else empty.
QString images_phrase(const ModelInfo& info, bool generator_takes_images);

// For the model line's tooltip: why a model with a vision tower does not see
// images; empty when it does, or has no tower.
QString images_note(const ModelInfo& info, bool generator_takes_images);

// The memory panel's item: empty for a model without a usable tower.
ui::VisionTowerView vision_tower_view(const engine::vision::VisionAvailability& vision,
                                      const std::optional<engine::VisionTowerPlacement>& planned,
                                      bool generator_takes_images);

}  // namespace quire::gui
