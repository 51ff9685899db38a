#pragma once

namespace CLI {
class App;
}

namespace quire::cli {

// serve: an OpenAI-compatible HTTP server over one model (app/server).
void add_serve_command(CLI::App& app, int& exit_code);

}  // namespace quire::cli
