#include "app_server.h"

#include <chrono>
#include <csignal>
#include <stdexcept>
#include <utility>

#include "quire/ui/server_settings.h"

namespace quire::gui {
namespace {

server::ServerOptions options_for(const AppServerSetup& setup) {
  server::ServerOptions options;
  // Loopback only: no other machine can reach it, so no key is asked for
  // (check_exposure would refuse anything else without one).
  options.host = "127.0.0.1";
  options.port = setup.port;
  // A connection per job running or waiting, and some for the rest (model
  // lists, statistics, requests refused at once), as quire-cli serve has.
  options.threads = setup.max_jobs + 8;
  options.presets = setup.presets;
  return options;
}

}  // namespace

AppServer::AppServer(AppServerSetup setup)
    : jobs_(setup.max_jobs, std::move(setup.wake)),
      http_(options_for(setup), std::move(setup.model), std::move(setup.format), *setup.tokenizer,
            jobs_) {
  // cpp-httplib writes with plain send(): a client that went away would
  // otherwise end the whole application with SIGPIPE.
  std::signal(SIGPIPE, SIG_IGN);
  try {
    port_ = http_.bind();
  } catch (const std::runtime_error&) {
    throw std::runtime_error(
        "Quire could not listen on 127.0.0.1:" + std::to_string(setup.port) +
        ": the port is in use (by another program, or another Quire). Choose another port in "
        "Settings → Server.");
  }
  thread_ = std::thread([this] {
    http_.run();
    served_ = true;
  });
  // The destructor's stop() must find it serving, or it would serve on.
  while (!http_.running() && !served_)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
}

AppServer::~AppServer() {
  jobs_.close();
  http_.stop();
  if (thread_.joinable()) thread_.join();
}

QString AppServer::url() const {
  return ui::server_url(port_);
}

}  // namespace quire::gui
