#pragma once

// How quire-cli inspect shows a model's vision side: the tower and projector
// the directory holds, or why the one config.json declares cannot be used.

#include <nlohmann/json.hpp>
#include <string>

#include "quire/engine/vision/vision_tower_summary.h"

namespace quire::cli {

// null for a text-only model; the tower's summary, or {"problem": ...}.
nlohmann::ordered_json vision_json(const engine::vision::VisionAvailability& vision);

// The text after inspect's "vision" label; empty for a text-only model.
std::string vision_text(const engine::vision::VisionAvailability& vision);

}  // namespace quire::cli
