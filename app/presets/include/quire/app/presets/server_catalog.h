#pragma once

// The presets of a library as the server (no Qt) sees them: by name, read
// from the folder on each request, so that presets saved while the server
// runs count.

#include <QString>

#include "quire/app/presets/preset.h"
#include "quire/server/request_preset.h"

namespace quire::presets {

server::RequestPreset request_preset_of(const Preset& preset);
server::PresetCatalog server_catalog(const QString& dir);

}  // namespace quire::presets
