#pragma once

// Which backend and devices the settings ask for. The one place that turns a
// backend name into a kernels::Backend, so the CUDA backend joins here.

#include <QString>
#include <QStringList>
#include <memory>
#include <stdexcept>
#include <vector>

#include "quire/kernels/backend.h"
#include "quire/ui/settings_data.h"

namespace quire::gui {

// The settings name a backend or devices this build or machine does not have.
// The message says what to choose instead.
class BackendUnavailable : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The CPU backend's devices: "cpu" (one device over the machine's memory) unless
// QUIRE_CPU_DEVICES gives budgeted logical devices such as "cpu:2x512MiB", which
// shows multi-device placement on any machine.
QString default_cpu_devices();

// Every device of the backend the settings choose, by index, as the panel lists
// them ("cpu0 · 512 MiB"). Empty when the backend is unavailable.
QStringList device_labels(const ui::EngineSettings& settings, const QString& cpu_devices);

// A backend over the devices the settings select (all when none are), and
// which of the backend's full list of devices those are, in order. The
// backend numbers its devices from 0; the settings keep the full list's.
struct BackendSelection {
  std::unique_ptr<kernels::Backend> backend;
  std::vector<int> indices;
};

// Throws BackendUnavailable.
BackendSelection make_backend(const ui::EngineSettings& settings, const QString& cpu_devices);

}  // namespace quire::gui
