#pragma once

#include <iosfwd>
#include <string>

namespace CLI {
class App;
}

namespace quire::cli {

struct DevicesRequest {
  bool json = false;
  std::string devices;  // a --devices value; empty or "auto": every backend
  bool check = false;   // run the CUDA backend's self-check now
};

// Lists the devices of every backend: the CPU's, and the CUDA backend's or
// the reason it cannot run here, with the CUDA backend's self-check (its
// remembered outcome, or "not run yet") and the GPU architectures it has been
// verified on. A backend that cannot run is an answer, not an error: the exit
// status is 0 either way. With `devices` (a --devices value other than
// "auto"), only that backend, over the logical devices the list gives,
// numbered as the other commands number them. With `check`, the self-check
// runs now (its outcome remembered as on first use): exit status 0 when it
// passed, 1 when it failed or could not be completed, 2 (with a line on `err`)
// when the CUDA backend cannot run here.
int run_devices(const DevicesRequest& request, std::ostream& out, std::ostream& err);

void add_devices_command(CLI::App& app, int& exit_code);

}  // namespace quire::cli
