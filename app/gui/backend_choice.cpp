#include "backend_choice.h"

#include <QCoreApplication>
#include <cctype>
#include <optional>

#include "cuda_note.h"
#include "quire/engine/selfcheck/self_check_gate.h"
#include "quire/kernels/cpu/cpu_backend.h"
#include "quire/kernels/cuda_devices.h"
#include "quire/kernels/cuda_loader.h"

namespace quire::gui {
namespace {

enum class Choice { Cpu, Cuda, Auto };

Choice choice_of(const ui::EngineSettings& settings) {
  if (settings.backend == QLatin1String("cuda")) return Choice::Cuda;
  if (settings.backend == QLatin1String("auto")) return Choice::Auto;
  // "cpu", and a name this version does not know (written by a newer one):
  // the CPU runs everything.
  return Choice::Cpu;
}

std::vector<kernels::CpuBackend::Device> parse_cpu_devices(const QString& spec) {
  try {
    return kernels::CpuBackend::parse_devices(spec.toStdString());
  } catch (const std::invalid_argument& error) {
    throw BackendUnavailable("the CPU devices \"" + spec.toStdString() + "\" are not understood (" +
                             error.what() + "); unset QUIRE_CPU_DEVICES or fix it");
  }
}

kernels::CudaDeviceSpec parse_cuda_list(const QString& spec) {
  try {
    return kernels::parse_cuda_devices(spec.toStdString());
  } catch (const std::invalid_argument& error) {
    throw BackendUnavailable("the CUDA devices \"" + spec.toStdString() +
                             "\" are not understood (" + error.what() +
                             "); unset QUIRE_CUDA_DEVICES or fix it");
  }
}

// Parsed first, so that a mistake in the list is reported as such instead of
// as a backend that cannot run.
kernels::LoadedBackend load_cuda(const QString& spec) {
  return kernels::load_cuda_backend(kernels::to_string(parse_cuda_list(spec)));
}

BackendUnavailable cuda_refused(const std::string& why_not) {
  return BackendUnavailable(
      "the CUDA backend cannot run: " + plain_cuda_reason(why_not).toStdString() +
      ". Choose Automatic or CPU as the backend in Settings.");
}

engine::selfcheck::SelfCheckStore self_check_store() {
  return engine::selfcheck::SelfCheckStore(engine::selfcheck::SelfCheckStore::default_folder(),
                                           "cuda");
}

std::string quire_version() {
  return QCoreApplication::applicationVersion().toStdString();
}

// The CUDA backend's self-check against the CPU, over every device of the
// list (so that choosing some of them later needs no new check): nothing
// when it passed, now or before, or is skipped; else why it failed, in one
// line that names the log.
std::optional<std::string> self_check_problem(const kernels::LoadedBackend& cuda) {
  if (engine::selfcheck::skip_requested()) return std::nullopt;
  engine::selfcheck::SelfCheckStore store = self_check_store();
  engine::selfcheck::GateOptions options;
  options.quire_version = quire_version();
  options.library = cuda.library;
  engine::selfcheck::GateOutcome outcome =
      engine::selfcheck::check_backend_once(*cuda.backend, store, options);
  if (outcome.passed) return std::nullopt;
  return std::move(outcome.problem);
}

// Whether the check is remembered as failed for this backend, without
// running it: the settings panel then offers the CPU's devices, as loading
// will use them.
bool remembered_failure(const kernels::LoadedBackend& cuda) {
  if (engine::selfcheck::skip_requested()) return false;
  const std::optional<engine::selfcheck::SelfCheckRecord> record = self_check_store().find(
      engine::selfcheck::key_for(*cuda.backend, quire_version(), cuda.library));
  return record && !record->passed;
}

BackendUnavailable self_check_refused(std::string problem) {
  // The problem starts a sentence here.
  if (!problem.empty())
    problem[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(problem[0])));
  return BackendUnavailable(problem +
                            ". Choose Automatic or CPU as the backend in Settings, or set " +
                            engine::selfcheck::kSkipVariable + "=1 to use it anyway.");
}

QString fallback_reason(const std::string& why_not) {
  return cuda_fallback_note(why_not, probe_nvidia(),
                            !qEnvironmentVariableIsEmpty("QUIRE_CUDA_LIBRARY"));
}

QString size_label(std::int64_t bytes) {
  const double gib = static_cast<double>(bytes) / double(1 << 30);
  if (gib >= 1.0) return QStringLiteral("%1 GiB").arg(gib, 0, 'f', 1);
  return QStringLiteral("%1 MiB").arg(static_cast<double>(bytes) / double(1 << 20), 0, 'f', 0);
}

QStringList cpu_labels(const QString& spec) {
  QStringList labels;
  const kernels::CpuBackend backend(parse_cpu_devices(spec));
  for (const kernels::DeviceInfo& device : backend.devices()) {
    labels << QStringLiteral("%1 · %2").arg(QString::fromStdString(device.name),
                                            size_label(device.total_bytes));
  }
  return labels;
}

// The indices of the full list of `count` devices that the settings choose.
std::vector<int> chosen_indices(const ui::EngineSettings& settings, int count) {
  std::vector<int> indices;
  for (int index = 0; index < count; ++index) {
    if (settings.devices.isEmpty() || settings.devices.contains(index)) indices.push_back(index);
  }
  if (indices.empty()) {
    throw BackendUnavailable(
        "none of the devices chosen in Settings exists on this machine; choose at least one");
  }
  return indices;
}

BackendSelection select_cpu(const ui::EngineSettings& settings, const QString& spec) {
  const std::vector<kernels::CpuBackend::Device> all = parse_cpu_devices(spec);
  BackendSelection selection;
  selection.indices = chosen_indices(settings, static_cast<int>(all.size()));
  std::vector<kernels::CpuBackend::Device> chosen;
  for (const int index : selection.indices)
    chosen.push_back(all[static_cast<std::size_t>(index)]);
  selection.backend = std::make_unique<kernels::CpuBackend>(std::move(chosen));
  return selection;
}

// `all` is the CUDA backend over the whole list `spec`. When the settings
// choose some of its devices, a second backend is started over those alone,
// written as a list of their own (each keeps its GPU and budget).
BackendSelection select_cuda(const ui::EngineSettings& settings, const QString& spec,
                             std::unique_ptr<kernels::Backend> all) {
  const int count = static_cast<int>(all->devices().size());
  BackendSelection selection;
  selection.indices = chosen_indices(settings, count);
  if (static_cast<int>(selection.indices.size()) == count) {
    selection.backend = std::move(all);
    return selection;
  }
  const kernels::CudaDeviceSpec parsed = parse_cuda_list(spec);
  // "cuda" lists every GPU in order, one logical device each.
  const std::vector<kernels::CudaLogicalDevice> logical =
      parsed.all_gpus ? kernels::resolve_cuda_devices(parsed, count) : parsed.devices;
  kernels::CudaDeviceSpec subset;
  for (const int index : selection.indices)
    subset.devices.push_back(logical[static_cast<std::size_t>(index)]);
  all.reset();
  kernels::LoadedBackend chosen = kernels::load_cuda_backend(kernels::to_string(subset));
  if (!chosen.backend) throw cuda_refused(chosen.why_not);
  selection.backend = std::move(chosen.backend);
  return selection;
}

}  // namespace

