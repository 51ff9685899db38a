#pragma once

// quire-cli models: the models already on this computer, in the Hugging Face
// cache and in Quire's own models folder, with their size, weights and
// whether they fit this machine's devices.

#include <iosfwd>
#include <string>

#include "engine_options.h"

namespace CLI {
class App;
}

namespace quire::cli {

struct ModelsRequest {
  bool json = false;
  std::string cache_dir;   // empty: HF_HUB_CACHE, else $HF_HOME/hub
  std::string models_dir;  // empty: $XDG_DATA_HOME/Quire/models, else ~/.local/share/...
  EngineOptions engine;    // the devices and settings the plans are made for
};

// Lists every model folder found, one row each. A folder Quire cannot open
// is a row with its reason, not a failure. Throws UsageError (one line) for
// options it cannot use, or a folder given with --cache-dir or --models-dir
// that is not there.
void run_models(const ModelsRequest& request, std::ostream& out);

void add_models_command(CLI::App& app, int& exit_code);

}  // namespace quire::cli
