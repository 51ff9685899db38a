#pragma once

// Which backend and devices the settings ask for. The one place that turns a
// backend name into a kernels::Backend, so the CUDA backend joins here.

#include <QString>
#include <QStringList>
#include <memory>
#include <stdexcept>
#include <vector>

#include "engine_messages.h"
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
// The CUDA backend's devices: "cuda" (every GPU) unless QUIRE_CUDA_DEVICES
// chooses GPUs or shares of one, such as "cuda:0:2x20GiB".
QString default_cuda_devices();
DeviceLists default_device_lists();

// Every device of the backend the settings choose, by index, as the panel lists
// them ("cpu0 · 512 MiB", "cuda0 · NVIDIA H100 80GB HBM3 · 79.1 GiB"). "auto"
// lists the CUDA backend's devices when it loads and the CPU's otherwise.
// Empty when the backend is unavailable.
QStringList device_labels(const ui::EngineSettings& settings, const DeviceLists& lists);

// A backend over the devices the settings select (all when none are), and
// which of the backend's full list of devices those are, in order. The
// backend numbers its devices from 0; the settings keep the full list's.
struct BackendSelection {
  std::unique_ptr<kernels::Backend> backend;
  std::vector<int> indices;
  // Set when "auto" fell back to the CPU: why the CUDA backend cannot run
  // or failed its self-check, in a sentence for the status bar. Empty on a
  // machine without any NVIDIA GPU (cuda_note.h).
  QString fallback_reason;
};

// "cpu": the CPU backend. "cuda": the CUDA backend, or BackendUnavailable
// with the loader's reason. "auto": CUDA when it loads, else the CPU with
// `fallback_reason` set. Before the CUDA backend's first use on these GPUs
// with this driver and Quire it is compared with the CPU (engine/selfcheck);
// when they disagree, "auto" runs on the CPU with the reason and the log's
// path in `fallback_reason`, and "cuda" is refused with the same
// (QUIRE_SKIP_CUDA_SELF_CHECK=1 skips the check). Throws BackendUnavailable.
BackendSelection make_backend(const ui::EngineSettings& settings, const DeviceLists& lists);

}  // namespace quire::gui
