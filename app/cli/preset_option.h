#pragma once

// --preset NAME|FILE and --presets DIR: a preset's values where the command
// line is silent. The library (app/presets) is read here, so that the rest of
// the CLI and the server keep to plain C++.

#include <optional>
#include <string>

#include "quire/server/request_preset.h"

namespace CLI {
class App;
class Option;
}  // namespace CLI

namespace quire::cli {

// A preset's values in the CLI's types: what the server takes from a preset
// (name, system prompt, every sampler and the longest reply as request
// fields, the context policy), and the prompt format.
struct PresetValues {
  server::RequestPreset values;
  std::optional<std::string> prompt_format;
};

struct PresetOption {
  std::string preset;       // --preset: a name, or a preset file's path
  std::string presets_dir;  // --presets: the library (empty: the app's folder)

  void add_to(CLI::App& command);
  // The library's folder: --presets, else ~/.config/quire/presets.
  std::string library_dir() const;
  // The chosen preset; nullopt without --preset. Throws UsageError naming
  // the problem (an unknown name lists the available ones; a broken file
  // names the file and the field).
  std::optional<PresetValues> load() const;
  // The library for a server's requests.
  server::PresetCatalog catalog() const;
};

// Whether the user gave `option` on the command line (defaults do not count).
bool given(const CLI::Option* option);

}  // namespace quire::cli
