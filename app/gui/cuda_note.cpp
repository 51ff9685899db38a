#include "cuda_note.h"

#include <QDir>
#include <QLibrary>
#include <QRegularExpression>

namespace quire::gui {
namespace {

bool contains(const std::string& text, const char* part) {
  return text.find(part) != std::string::npos;
}

// Causes that say only that this machine has no usable NVIDIA stack at all.
bool about_missing_nvidia(const std::string& why_not) {
  return contains(why_not, "no NVIDIA driver") || contains(why_not, "no NVIDIA GPU") ||
         contains(why_not, "has no CUDA backend") ||
         contains(why_not, "CUDA backend library was not found") ||
         contains(why_not, "CUDA backend library could not be loaded");
}

}  // namespace

NvidiaPresence probe_nvidia() {
  NvidiaPresence presence;
  presence.device_nodes =
      !QDir(QStringLiteral("/dev")).entryList({QStringLiteral("nvidia*")}, QDir::System).isEmpty();
  QLibrary driver(QStringLiteral("cuda"), 1);
  presence.driver_library = driver.load();
  if (presence.driver_library) driver.unload();
  return presence;
}

QString plain_cuda_reason(const std::string& why_not) {
  static const QRegularExpression runtime_error(QStringLiteral(R"(\s*\(cuda[A-Za-z]+:[^)]*\))"));
  return QString::fromStdString(why_not).remove(runtime_error).trimmed();
}

QString cuda_fallback_note(const std::string& why_not, const NvidiaPresence& machine,
                           bool library_named) {
  if (!machine.any() && !library_named && about_missing_nvidia(why_not)) return QString();
  if (contains(why_not, "no NVIDIA driver")) {
    return QStringLiteral(
        "Running on the CPU: this machine's NVIDIA driver is missing or too old for Quire's "
        "CUDA backend. Install or update the NVIDIA driver to use the GPU.");
  }
  if (contains(why_not, "no NVIDIA GPU")) {
    return QStringLiteral(
        "Running on the CPU: the NVIDIA driver is installed but reports no usable GPU.");
  }
  return QStringLiteral("Running on the CPU: the CUDA backend cannot run (%1).")
      .arg(plain_cuda_reason(why_not));
}

}  // namespace quire::gui
