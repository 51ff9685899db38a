#include "backend_choice.h"

#include "quire/kernels/cpu/cpu_backend.h"

namespace quire::gui {
namespace {

std::vector<kernels::CpuBackend::Device> parse_cpu_devices(const QString& spec) {
  try {
    return kernels::CpuBackend::parse_devices(spec.toStdString());
  } catch (const std::invalid_argument& error) {
    throw BackendUnavailable("the CPU devices \"" + spec.toStdString() + "\" are not understood (" +
                             error.what() + "); unset QUIRE_CPU_DEVICES or fix it");
  }
}

void check_backend(const ui::EngineSettings& settings) {
  // This build runs every model on the CPU backend; "auto" means the best
  // backend present, which is the CPU until a GPU backend is built in.
  if (settings.backend == QLatin1String("cuda")) {
    throw BackendUnavailable(
        "this build of Quire has no CUDA backend; choose Auto or CPU as the backend in Settings");
  }
}

QString size_label(std::int64_t bytes) {
  const double gib = static_cast<double>(bytes) / double(1 << 30);
  if (gib >= 1.0) return QStringLiteral("%1 GiB").arg(gib, 0, 'f', 1);
  return QStringLiteral("%1 MiB").arg(static_cast<double>(bytes) / double(1 << 20), 0, 'f', 0);
}

}  // namespace

QString default_cpu_devices() {
  const QString spec = qEnvironmentVariable("QUIRE_CPU_DEVICES").trimmed();
  return spec.isEmpty() ? QStringLiteral("cpu") : spec;
}

QStringList device_labels(const ui::EngineSettings& settings, const QString& cpu_devices) {
  QStringList labels;
  try {
    check_backend(settings);
    const kernels::CpuBackend backend(parse_cpu_devices(cpu_devices));
    for (const kernels::DeviceInfo& device : backend.devices()) {
      labels << QStringLiteral("%1 · %2").arg(QString::fromStdString(device.name),
                                              size_label(device.total_bytes));
    }
  } catch (const BackendUnavailable&) {
    labels.clear();
  }
  return labels;
}

BackendSelection make_backend(const ui::EngineSettings& settings, const QString& cpu_devices) {
  check_backend(settings);
  const std::vector<kernels::CpuBackend::Device> all = parse_cpu_devices(cpu_devices);
  BackendSelection selection;
  std::vector<kernels::CpuBackend::Device> chosen;
  for (std::size_t index = 0; index < all.size(); ++index) {
    if (!settings.devices.isEmpty() && !settings.devices.contains(static_cast<int>(index))) {
      continue;
    }
    chosen.push_back(all[index]);
    selection.indices.push_back(static_cast<int>(index));
  }
  if (chosen.empty()) {
    throw BackendUnavailable(
        "none of the devices chosen in Settings exists on this machine; choose at least one");
  }
  selection.backend = std::make_unique<kernels::CpuBackend>(std::move(chosen));
  return selection;
}

}  // namespace quire::gui
