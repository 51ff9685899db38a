#pragma once

#include <iosfwd>
#include <string>

namespace CLI {
class App;
}

namespace quire::cli {

// Lists the devices of every backend: the CPU's, and the CUDA backend's or
// the reason it cannot run here. A backend that cannot run is an answer, not
// an error: the exit status is 0 either way. With `devices` (a --devices
// value other than "auto"), only that backend, over the logical devices the
// list gives, numbered as the other commands number them.
int run_devices(bool json, const std::string& devices, std::ostream& out);

void add_devices_command(CLI::App& app, int& exit_code);

}  // namespace quire::cli
