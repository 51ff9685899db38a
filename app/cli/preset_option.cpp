#include "preset_option.h"

#include <CLI/CLI.hpp>

#include "cli_support.h"
#include "quire/app/presets/preset_library.h"
#include "quire/app/presets/server_catalog.h"

namespace quire::cli {
namespace {

std::optional<std::string> utf8(const std::optional<QString>& text) {
  if (!text) return std::nullopt;
  return text->toStdString();
}

PresetValues values_of(const presets::Preset& preset) {
  return PresetValues{presets::request_preset_of(preset), utf8(preset.settings.prompt_format)};
}

presets::PresetLibrary library_at(const std::string& dir) {
  return presets::PresetLibrary(dir.empty() ? presets::default_presets_dir()
                                            : QString::fromStdString(dir));
}

}  // namespace

void PresetOption::add_to(CLI::App& command) {
  command.add_option("--preset", preset,
                     "A preset's name or a preset file (.json): its system prompt, sampling, "
                     "longest reply and prompt format where the command line is silent");
  command.add_option("--presets", presets_dir,
                     "The folder of presets (default ~/.config/quire/presets, the app's)");
}

std::string PresetOption::library_dir() const {
  return library_at(presets_dir).dir().toStdString();
}

std::optional<PresetValues> PresetOption::load() const {
  if (preset.empty()) return std::nullopt;
  QString error;
  const std::optional<presets::Preset> found =
      library_at(presets_dir).resolve(QString::fromStdString(preset), &error);
  if (!found) throw UsageError("--preset: " + error.toStdString());
  return values_of(*found);
}

server::PresetCatalog PresetOption::catalog() const {
  return presets::server_catalog(library_at(presets_dir).dir());
}

bool given(const CLI::Option* option) {
  return option != nullptr && option->count() > 0;
}

}  // namespace quire::cli