QString default_cpu_devices() {
  const QString spec = qEnvironmentVariable("QUIRE_CPU_DEVICES").trimmed();
  return spec.isEmpty() ? QStringLiteral("cpu") : spec;
}

QString default_cuda_devices() {
  const QString spec = qEnvironmentVariable("QUIRE_CUDA_DEVICES").trimmed();
  return spec.isEmpty() ? QStringLiteral("cuda") : spec;
}

DeviceLists default_device_lists() {
  return DeviceLists{default_cpu_devices(), default_cuda_devices()};
}

QStringList device_labels(const ui::EngineSettings& settings, const DeviceLists& lists) {
  try {
    const Choice choice = choice_of(settings);
    if (choice == Choice::Cpu) return cpu_labels(lists.cpu);
    const kernels::LoadedBackend cuda = load_cuda(lists.cuda);
    if (!cuda.backend || remembered_failure(cuda))
      return choice == Choice::Auto ? cpu_labels(lists.cpu) : QStringList();
    QStringList labels;
    for (const kernels::DeviceInfo& device : cuda.backend->devices()) {
      labels << QStringLiteral("cuda%1 · %2 · %3")
                    .arg(device.index)
                    .arg(QString::fromStdString(device.name), size_label(device.total_bytes));
    }
    return labels;
  } catch (const std::exception&) {
    // A list that does not parse, or a GPU that cannot report its memory:
    // nothing to offer. Loading says why, in a notice.
    return {};
  }
}

BackendSelection make_backend(const ui::EngineSettings& settings, const DeviceLists& lists) {
  const Choice choice = choice_of(settings);
  if (choice == Choice::Cpu) return select_cpu(settings, lists.cpu);
  kernels::LoadedBackend cuda = load_cuda(lists.cuda);
  std::optional<std::string> problem;
  if (cuda.backend) {
    problem = self_check_problem(cuda);
    if (!problem) return select_cuda(settings, lists.cuda, std::move(cuda.backend));
    cuda.backend.reset();
    if (choice == Choice::Cuda) throw self_check_refused(*problem);
  }
  if (choice == Choice::Cuda) throw cuda_refused(cuda.why_not);
  BackendSelection selection = select_cpu(settings, lists.cpu);
  selection.fallback_reason =
      problem ? QStringLiteral("Running on the CPU: %1.").arg(QString::fromStdString(*problem))
              : fallback_reason(cuda.why_not);
  return selection;
}

}  // namespace quire::gui
