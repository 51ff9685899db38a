// Finding, opening and starting the CUDA backend plugin with dlopen.

#include "quire/kernels/cuda_loader.h"

#include <dlfcn.h>

#include <array>
#include <cstdlib>
#include <filesystem>
#include <system_error>
#include <vector>

#include "quire/kernels/backend_plugin.h"
#include "quire/kernels/cuda_devices.h"

namespace quire::kernels {
namespace {

namespace fs = std::filesystem;

#if QUIRE_HAVE_CUDA
std::vector<fs::path> candidate_paths() {
  std::vector<fs::path> paths;
  std::error_code error;
  const fs::path executable = fs::read_symlink("/proc/self/exe", error);
  if (!error) {
    paths.push_back(
        (executable.parent_path() / ".." / QUIRE_INSTALL_LIBDIR / "quire" / "libquire_cuda.so")
            .lexically_normal());
  }
#ifdef QUIRE_CUDA_BUILD_LIBRARY
  paths.emplace_back(QUIRE_CUDA_BUILD_LIBRARY);
#endif
  return paths;
}

std::string joined(const std::vector<fs::path>& paths) {
  std::string text;
  for (const fs::path& path : paths) {
    if (!text.empty()) text += ", ";
    text += path.string();
  }
  return text;
}
#endif

LoadedBackend declined(std::string why) {
  return LoadedBackend{nullptr, std::move(why), {}};
}

LoadedBackend open_library(const fs::path& path, const std::string& devices) {
  // RTLD_LOCAL keeps the plugin's symbols out of the global namespace. The
  // handle is never closed: the backend's code, its vtable and the CUDA
  // runtime's exit handlers live in the library, and unloading the CUDA
  // runtime while the process runs is not supported by NVIDIA either.
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* message = dlerror();
    return declined("the CUDA backend library could not be loaded: " +
                    std::string(message ? message : path.string()));
  }
  void* symbol = dlsym(handle, kCudaPluginEntry);
  if (symbol == nullptr) {
    return declined(path.string() + " is not a Quire CUDA backend (it has no " + kCudaPluginEntry +
                    ")");
  }
  // POSIX guarantees that a dlsym result converts to a function pointer.
  const auto create = reinterpret_cast<CreateBackendFunction>(symbol);
  std::array<char, 1024> why_not{};
  Backend* backend = create(kBackendPluginAbi, why_not.data(), why_not.size(), devices.c_str());
  if (backend == nullptr) {
    std::string reason(why_not.data());
    if (reason.empty())
      reason = "the CUDA backend declined without a reason (" + path.string() + ")";
    return declined(std::move(reason));
  }
  return LoadedBackend{std::unique_ptr<Backend>(backend), {}, {}};
}

LoadedBackend open_plugin(const fs::path& path, const std::string& devices) {
  LoadedBackend loaded = open_library(path, devices);
  loaded.library = path;
  return loaded;
}

}  // namespace

LoadedBackend load_cuda_backend() {
  return load_cuda_backend("cuda");
}

LoadedBackend load_cuda_backend(std::string_view devices) {
  // Checked (and written in one canonical form) before anything is opened,
  // so that a typing mistake is reported as one on every machine.
  const std::string spec = to_string(parse_cuda_devices(devices));
  if (const char* chosen = std::getenv("QUIRE_CUDA_LIBRARY"); chosen && *chosen) {
    return open_plugin(fs::path(chosen), spec);
  }
#if !QUIRE_HAVE_CUDA
  return declined("this build of Quire has no CUDA backend");
#else
  const std::vector<fs::path> paths = candidate_paths();
  for (const fs::path& path : paths) {
    std::error_code error;
    if (fs::is_regular_file(path, error)) return open_plugin(path, spec);
  }
  return declined("the CUDA backend library was not found (looked in: " + joined(paths) +
                  "); install the quire-cuda package or set QUIRE_CUDA_LIBRARY");
#endif
}

}  // namespace quire::kernels
