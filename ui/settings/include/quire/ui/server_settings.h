#pragma once

// Plain data of the OpenAI-compatible server inside the application: what
// the user sets (Settings → Server) and what the engine reports back.

#include <QMetaType>
#include <QString>

#include "quire/ui/settings_limits.h"

namespace quire::ui {

struct ServerSettings {
  // Off by default: nothing listens unless the user asks for it.
  bool enabled = false;
  int port = limits::kDefaultServerPort;

  friend bool operator==(const ServerSettings&, const ServerSettings&) = default;
};

// The server's state as the engine last reported it.
struct ServerStatusView {
  enum class State {
    Off,           // the setting is off
    WaitingModel,  // on, and starts once a model is loaded
    Serving,       // listening on `url`
    Failed,        // on, but it could not listen: `message` says why
  };
  State state = State::Off;
  QString url;      // "http://127.0.0.1:8642/v1" while serving
  QString message;  // why it is not serving (Failed)
  int running = 0;  // API requests' jobs in the batch
  int waiting = 0;  // API requests' jobs handed over and not running yet

  friend bool operator==(const ServerStatusView&, const ServerStatusView&) = default;
};

// "http://127.0.0.1:PORT/v1": where OpenAI clients find the server.
QString server_url(int port);

}  // namespace quire::ui

Q_DECLARE_METATYPE(quire::ui::ServerSettings)
Q_DECLARE_METATYPE(quire::ui::ServerStatusView)
