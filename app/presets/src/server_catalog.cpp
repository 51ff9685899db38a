#include "quire/app/presets/server_catalog.h"

#include "quire/app/presets/preset_library.h"

namespace quire::presets {

server::RequestPreset request_preset_of(const Preset& preset) {
  const store::ChatSettings& settings = preset.settings;
  server::RequestPreset values;
  values.name = preset.name.toStdString();
  if (settings.system_prompt) values.system_prompt = settings.system_prompt->toStdString();
  values.temperature = settings.temperature;
  values.top_p = settings.top_p;
  values.min_p = settings.min_p;
  values.repetition_penalty = settings.repetition_penalty;
  if (settings.max_new_tokens) values.max_tokens = *settings.max_new_tokens;
  return values;
}

server::PresetCatalog server_catalog(const QString& dir) {
  server::PresetCatalog catalog;
  catalog.find = [dir](const std::string& name) -> std::optional<server::RequestPreset> {
    const std::optional<Preset> found = PresetLibrary(dir).find(QString::fromStdString(name));
    if (!found) return std::nullopt;
    return request_preset_of(*found);
  };
  catalog.names = [dir] {
    std::vector<std::string> names;
    for (const QString& name : PresetLibrary(dir).names())
      names.push_back(name.toStdString());
    return names;
  };
  return catalog;
}

}  // namespace quire::presets
